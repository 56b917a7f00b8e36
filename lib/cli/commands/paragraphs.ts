// neardup paragraphs: streaming paragraph dedup over vertical text, plain text or JSONL, with neardup's
// safe defaults (a unique short document is never dropped) and a saveable seen-set.
import { writeSummary } from '../summary';
import { Progress } from '../progress';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { NeardupError } from '../../util/errors';
import { killAt } from '../../util/test-hooks';
import { ParagraphFilter, type ParagraphFilterOptions } from '../../filter/paragraphs';
import { openInput, readJsonl, readLines, type JsonlBatch } from '../../io/jsonl';
import { parquetRowsAsJson } from '../../io/parquet';
import { documentMemoryFromEnv, sniffFile } from '../../io/input';
import {
  INPUT_OPTIONS, INPUT_USAGE, Output, UsageError, floatOption, inputOptionsFrom, intOption, oneOf, parse, type Command, type OptionValues,
} from '../common';
import { BufferOutput, expectedBytes, streamVertical } from './onion';
import { checkFiles, writeNative } from '../../io/files';
import { checkDocumentSizes, documentLimit } from '../limits';

/** Splits a text into paragraphs at blank lines (lines holding only whitespace); empty paragraphs are dropped. */
export function splitParagraphs(text: string): string[] {
  return text.split(/\r?\n[ \t\f\v\r]*\r?\n(?:[ \t\f\v\r]*\r?\n)*/).filter((p) => p.trim() !== '');
}

/**
 * The rows of a Parquet input as JSON objects (all its columns), read in step with its documents: the JSONL
 * output gives each row back with its text replaced, as it gives JSONL lines back.
 */
export class ParquetRowsInStep {
  private rows?: AsyncGenerator<string[]>;
  private fileIndex = -1;
  private buf: string[] = [];
  private at = 0;

