// Streaming JSONL input for the CLI: plain or gzip (detected by its magic bytes, not the file name), lines of
// any length (a 100 MB line is held once, as the chunks that make it up, then parsed), strict UTF-8, and
// bad lines reported with file and line number.
//
// Alignment: every physical line is one document, so line i of the input is document i of every output.
// A bad line (not JSON, not an object, field missing or not a string, invalid UTF-8, an empty line) is,
// by `onBadLine`:
//   'error' (default) — stop with a NeardupError (code ERR_NEARDUP_BAD_LINE) naming file and line;
//   'skip'  — yielded with text = null and the reason in `bad`: the engine keeps the slot but gives the
//             document no shingles (never a duplicate, never matched);
//   'empty' — yielded with text = '' (an empty document) and the reason in `bad`.
// A final line without '\n' is a line like any other.
import * as fs from 'node:fs';
import { isUtf8 } from 'node:buffer';
import * as zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import { NeardupError } from '../errors';

export type OnBadLine = 'error' | 'skip' | 'empty';

export interface JsonlOptions {
  /** The string field holding the text. Default 'text'. */
  field?: string;
  onBadLine?: OnBadLine;
  /** Target size of a batch in bytes of input (default 8 MiB); a batch always holds at least one line. */
  batchBytes?: number;
  /**
   * Called after each batch with the bytes of (uncompressed) input consumed so far and, when every input is a
   * regular file, the fraction of the files' bytes (compressed, for gzip) read so far, from 0 to 1.
   */
  onProgress?: (bytesRead: number, fraction?: number) => void;
}

export interface JsonlBatch {
  /** 1-based line number of texts[0] in its file. */
  firstLine: number;
  /** One entry per line: the text, or null for a skipped bad line. */
  texts: (string | null)[];
  /** The raw line bytes (without the newline), for commands that copy lines through. */
  raw: Buffer[];
  /** Reasons for bad lines in this batch, by index into texts. */
  bad: Map<number, string>;
  /** The file these lines come from ('-' for standard input). */
  file: string;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** The file stream under each stream openInput returned (the gunzip stream's source, for gzip). */
const SOURCES = new WeakMap<Readable, fs.ReadStream>();

/** Bytes read from the file under a stream openInput returned (0 for stdin). */
export function sourceBytesRead(stream: Readable): number {
  return SOURCES.get(stream)?.bytesRead ?? 0;
}

/** The total size of the inputs when every one is a regular file (else undefined: no percentage). */
function inputSize(files: string[]): number | undefined {
  let total = 0;
  for (const f of files) {
    if (f === '-') return undefined;
    try {
      const st = fs.statSync(f);
      if (!st.isFile()) return undefined;
      total += st.size;
    } catch {
      return undefined;  // openInput reports it
    }
  }
  return total;
}

/** Opens a file (or '-' for stdin) and returns a byte stream, gunzipping when the data starts gzip magic. */
export async function openInput(file: string): Promise<Readable> {
  const src: Readable = file === '-' ? process.stdin : fs.createReadStream(file, { highWaterMark: 1 << 20 });
  if (file !== '-') {
    await new Promise<void>((resolve, reject) => {
      src.once('open', () => resolve());
      src.once('error', (e: NodeJS.ErrnoException) =>
        reject(new NeardupError('ERR_NEARDUP_IO', `cannot open '${file}': ${e.message}`, { file, cause: e })));
    });
  }
  // Peek at the first bytes to detect gzip without consuming them.
  const first: Buffer | null = await new Promise((resolve, reject) => {
    const onReadable = () => { cleanup(); resolve(src.read() as Buffer | null); };
    const onEnd = () => { cleanup(); resolve(null); };
    const onError = (e: Error) => {
      cleanup();
      reject(new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': ${e.message}`, { file, cause: e }));
    };
    const cleanup = () => { src.off('readable', onReadable); src.off('end', onEnd); src.off('error', onError); };
    src.once('readable', onReadable);
    src.once('end', onEnd);
    src.once('error', onError);
  });
  if (first === null) return src;
  src.unshift(first);
  if (first.length >= 2 && first[0] === GZIP_MAGIC[0] && first[1] === GZIP_MAGIC[1]) {
    const gunzip = zlib.createGunzip();
    src.on('error', (e) => gunzip.destroy(e));
    const out = src.pipe(gunzip);
    if (src instanceof fs.ReadStream) SOURCES.set(out, src);
    return out;
  }
  if (src instanceof fs.ReadStream) SOURCES.set(src, src);
  return src;
}

/** Splits a byte stream into lines (Buffers without the '\n'; a trailing '\r' is kept: JSON ignores it). */
export async function* readLines(stream: Readable, file: string): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingLen = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl < 0) break;
        if (pendingLen > 0) {
          pending.push(chunk.subarray(start, nl));
          yield Buffer.concat(pending, pendingLen + nl - start);
          pending = [];
          pendingLen = 0;
        } else {
          yield chunk.subarray(start, nl);
        }
        start = nl + 1;
      }
      if (start < chunk.length) {
        pending.push(chunk.subarray(start));
        pendingLen += chunk.length - start;
      }
    }
  } catch (e) {
    const msg = (e as Error).message;
    throw new NeardupError(
      (e as { code?: string }).code === 'Z_BUF_ERROR' || /incorrect header|invalid|unexpected end/i.test(msg)
        ? 'ERR_NEARDUP_CORRUPT' : 'ERR_NEARDUP_IO',
      `cannot read '${file}': ${msg}`, { file, cause: e });
  }
  if (pendingLen > 0) yield Buffer.concat(pending, pendingLen);
}

