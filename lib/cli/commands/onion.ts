// neardup onion: a drop-in for Onion 1.2 (Pomikálek) on vertical text. Same options, same output: every
// input line prefixed by its flag and a TAB (1 = duplicate, removed), or with -s only the kept lines.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../../util/errors';
import { checkInputFiles, sniffFile } from '../../io/input';
import { native } from '../../native/addon';
import { ParagraphFilter, type ParagraphFilterStats } from '../../filter/paragraphs';
import { openInput } from '../../io/jsonl';
import { UsageError, floatOption, intOption, parse, type Command } from '../common';
import { OutputFile, checkFiles } from '../../io/files';

/**
 * Streams a vertical file through a filter created with output 'mark' or 'strip', writing the text out.
 * Input is pushed in pieces of about 4 MiB that end at a line boundary; the bytes after the last newline
 * wait for the next piece, and each input byte is copied once (a 100 MB line is not re-copied per chunk).
 */
export async function streamVertical(
  file: string,
  filter: ParagraphFilter,
  out: BufferOutput,
  onChunk?: (bytesPushed: number) => void,
): Promise<void> {
  // Memory (docs/memory.md): plain files are read into two reused buffers of VERTICAL_CHUNK bytes and the
  // text is formatted into one reused output buffer, so a run allocates no buffer per piece (V8 collects
  // external buffers late: a stream of fresh ones keeps tens of MB of garbage alive).
  const into = Buffer.allocUnsafe(2 * VERTICAL_CHUNK + (64 << 10));
  let pushed = 0;
  let prev: Buffer | undefined;
  for await (const piece of lineChunks(file, true)) {
    if (prev !== undefined) {
      const r = await filter.pushVertical(prev, false, { into, flags: false });
      await out.write(r.text);
      pushed += prev.length;
      onChunk?.(pushed);
    }
    prev = piece;
  }
  const last = prev ?? Buffer.alloc(0);
  const r = await filter.pushVertical(last, true, { into, flags: false });
  await out.write(r.text);
  onChunk?.(pushed + last.length);
}

/** Bytes of vertical text pushed to the filter at a time (streamVertical): 256 KiB (a line record is 24 bytes). */
export const VERTICAL_CHUNK = 256 << 10;

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

/**
 * Writes Buffers to stdout with back-pressure (vertical text passes through byte for byte). write() resolves
 * when the stream has taken the bytes (its callback), so the caller may reuse the buffer.
 */
export class BufferOutput {
  constructor(private readonly stream: NodeJS.WritableStream = process.stdout) {}
  async write(b: Uint8Array): Promise<void> {
    if (b.length === 0) return;
    // Write errors (EPIPE...) still reach the stream's 'error' listeners, as before; the callback only tells
    // that the stream no longer needs b.
    await new Promise<void>((r) => this.stream.write(b, () => r()));
  }
}

export function statsLine(s: ParagraphFilterStats): string {
  return JSON.stringify(s);
}

/** ctime(3) without the newline, as Onion prints it: "Wed Nov 25 09:32:16 2026" (local time). */
export function ctime(d = new Date()): string {
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getDay()];
  const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getMonth()];
  const p2 = (n: number) => String(n).padStart(2, '0');
  return `${day} ${mon} ${String(d.getDate()).padStart(2, ' ')} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${d.getFullYear()}`;
}

/** Onion's progress line: "[ctime] onion: TASK:     N MB processed ( P.PP%)\t    M MB RAM used". */
export function onionProgressLine(prog: string, task: string | null, bytes: number, percent: number, ram = true): string {
  let s = `[${ctime()}] ${prog}: ${task === null ? '' : task + ': '}${String(Math.floor(bytes / 1048576)).padStart(6)} MB processed`;
  if (percent >= 0) s += ` (${percent.toFixed(2).padStart(6)}%)`;
  if (ram) s += `\t${String(Math.floor(process.resourceUsage().maxRSS / 1024)).padStart(6)} MB RAM used`;
  return s + '\n';
}

/** Size of a plain input file (for percentages), or -1 (stdin, gzip, not a regular file). */
function plainSize(file: string): number {
  if (file === '-' || /\.gz$/.test(file)) return -1;
  try {
    const st = fs.statSync(file);
    return st.isFile() ? st.size : -1;
  } catch {
    return -1;
  }
}

function ioError(what: string, file: string, e: unknown): NeardupError {
  return new NeardupError('ERR_NEARDUP_IO', `cannot ${what} '${file}': ${(e as Error).message}`, { file, cause: e });
}

