// The CLI's line-level helpers and the string-yielding JSONL reader kept for API users (readJsonl). Document
// input itself is lib/io/input.ts (JSONL plain/gzip/zstd and Parquet, parsed on the native pool into packed
// UTF-8); readJsonl is readDocuments with each document decoded to a JavaScript string and the raw lines.
import type { Readable } from 'node:stream';
import { NeardupError } from '../util/errors';
import { MAX_LINE_BYTES, lineTooLong, openInputFile, readDocuments, readError, sourceBytesRead, type OnBadLine } from './input';
import { expectArray, expectString, optionsObject } from '../util/validate';

export { MAX_LINE_BYTES, sourceBytesRead, type OnBadLine };

export interface JsonlOptions {
  /** The string field holding the text: a dot path ('meta.content'; '\.' is a dot in a name). Default 'text'. */
  field?: string;
  onBadLine?: OnBadLine;
  /** Target size of a batch in bytes of input (default 1 MiB: the strings of a batch live until it is consumed, and larger batches made the young generation's collections, which stop the event loop, copy more); a batch always holds at least one line. */
  batchBytes?: number;
  /** The longest line accepted (default MAX_LINE_BYTES); tests lower it. */
  maxLineBytes?: number;
  /**
   * Called after each batch with the bytes of (uncompressed) input consumed so far and, when every input is a
   * regular file, the fraction of the files' bytes (compressed, for gzip and zstd) read so far, from 0 to 1.
   */
  onProgress?: (bytesRead: number, fraction?: number) => void;
}

export interface JsonlBatch {
  /** 1-based line number of texts[0] in its file. */
  firstLine: number;
  /** One entry per line: the text, or null for a skipped bad line. */
  texts: (string | null)[];
  /** The raw line bytes (without the newline), for commands that copy lines through (JSONL inputs only). */
  raw: Buffer[];
  /** Reasons for bad lines in this batch, by index into texts. */
  bad: Map<number, string>;
  /** The file these lines come from ('-' for standard input), and its position in the list. */
  file: string;
  fileIndex: number;
}

/**
 * Opens a file (or '-' for stdin) as a stream of its text: gzip and zstd are decompressed (told by their
 * magic bytes). A Parquet file is refused here (it has no lines): document readers take it through readDocuments.
 */
export async function openInput(file: string): Promise<Readable> {
  const o = await openInputFile(file, 1 << 20);
  if (o.stream === null)
    throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `'${file}' is a Parquet file: this command reads text lines (JSONL)`, { file });
  return o.stream;
}

/**
 * Splits a byte stream into lines (Buffers without the '\n'; a trailing '\r' is kept: JSON ignores it).
 * A line longer than `maxLineBytes` (default MAX_LINE_BYTES) is an ERR_NEARDUP_INVALID_INPUT error.
 */
export async function* readLines(stream: Readable, file: string, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingLen = 0;
  let line = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl < 0) break;
        line++;
        if (pendingLen + nl - start > maxLineBytes) throw lineTooLong(file, line, maxLineBytes);
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
        if (pendingLen > maxLineBytes) throw lineTooLong(file, line + 1, maxLineBytes);
      }
    }
  } catch (e) {
    if (e instanceof NeardupError && e.code !== 'ERR_NEARDUP_CORRUPT') throw e;
    throw readError(file, e);
  }
  if (pendingLen > 0) yield Buffer.concat(pending, pendingLen);
}

/** Reads JSONL (or Parquet) files in batches of texts, line-aligned (lib/io/input.ts, readDocuments). */
export async function* readJsonl(files: string[], options: JsonlOptions = {}): AsyncGenerator<JsonlBatch> {
  expectArray(files, 'files').forEach((f, i) => expectString(f, `files[${i}]`));
  optionsObject(options);
  for await (const b of readDocuments(files, { ...options, batchBytes: options.batchBytes ?? 1 << 20, raw: true })) {
    const { data, offsets } = b.packed;
    const buf = Buffer.from(data.buffer, data.byteOffset, data.length);
    const texts: (string | null)[] = new Array(b.count);
    for (let i = 0; i < b.count; i++) texts[i] = b.valid && b.valid[i] === 0 ? null : buf.toString('utf8', offsets[i], offsets[i + 1]);
    yield { firstLine: b.firstLine, texts, raw: b.raw ?? [], bad: b.bad, file: b.file, fileIndex: b.fileIndex };
  }
}

/**
 * The JSON text of member `key` of the top-level object in `text` (valid JSON: JSON.parse took it; the last
 * occurrence wins, as in JSON.parse), undefined when absent. For what JSON.parse cannot keep exactly: the
 * digits of an integer beyond 2^53.
 */
export function rawMember(text: string, key: string): string | undefined {
  const r = memberRange(text, key);
  return r === undefined ? undefined : text.slice(r[0], r[1]);
}

/**
 * Where the value of member `key` of the object starting at `from` (after whitespace) is in `text`: [start, end)
 * (valid JSON; the last occurrence wins), undefined when absent or when no object starts there. Lets a command
 * replace one member of a line and keep every other byte of it.
 */
export function memberRange(text: string, key: string, from = 0): [number, number] | undefined {
  const ws = (i: number) => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
    return i;
  };
  /** The index after the string starting at i (a quote). */
  const stringEnd = (i: number) => {
    for (let j = i + 1; ; j++) {
      j = text.indexOf('"', j);
      if (j < 0) return text.length;
      let b = 0;
      while (text[j - 1 - b] === '\\') b++;
      if (b % 2 === 0) return j + 1;
    }
  };
  /** The index after the value starting at i. */
  const valueEnd = (i: number) => {
    const c = text[i];
    if (c === '"') return stringEnd(i);
    if (c === '{' || c === '[') {
      let depth = 0;
      for (let j = i; j < text.length; j++) {
        const d = text[j];
        if (d === '"') j = stringEnd(j) - 1;
        else if (d === '{' || d === '[') depth++;
        else if ((d === '}' || d === ']') && --depth === 0) return j + 1;
      }
      return text.length;
    }
    let j = i;
    while (j < text.length && !',}] \t\n\r'.includes(text[j])) j++;
    return j;
  };
  let i = ws(from);
  if (text[i] !== '{') return undefined;
  let found: [number, number] | undefined;
  for (i = ws(i + 1); i < text.length && text[i] !== '}';) {
    const ke = stringEnd(i);
    const k = JSON.parse(text.slice(i, ke)) as string;
    i = ws(ws(ke) + 1);  // past ':'
    const ve = valueEnd(i);
    if (k === key) found = [i, ve];
    i = ws(ve);
    if (text[i] === ',') i = ws(i + 1);
  }
  return found;
}