/** Parses one JSONL line; returns the text or throws a string describing what is wrong. */
export function parseLine(raw: Buffer, field: string): string {
  if (raw.length === 0 || (raw.length === 1 && raw[0] === 0x0d)) throw 'empty line';
  if (!isUtf8(raw)) {
    let bad = 0;
    // Locate the first invalid byte for the message.
    for (let lo = 0, hi = raw.length; lo < hi;) {
      const mid = (lo + hi) >> 1;
      if (isUtf8(raw.subarray(0, mid))) { lo = mid + 1; bad = mid; } else hi = mid;
    }
    throw `invalid UTF-8 near byte ${bad} of the line`;
  }
  let obj: unknown;
  try {
    obj = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw `not valid JSON (${(e as Error).message})`;
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw 'not a JSON object';
  const v = (obj as Record<string, unknown>)[field];
  if (v === undefined) throw `field '${field}' is missing`;
  if (typeof v !== 'string') throw `field '${field}' is ${v === null ? 'null' : typeof v}, expected a string`;
  return v;
}

/** Reads JSONL files in batches of texts, line-aligned (see the header comment). */
export async function* readJsonl(files: string[], options: JsonlOptions = {}): AsyncGenerator<JsonlBatch> {
  const field = options.field ?? 'text';
  const onBad = options.onBadLine ?? 'error';
  const batchBytes = options.batchBytes ?? 8 << 20;
  let consumed = 0;
  const total = inputSize(files);
  let before = 0;  // bytes of the files already read
  for (const file of files) {
    const stream = await openInput(file);
    const fraction = () => (total ? Math.min(1, (before + sourceBytesRead(stream)) / total) : total === 0 ? 1 : undefined);
    const name = file === '-' ? '<stdin>' : file;
    let line = 0;
    let batch: JsonlBatch = { firstLine: 1, texts: [], raw: [], bad: new Map(), file };
    let size = 0;
    for await (const raw of readLines(stream, name)) {
      line++;
      let text: string | null;
      try {
        text = parseLine(raw, field);
      } catch (reason) {
        if (typeof reason !== 'string') throw reason;
        if (onBad === 'error') {
          throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${name}:${line}: ${reason} (use --on-bad-line skip|empty to go on)`,
            { file: name, line });
        }
        batch.bad.set(batch.texts.length, reason);
        text = onBad === 'empty' ? '' : null;
      }
      batch.texts.push(text);
      batch.raw.push(raw);
      size += raw.length + 1;
      if (size >= batchBytes) {
        consumed += size;
        options.onProgress?.(consumed, fraction());
        yield batch;
        batch = { firstLine: line + 1, texts: [], raw: [], bad: new Map(), file };
        size = 0;
      }
    }
    consumed += size;
    before += sourceBytesRead(stream);
    options.onProgress?.(consumed, fraction());
    if (batch.texts.length > 0) yield batch;
  }
}