/**
 * Reads a file (or stdin) in pieces that end at a line boundary (the last one may not).
 * reuse: a plain file is read into two buffers used in turn (a piece stays valid while the next one is read,
 * until the one after): the consumer must be done with piece k when it asks for piece k+2.
 */
async function* lineChunks(file: string, reuse = false): AsyncGenerator<Buffer> {
  const input = await openInput(file);
  if (reuse && file !== '-' && sniffFile(file).compression === 'none' && input instanceof fs.ReadStream) {
    input.destroy();  // opened for its checks (format, errors); read below through two fixed buffers
    yield* plainLineChunks(file);
    return;
  }
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
      yield Buffer.concat(parts);
      parts = nl + 1 < chunk.length ? [chunk.subarray(nl + 1)] : [];
      size = chunk.length - (nl + 1);
    }
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith('ERR_NEARDUP')) throw e;
    throw ioError('read', file, e);
  }
  yield Buffer.concat(parts);
}

/** lineChunks over a plain file: pieces of at most VERTICAL_CHUNK bytes (more only for a longer line). */
async function* plainLineChunks(file: string): AsyncGenerator<Buffer> {
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, 'r');
  } catch (e) {
    throw ioError('read', file, e);
  }
  try {
    const bufs = [Buffer.allocUnsafe(VERTICAL_CHUNK), Buffer.allocUnsafe(VERTICAL_CHUNK)];
    let which = 0;
    let carry = Buffer.alloc(0);  // bytes after the last newline of the previous piece (in the other buffer)
    for (;;) {
      let buf = bufs[which];
      if (carry.length >= buf.length) buf = bufs[which] = Buffer.allocUnsafe(2 * carry.length);
      carry.copy(buf, 0);
      let filled = carry.length;
      let eof = false;
      for (;;) {
        let got: number;
        try {
          ({ bytesRead: got } = await fh.read(buf, filled, buf.length - filled, null));
        } catch (e) {
          throw ioError('read', file, e);
        }
        filled += got;
        if (got === 0) {
          eof = true;
          break;
        }
        if (filled < buf.length) continue;
        if (buf.lastIndexOf(0x0a, filled - 1) >= 0) break;
        const bigger = Buffer.allocUnsafe(2 * buf.length);  // one line longer than the buffer
        buf.copy(bigger, 0, 0, filled);
        buf = bufs[which] = bigger;
      }
      if (eof) {
        yield buf.subarray(0, filled);
        return;
      }
      const nl = buf.lastIndexOf(0x0a, filled - 1);
      carry = buf.subarray(nl + 1, filled);
      yield buf.subarray(0, nl + 1);
      which ^= 1;
    }
  } finally {
    await fh.close();
  }
}

const HASHGEN_USAGE = `Usage: neardup onion hashgen [OPTIONS] [FILE]

Onion's hashgen: writes the 64-bit hash of every n-gram of tokens of the vertical FILE (plain, gzip or zstd;
'-' or nothing for standard input) to PREFIX0 .. PREFIX(COUNT-1), the hash space split evenly into
COUNT ranges (equal hashes always land in the same file). Tokens are the lines not starting with '<';
n-grams run across document boundaries, as in Onion. 8 bytes per hash, little-endian (Onion writes its
machine's byte order: the same on x86). Then run 'neardup onion hashdup' on the files and pass its
output to 'neardup onion -f'. The files appear only when complete.

Options:
  -n NUM    n-gram length (default 7; use the -n you will give 'neardup onion')
  -o STR    prefix of the output files (default hashes.)
  -c NUM    number of output files (default 10)
  -q        quiet: no progress lines on standard error`;

const HASHDUP_USAGE = `Usage: neardup onion hashdup [OPTIONS] FILE [FILE...]

Onion's hashdup: for each file of 64-bit hashes from 'neardup onion hashgen' (or Onion's hashgen), writes
every hash that occurs more than once in that file, once, in ascending order, to the output (the files'
results one after another). The output appears only when complete.

Options:
  -o FILE   output file (default duphashes)
  -q        quiet: no progress lines on standard error`;

