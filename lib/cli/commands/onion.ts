// neardup onion: a drop-in for Onion 1.2 (Pomikálek) on vertical text. Same options, same output: every
// input line prefixed by its flag and a TAB (1 = duplicate, removed), or with -s only the kept lines.
import * as fs from 'node:fs';
import { NeardupError } from '../../errors';
import { ParagraphFilter, type ParagraphFilterStats } from '../../paragraphs';
import { openInput } from '../jsonl';
import { UsageError, floatOption, intOption, parse, type Command } from '../common';
import { checkFiles } from '../files';

/**
 * Streams a vertical file through a filter created with output 'mark' or 'strip', writing the text out.
 * Input is pushed in pieces of about 4 MiB that end at a line boundary; the bytes after the last newline
 * wait for the next piece, and each input byte is copied once (a 100 MB line is not re-copied per chunk).
 */
export async function streamVertical(file: string, filter: ParagraphFilter, out: BufferOutput): Promise<void> {
  const input = await openInput(file);
  let parts: Buffer[] = [];
  let size = 0;
  const CHUNK = 4 << 20;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      size += chunk.length;
      const nl = size < CHUNK ? -1 : chunk.lastIndexOf(0x0a);
      if (nl < 0) {
        parts.push(chunk);
        continue;
      }
      parts.push(chunk.subarray(0, nl + 1));
      const r = await filter.pushVertical(Buffer.concat(parts), false);
      parts = nl + 1 < chunk.length ? [chunk.subarray(nl + 1)] : [];
      size = chunk.length - (nl + 1);
      await out.write(r.text);
    }
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith('ERR_NEARDUP')) throw e;
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': ${(e as Error).message}`, { file, cause: e });
  }
  const r = await filter.pushVertical(Buffer.concat(parts), true);
  await out.write(r.text);
}

/** Total bytes of plain (not gzip) input files, a sizing hint for the approximate seen-set; 0 if unknown. */
export function expectedBytes(files: string[]): number {
  let total = 0;
  for (const f of files) {
    if (f === '-' || /\.gz$/.test(f)) return 0;
    try {
      const st = fs.statSync(f);
      if (!st.isFile()) return 0;
      total += st.size;
    } catch {
      return 0; // reported when the file is opened
    }
  }
  return total;
}

/** Writes Buffers to stdout with back-pressure (vertical text passes through byte for byte). */
export class BufferOutput {
  constructor(private readonly stream: NodeJS.WritableStream = process.stdout) {}
  async write(b: Uint8Array): Promise<void> {
    if (b.length === 0) return;
    if (!this.stream.write(b)) await new Promise<void>((r) => this.stream.once('drain', () => r()));
  }
}

export function statsLine(s: ParagraphFilterStats): string {
  return JSON.stringify(s);
}

export const onionCommand: Command = {
  name: 'onion',
  summary: 'drop-in for Onion 1.2: mark or strip duplicate paragraphs of vertical text',
  usage: `Usage: neardup onion [OPTIONS] [FILE]

Marks duplicate paragraphs in vertical text (one token per line, <doc>/<p> structure), exactly as
Onion 1.2 does: prints every input line prefixed by its flag and a TAB (1 = duplicate), or with -s
only the kept lines. Reads FILE (plain or gzip) or standard input.

Options (as in Onion 1.2):
  -n N        n-gram length (default 7)
  -t T        duplicate content threshold: a paragraph is a duplicate when more than T of its
              tokens are covered by n-grams seen before (default 0.5)
  -m          no smoothing
  -s          strip duplicate parts (print only the kept lines) rather than mark them
  -l LEN      max stub length in tokens for smoothing (default 20)
  -d TAG      document tag name (default doc)
  -p TAG      paragraph tag name (default p)
  -b SIZE     buffer size (accepted for compatibility; neardup streams and ignores it)
  -V          print statistics to stderr at the end
Not supported: -f FILE (pre-computed duplicate n-gram hashes from hashgen/hashdup); use
'neardup paragraphs --load-seen' to deduplicate against an earlier corpus instead.

Like Onion, this command drops every whole document of at most LEN tokens even when it is unique;
'neardup paragraphs' keeps such documents by default (see docs/paragraphs.md).
neardup extension: --seen exact|approx and --fp-rate P choose the seen-set (default exact).`,
  async run(args) {
    const { values, positionals } = parse(args, {
      ngram: { type: 'string', short: 'n' },
      threshold: { type: 'string', short: 't' },
      'no-smoothing': { type: 'boolean', short: 'm' },
      strip: { type: 'boolean', short: 's' },
      'max-stub': { type: 'string', short: 'l' },
      'doc-tag': { type: 'string', short: 'd' },
      'par-tag': { type: 'string', short: 'p' },
      buffer: { type: 'string', short: 'b' },
      'hash-file': { type: 'string', short: 'f' },
      verbose: { type: 'boolean', short: 'V' },
      seen: { type: 'string' },
      'fp-rate': { type: 'string' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (values['hash-file'] !== undefined)
      throw new UsageError("-f (a duplicate n-gram hash file from Onion's hashgen/hashdup) is not supported");
    if (positionals.length > 1) throw new UsageError('expected at most one input file');
    checkFiles({ inputs: [positionals[0] ?? '-'], outputs: [], stdout: true });
    if (values.buffer !== undefined) intOption('b', values.buffer, 0, 1, Number.MAX_SAFE_INTEGER);
    const tag = (name: string, v: unknown, def: string): string => {
      if (v === undefined) return def;
      const s = String(v);
      if (!/^[^\s<>/]+$/.test(s)) throw new UsageError(`-${name} must be a tag name, got '${s}'`);
      return s;
    };
    const seen = values.seen === undefined ? 'exact' : String(values.seen);
    if (seen !== 'exact' && seen !== 'approx') throw new UsageError(`--seen must be exact or approx, got '${seen}'`);
    const filter = new ParagraphFilter({
      n: intOption('n', values.ngram, 7, 1, 4096),
      threshold: floatOption('t', values.threshold, 0.5, 0, 1),
      smoothing: !values['no-smoothing'],
      maxStub: intOption('l', values['max-stub'], 20, 0, 0xffffffff),
      keepUniqueShort: false,
      withinDocument: true,
      docTag: tag('d', values['doc-tag'], 'doc'),
      parTag: tag('p', values['par-tag'], 'p'),
      seen,
      fpRate: floatOption('fp-rate', values['fp-rate'], 0.01, 1e-9, 0.5),
      expectedBytes: expectedBytes([positionals[0] ?? '-']),
      output: values.strip ? 'strip' : 'mark',
    });
    try {
      await streamVertical(positionals[0] ?? '-', filter, new BufferOutput());
      if (values.verbose) process.stderr.write(statsLine(filter.stats()) + '\n');
    } finally {
      filter.close();
    }
    return 0;
  },
};