  async take(batch: Pick<JsonlBatch, 'file' | 'fileIndex'>, n: number): Promise<string[]> {
    if (batch.fileIndex !== this.fileIndex) {
      await this.close();
      this.rows = parquetRowsAsJson(batch.file, documentMemoryFromEnv());
      this.fileIndex = batch.fileIndex;
    }
    const out: string[] = [];
    while (out.length < n) {
      if (this.at === this.buf.length) {
        const r = await this.rows!.next();
        if (r.done) throw new NeardupError('ERR_NEARDUP_IO', `'${batch.file}' changed while it was read (fewer rows than documents)`, { file: batch.file });
        this.buf = r.value;
        this.at = 0;
      }
      out.push(this.buf[this.at++]);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.rows?.return(undefined);
    this.rows = undefined;
    this.buf = [];
    this.at = 0;
  }
}

export const paragraphsCommand: Command = {
  name: 'paragraphs',
  usage: `Usage: neardup paragraphs [options] [FILE...]

Removes paragraphs most of whose n-grams were seen earlier in the corpus (the first copy is kept), in one
streaming pass; with --drop-all every copy is removed, the first one too (two passes over the FILEs). Tokens are lines (vertical text) or whitespace-separated words (text, JSONL).

Input:
  --format vertical|text|jsonl   default: jsonl for *.jsonl[.gz], vertical for *.vert[.gz], else by the
                            first line: a JSON object is jsonl, a <doc> tag vertical, anything else text
  --doc-separator LINE      text: a line equal to LINE separates documents (default: each file is
                            one document)
${INPUT_USAGE}
Output (stdout):
  vertical: the kept lines (--mark: every line prefixed by its flag and a TAB, as 'neardup onion')
  text:     the kept paragraphs, separated by blank lines (documents by the separator line)
  jsonl:    each input object with the text replaced by its kept paragraphs (joined by blank lines)
            and "paragraphs", "duplicate_paragraphs" counts added (a Parquet row: a JSON object of
            its columns, the same way)
  --drop-empty              text/jsonl: omit documents whose paragraphs were all removed
  --stats                   (kept for old scripts) the totals are always in the JSON summary on stderr

Dedup:
  -n, --ngram N             n-gram length in tokens (default 7)
  -t, --threshold T         duplicate when more than T of a paragraph's tokens are covered (default 0.5)
  --no-smoothing            do not drop short runs of kept paragraphs between duplicates
  --max-stub LEN            longest run smoothing drops, in tokens (default 20)
  --drop-short-unique       Onion's behaviour: smoothing also drops documents of at most LEN tokens
                            that have no duplicate paragraph (default: such documents are kept)
  --no-within-doc           repeats inside one document do not count (default: they count, as Onion)
  --drop-all                remove every copy of a repeated paragraph, the first one too (reads the
                            input twice: standard input, pipes and devices are first copied to --tmp)
  --tmp DIR                 folder for those copies (default: the system temp folder; removed at the end)
  --seen exact|approx       seen-set: 64-bit hashes (default) or a Bloom chain (much smaller)
  --fp-rate P               false-positive bound of the approximate seen-set (default 0.01)
  --load-seen FILE          start from a saved seen-set (deduplicate against an earlier corpus)
  --save-seen FILE          save the seen-set at the end (complete or not at all; it may be the
                            --load-seen FILE, which is then updated)`,
  async run(args) {
    const { values, positionals } = parse(args, {
      ...INPUT_OPTIONS,
      format: { type: 'string' },
      'doc-separator': { type: 'string' },
      mark: { type: 'boolean' },
      'drop-empty': { type: 'boolean' },
      stats: { type: 'boolean' },
      ngram: { type: 'string', short: 'n' },
      threshold: { type: 'string', short: 't' },
      'no-smoothing': { type: 'boolean' },
      'max-stub': { type: 'string' },
      'drop-short-unique': { type: 'boolean' },
      'no-within-doc': { type: 'boolean' },
      'drop-all': { type: 'boolean' },
      seen: { type: 'string' },
      'fp-rate': { type: 'string' },
      'load-seen': { type: 'string' },
      'save-seen': { type: 'string' },
      tmp: { type: 'string' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    const named = positionals.length ? positionals : ['-'];
    const dropAll = Boolean(values['drop-all']);
    if (values.tmp !== undefined && !dropAll) throw new UsageError('--tmp is only used with --drop-all');
    const loadSeen = values['load-seen'] === undefined ? [] : [String(values['load-seen'])];
    const saveSeen = values['save-seen'] === undefined ? undefined : String(values['save-seen']);
    // --load-seen X --save-seen X updates X (read first, then replaced atomically): allowed.
    checkFiles({
      inputs: [...named, ...loadSeen], outputs: saveSeen === undefined ? [] : [{ option: '--save-seen', file: saveSeen }],
      stdout: true, replaceable: loadSeen,
    });
    // --drop-all reads every input twice: what cannot be read twice is copied to a private folder first
    const copies = dropAll ? await rereadable(named, values.tmp === undefined ? os.tmpdir() : String(values.tmp)) : null;
    try {
      return await runParagraphs(values, named, copies?.files ?? named);
    } catch (e) {
      throw copies ? copies.rename(e) : e;
    } finally {
      copies?.remove();
    }
  },
};

async function runParagraphs(values: OptionValues, named: string[], files: string[]): Promise<number> {
  const dropAll = Boolean(values['drop-all']);
  const guess = (f: string) => (/\.jsonl(\.gz)?$/.test(f) ? 'jsonl' : /\.vert(\.gz)?$/.test(f) ? 'vertical' : undefined);
  // no --format and no telling extension: by the input's first line (a JSON object, a <doc> tag, else text)
  const format = oneOf('format', values.format, ['vertical', 'text', 'jsonl'] as const,
    values.format !== undefined ? 'text' : guess(named[0]) ?? (await sniffFormat(files[0])));
  const options: ParagraphFilterOptions = {
    n: intOption('ngram', values.ngram, 7, 1, 4096),
    threshold: floatOption('threshold', values.threshold, 0.5, 0, 1),
    smoothing: !values['no-smoothing'],
    maxStub: intOption('max-stub', values['max-stub'], 20, 0, 0xffffffff),
    keepUniqueShort: !values['drop-short-unique'],
    withinDocument: !values['no-within-doc'],
    seen: oneOf('seen', values.seen, ['exact', 'approx'] as const, 'exact'),
    fpRate: floatOption('fp-rate', values['fp-rate'], 0.01, 1e-9, 0.5),
    output: format === 'vertical' ? (values.mark ? 'mark' : 'strip') : 'none',
    expectedBytes: format === 'vertical' ? expectedBytes(files) : 0,
    dropAll,
  };
  const filter = new ParagraphFilter(options);
  const parquetRows = new ParquetRowsInStep();
  try {
    if (values['load-seen'] !== undefined) {
      await filter.loadSeen(String(values['load-seen']));
      killAt('paragraphs-seen-loaded');
    }
    const dropEmpty = Boolean(values['drop-empty']);
    // progress: bytes of input (and documents, where they are counted here) of the pass under way
    const progress = new Progress('neardup paragraphs');
    let passBytes = 0, passDocs = 0;
    // One pass over the input; with --drop-all, a first pass without output collects the repeats.
    const pass = async (write: boolean) => {
      const stage = dropAll ? (write ? 'second pass' : 'first pass') : undefined;
      passBytes = passDocs = 0;
      if (format === 'vertical') {
        const out = (write ? new BufferOutput() : new NullBufferOutput());
        let before = 0;
        for (const f of files) {
          await streamVertical(f, filter, out, (pushed) => { passBytes = before + pushed; progress.update({ bytes: passBytes, extra: stage }); });
          before = passBytes;
        }
      } else if (format === 'text') {
        const out = (write ? new Output() : new NullOutput());
        const sep = values['doc-separator'] === undefined ? null : String(values['doc-separator']);
        const flush = async (docs: string[][]) => {
          const r = await filter.pushDocuments(docs);
          passDocs += docs.length;
          progress.update({ docs: passDocs, extra: stage });
          for (let i = 0; i < docs.length; i++) {
            const kept = docs[i].filter((_, j) => !r.duplicate[i][j]);
            if (kept.length === 0 && dropEmpty) continue;
            await out.write(kept.join('\n\n') + '\n');
            if (sep !== null) await out.write(sep + '\n');
          }
        };
        for (const f of files) {
          if (sep === null) {
            await flush([splitParagraphs(await readAll(f))]);
            continue;
          }
          let docs: string[][] = [];
          let cur: string[] = [];
          let bytes = 0;
          for await (const line of readLines(await openInput(f), f)) {
            const s = line.toString('utf8');
            if (s.replace(/\r$/, '') === sep) {
              docs.push(splitParagraphs(cur.join('\n')));
              cur = [];
              if (bytes > 8 << 20) {
                await flush(docs);
                docs = [];
                bytes = 0;
              }
            } else {
              cur.push(s);
              bytes += line.length + 1;
            }
          }
          if (cur.length) docs.push(splitParagraphs(cur.join('\n')));
          if (docs.length) await flush(docs);
        }
        await out.flush();
      } else {
        const out = (write ? new Output() : new NullOutput());
        const input = inputOptionsFrom(values);
        const limit = documentLimit('paragraphs');
        for await (const batch of readJsonl(files, { ...input, onProgress: (b, fraction) => { passBytes = b; progress.update({ bytes: b, docs: passDocs, fraction, extra: stage }); } })) {
          checkDocumentSizes(batch, limit, 'paragraphs');
          passDocs += batch.texts.length;
          // a Parquet input's rows, as JSON objects, in step with its documents (JSONL lines are their own)
          const docs = batch.texts.map((t) => (t === null ? [] : splitParagraphs(t)));
          const r = await filter.pushDocuments(docs);
          if (!write) continue;  // --drop-all's first pass only counts
          const rows = batch.raw.length === batch.texts.length ? undefined : await parquetRows.take(batch, batch.texts.length);
          for (let i = 0; i < docs.length; i++) {
            // A bad line (--on-bad-line skip|empty) need not be a JSON object: it is copied through as it is
            // ('skip': always; 'empty': an empty document, omitted by --drop-empty like any other).
            const kept = docs[i].filter((_, j) => !r.duplicate[i][j]);
            if (kept.length === 0 && dropEmpty && batch.texts[i] !== null) continue;
            const line = rows ? rows[i] : batch.raw[i].toString('utf8');
            if (batch.bad.has(i)) {
              await out.write(line + '\n');
              continue;
            }
            const obj = JSON.parse(line) as Record<string, unknown>;
            obj[input.field] = kept.join('\n\n');
            obj.paragraphs = docs[i].length;
            obj.duplicate_paragraphs = docs[i].length - kept.length;
            await out.write(JSON.stringify(obj) + '\n');
          }
        }
        await out.flush();
      }
    };
    if (dropAll) {
      await pass(false);
      await filter.startSecondPass();
    }
    await pass(true);
    progress.done({ bytes: passBytes, docs: format === 'vertical' ? undefined : passDocs, fraction: format === 'jsonl' ? 1 : undefined, extra: dropAll ? 'second pass' : undefined });
    const saveSeen = values['save-seen'] === undefined ? undefined : String(values['save-seen']);
    // --load-seen F --save-seen F: the filter refuses to save F when another run saved it meanwhile (its
    // n-grams would be lost) and takes F's writer lock while it saves
    if (saveSeen !== undefined) {
      await writeNative(saveSeen, (p) => filter.saveSeen(p)).catch((e) => {
        if (!(e instanceof NeardupError && e.code === 'ERR_NEARDUP_CONFLICT')) throw e;
        throw new NeardupError('ERR_NEARDUP_CONFLICT', `--save-seen '${saveSeen}' has changed since the seen-set was loaded from it ` +
          '(another run saved it): nothing was written to it; rerun this command to deduplicate against it as it is now', { file: saveSeen });
      });
    }
    // the summary: the filter's totals, snake_case (documents, removed_documents, paragraphs, ...)
    const { documents, ...totals } = filter.stats();
    const snake = Object.fromEntries(Object.entries(totals).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
    writeSummary({ command: 'paragraphs', inputs: named, documents }, snake);
  } finally {
    await parquetRows.close();
    filter.close();
  }
  return 0;
}

/**
 * Copies the inputs that cannot be read twice (stdin, pipes, devices) to files in a new private folder
 * under `tmp` (mode 0700); regular files are used as they are. `rename` puts the original names back into
 * an error about a copy; `remove` deletes the folder.
 */
async function rereadable(files: string[], tmp: string): Promise<{ files: string[]; rename: (e: unknown) => unknown; remove: () => void }> {
  let dir: string | undefined;
  const out: string[] = [];
  const names = new Map<string, string>();
  const remove = () => {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const f of files) {
      if (f !== '-') {
        let regular = true;
        try {
          regular = fs.statSync(f).isFile();
        } catch {
          // missing or unreadable: opening it reports that, naming the file
        }
        if (regular) {
          out.push(f);
          continue;
        }
      }
      if (dir === undefined) {
        try {
          dir = fs.mkdtempSync(path.join(tmp, 'neardup-paragraphs-'));
        } catch (e) {
          throw new NeardupError('ERR_NEARDUP_IO', `--tmp '${tmp}': cannot create a folder for the copies of piped input: ${(e as Error).message}`, { file: tmp, cause: e });
        }
      }
      const copy = path.join(dir, `input-${out.length}`);
      const name = f === '-' ? '<stdin>' : f;
      try {
        await pipeline(f === '-' ? process.stdin : fs.createReadStream(f), fs.createWriteStream(copy, { flags: 'wx', mode: 0o600 }));
      } catch (e) {
        throw new NeardupError('ERR_NEARDUP_IO', `cannot copy '${name}' to '${copy}' (--drop-all reads it twice): ${(e as Error).message}`, { file: name, cause: e });
      }
      names.set(copy, name);
      out.push(copy);
    }
  } catch (e) {
    remove();
    throw e;
  }
  const rename = (e: unknown) => {
    if (!(e instanceof NeardupError) || e.file === undefined || !names.has(e.file)) return e;
    const name = names.get(e.file)!;
    return new NeardupError(e.code, e.message.split(e.file).join(name), { file: name, line: e.line, offset: e.offset, cause: e });
  };
  return { files: out, rename, remove };
}

/** Output sinks of a first (drop-all) pass. */
class NullOutput extends Output {
  override async write(): Promise<void> {}
  override async flush(): Promise<void> {}
}
class NullBufferOutput extends BufferOutput {
  override async write(): Promise<void> {}
}

/**
 * The format an input's first line shows: 'jsonl' for a JSON object, 'vertical' for a document tag (<doc or
 * <doc ...>), else 'text'. Reads at most the first 64 KiB (a longer first line counts as JSONL when it starts
 * like an object); standard input is peeked and its bytes put back. Gzip on standard input cannot be peeked
 * that way: --format is then required.
 */
export async function sniffFormat(file: string): Promise<'jsonl' | 'vertical' | 'text'> {
  let head: Buffer;
  if (file === '-') {
    const chunk: Buffer | null = await new Promise((resolve, reject) => {
      const stdin = process.stdin;
      const onReadable = () => { cleanup(); resolve(stdin.read() as Buffer | null); };
      const onEnd = () => { cleanup(); resolve(null); };
      const onError = (e: Error) => { cleanup(); reject(e); };
      const cleanup = () => { stdin.off('readable', onReadable); stdin.off('end', onEnd); stdin.off('error', onError); };
      stdin.once('readable', onReadable);
      stdin.once('end', onEnd);
      stdin.once('error', onError);
    });
    if (chunk === null) return 'text';
    process.stdin.unshift(chunk);
    if (chunk.length >= 2 && chunk[0] === 0x1f && chunk[1] === 0x8b)
      throw new UsageError('gzip on standard input: give --format jsonl, text or vertical');
    head = chunk;
  } else {
    if (sniffFile(file).format === 'parquet') return 'jsonl';  // documents of a column, given back as JSON objects
    const stream = await openInput(file);
    const parts: Buffer[] = [];
    let n = 0;
    try {
      for await (const c of stream as AsyncIterable<Buffer>) {
        parts.push(c);
        n += c.length;
        if (n >= 1 << 16 || c.includes(0x0a)) break;
      }
    } finally {
      stream.destroy();
    }
    head = Buffer.concat(parts);
  }
  const nl = head.indexOf(0x0a);
  const line = head.subarray(0, nl < 0 ? Math.min(head.length, 1 << 16) : nl).toString('utf8').trim();
  if (/^<doc[\s>]/.test(line)) return 'vertical';
  if (!line.startsWith('{')) return 'text';
  if (nl < 0 && head.length >= 1 << 16) return /^\{\s*"/.test(line) ? 'jsonl' : 'text';
  try {
    const v = JSON.parse(line);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? 'jsonl' : 'text';
  } catch {
    return 'text';
  }
}

async function readAll(file: string): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of (await openInput(file)) as AsyncIterable<Buffer>) parts.push(c);
  return Buffer.concat(parts).toString('utf8');
}