async function runHashgen(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    ngram: { type: 'string', short: 'n' },
    output: { type: 'string', short: 'o' },
    count: { type: 'string', short: 'c' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(HASHGEN_USAGE + '\n');
    return 0;
  }
  if (positionals.length > 1) throw new UsageError('hashgen: expected at most one input file');
  const file = positionals[0] ?? '-';
  const n = intOption('n', values.ngram, 7, 1, 4096);
  const count = intOption('c', values.count, 10, 1, 4096);
  const prefix = values.output === undefined ? 'hashes.' : String(values.output);
  const outputs = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
  checkFiles({ inputs: [file], outputs: outputs.map((o) => ({ option: '-o', file: o })) });
  const total = plainSize(file);
  const quiet = Boolean(values.quiet);
  const files: OutputFile[] = [];
  const gen = new native.OnionHashgen({ n, files: count });
  try {
    for (const o of outputs) files.push(OutputFile.open(o));
    let done = 0;
    let next = 64 << 20;
    for await (const chunk of lineChunks(file)) {
      const parts = await gen.push(chunk);
      for (let i = 0; i < parts.length; i++) if (parts[i].length) await files[i].write(Buffer.from(parts[i].buffer, parts[i].byteOffset, parts[i].length));
      done += chunk.length;
      if (!quiet && done >= next) {
        process.stderr.write(onionProgressLine('hashgen', null, done, total > 0 ? (100 * done) / total : -1, false));
        next += 64 << 20;
      }
    }
    for (const f of files) await f.commit();
    if (!quiet) process.stderr.write(onionProgressLine('hashgen', null, done, 100, false));
  } catch (e) {
    for (const f of files) f.abort();
    throw e;
  } finally {
    gen.close();
  }
  return 0;
}

async function runHashdup(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    output: { type: 'string', short: 'o' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(HASHDUP_USAGE + '\n');
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('hashdup: no input (give the files hashgen wrote)');
  const output = values.output === undefined ? 'duphashes' : String(values.output);
  checkFiles({ inputs: positionals, outputs: [{ option: '-o', file: output }] });
  const out = OutputFile.open(output);
  try {
    for (let i = 0; i < positionals.length; i++) {
      const f = positionals[i];
      let data: Buffer;
      try {
        data = fs.readFileSync(f);
      } catch (e) {
        throw ioError('read', f, e);
      }
      if (data.length % 8 !== 0)
        throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${f}' is not a file of 64-bit hashes: ${data.length} bytes is not a multiple of 8`, { file: f });
      const d = await native.onionDuplicateHashes(data);
      if (d.length) await out.write(Buffer.from(d.buffer, d.byteOffset, d.length));
      if (!values.quiet) process.stderr.write(`[${ctime()}] hashdup: ${i + 1} / ${positionals.length} files processed\n`);
    }
    await out.commit();
  } catch (e) {
    out.abort();
    throw e;
  }
  return 0;
}

/** Onion's -f: feeds the duplicate n-gram hashes to the filter, 10 M hashes at a time, with Onion's progress lines. */
async function loadDuplicateNgrams(file: string, filter: ParagraphFilter, quiet: boolean): Promise<void> {
  let fd: number;
  let size: number;
  try {
    fd = fs.openSync(file, 'r');
    size = fs.fstatSync(fd).size;
  } catch (e) {
    throw ioError('read', file, e);
  }
  try {
    const STEP = 10_000_000 * 8;
    const buf = Buffer.allocUnsafe(STEP);
    let done = 0;
    for (;;) {
      let got = 0;
      try {
        while (got < STEP) {
          const r = fs.readSync(fd, buf, got, STEP - got, null);
          if (r === 0) break;
          got += r;
        }
      } catch (e) {
        throw ioError('read', file, e);
      }
      if (got % 8 !== 0)
        throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${file}' is not a file of 64-bit hashes: it ends with a partial hash at byte offset ${done + got - (got % 8)}`, { file });
      if (got > 0) await filter.addDuplicateNgrams(Buffer.from(buf.subarray(0, got)));
      done += got;
      if (got < STEP) break;
      if (!quiet) process.stderr.write(onionProgressLine('onion', 'reading hashes', done, size > 0 ? (100 * done) / size : -1));
    }
    if (!quiet) process.stderr.write(onionProgressLine('onion', 'reading hashes', done, 100));
  } finally {
    fs.closeSync(fd);
  }
}

export const onionCommand: Command = {
  name: 'onion',
  usage: `Usage: neardup onion [OPTIONS] [FILE]
       neardup onion hashgen [-n NUM] [-o PREFIX] [-c NUM] [-q] [FILE]
       neardup onion hashdup [-o FILE] [-q] FILE [FILE...]

Marks duplicate paragraphs in vertical text (one token per line, <doc>/<p> structure), exactly as
Onion 1.2 does, with Onion's own n-gram hash: prints every input line prefixed by its flag and a TAB
(1 = duplicate), or with -s only the kept lines. Reads FILE (plain, gzip or zstd) or standard input.

Options (as in Onion 1.2):
  -f FILE     hashes of duplicate n-grams (Onion's two-pass mode, less memory): make them with
              'neardup onion hashgen -n N ... FILE' then 'neardup onion hashdup -o DUPS hashes.*'
  -n N        n-gram length (default 7)
  -t T        duplicate content threshold: a paragraph is a duplicate when more than T of its
              tokens are covered by n-grams seen before (default 0.5)
  -m          no smoothing
  -s          strip duplicate parts (print only the kept lines) rather than mark them
  -T NUM      trim n-gram hashes to their NUM low bits in the seen-set (1..64, default 64)
  -l LEN      max stub length in tokens for smoothing (default 20)
  -d TAG      document tag name (default doc)
  -p TAG      paragraph tag name (default p)
  -b SIZE     buffer size: neardup streams and uses it only as the progress interval (default 16777216)
  -q          quiet: no progress lines on standard error
  -V          print statistics to stderr at the end (Onion: version)

Like Onion, this command drops every whole document of at most LEN tokens even when it is unique;
'neardup paragraphs' keeps such documents by default, and uses a better n-gram hash (docs/paragraphs.md).
neardup extension: --seen exact|approx and --fp-rate P choose the seen-set (default exact).`,
  async run(args) {
    if (args[0] === 'hashgen') return runHashgen(args.slice(1));
    if (args[0] === 'hashdup') return runHashdup(args.slice(1));
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
      trim: { type: 'string', short: 'T' },
      quiet: { type: 'boolean', short: 'q' },
      verbose: { type: 'boolean', short: 'V' },
      seen: { type: 'string' },
      'fp-rate': { type: 'string' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (positionals.length > 1) throw new UsageError('expected at most one input file');
    const file = positionals[0] ?? '-';
    const hashFile = values['hash-file'] === undefined ? undefined : String(values['hash-file']);
    checkFiles({ inputs: hashFile === undefined ? [file] : [file, hashFile], outputs: [], stdout: true });
    checkInputFiles([file], { parquet: false });
    if (hashFile !== undefined) checkInputFiles([hashFile], { sniff: false });
    const interval = intOption('b', values.buffer, 16777216, 1, Number.MAX_SAFE_INTEGER);
    const tag = (name: string, v: unknown, def: string): string => {
      if (v === undefined) return def;
      const s = String(v);
      if (!/^[^\s<>/]+$/.test(s)) throw new UsageError(`-${name} must be a tag name, got '${s}'`);
      return s;
    };
    const seen = values.seen === undefined ? 'exact' : String(values.seen);
    if (seen !== 'exact' && seen !== 'approx') throw new UsageError(`--seen must be exact or approx, got '${seen}'`);
    // Onion keeps all 64 bits for -T 64 and above.
    const trimBits = Math.min(64, intOption('T', values.trim, 64, 1, 4096));
    const quiet = Boolean(values.quiet);
    const filter = new ParagraphFilter({
      n: intOption('n', values.ngram, 7, 1, 4096),
      threshold: floatOption('t', values.threshold, 0.5, 0, 1),
      smoothing: !values['no-smoothing'],
      maxStub: intOption('l', values['max-stub'], 20, 0, 0xffffffff),
      keepUniqueShort: false,
      withinDocument: true,
      ngramHash: 'onion',
      trimBits,
      docTag: tag('d', values['doc-tag'], 'doc'),
      parTag: tag('p', values['par-tag'], 'p'),
      seen,
      fpRate: floatOption('fp-rate', values['fp-rate'], 0.01, 1e-9, 0.5),
      expectedBytes: expectedBytes([file]),
      output: values.strip ? 'strip' : 'mark',
    });
    try {
      if (hashFile !== undefined) await loadDuplicateNgrams(hashFile, filter, quiet);
      const total = plainSize(file);
      let next = interval;
      let done = 0;
      await streamVertical(file, filter, new BufferOutput(), (bytes) => {
        done = bytes;
        if (quiet || bytes < next) return;
        process.stderr.write(onionProgressLine('onion', 'removing duplicates', bytes, total > 0 ? (100 * bytes) / total : -1));
        while (next <= bytes) next += interval;
      });
      if (!quiet) process.stderr.write(onionProgressLine('onion', 'removing duplicates', done, 100));
      if (values.verbose) process.stderr.write(statsLine(filter.stats()) + '\n');
    } finally {
      filter.close();
    }
    return 0;
  },
};
