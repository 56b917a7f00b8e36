// lib/io/ - files in and out (mirror of native/core/io and text/jsonl_*; stands on native/ and util/):
//   inputs    input.ts (this file), documents.ts (the batch, bad-line policy, input options), parquet.ts,
//             jsonl.ts (line splitting, readJsonl), batching.ts (documents from memory, in time slices; abort)
//   outputs   files.ts (OutputFile: atomic replace, '-', the input/output checks, temp and spill clean-up on
//             signals), kept.ts (kept documents, compressed), locks.ts (writer locks), index-commit.ts (the one
//             commit point of a multi-file index)
// Guarantees: inputs are told by their first bytes, never by their names; an output file is the old one or the
// complete new one, never a part (a temporary file renamed into place); a killed writer leaves no lock behind.
//
// The input layer every document-reading command shares: files -> packed UTF-8 documents for the engines.
//
// Formats, told by the first bytes (never by the file name): JSONL plain, gzip (1F 8B; multi-member files
// too), zstd (28 B5 2F FD; any number of frames) and Parquet (PAR1: lib/io/parquet.ts). '-' is standard input
// (JSONL only: Parquet needs random access).
//
// JSONL is parsed on the native pool (native/core/text/jsonl_batch.h: JSON validated as JSON.parse would,
// strict UTF-8, the field unescaped straight into the packed buffer; no JavaScript strings), in batches of
// about `batchBytes` (default 16 MiB) of whole lines. A plain file is read by the addon itself
// (io::LineReader: pread into one reused buffer). Compressed input and standard input come as streams
// (gzip: node:zlib; zstd: the addon's libzstd; both decompress on the libuv pool, ahead of the parse) and
// are cut into groups of whole lines on the JS thread ('\n' searches only: a line cut by a chunk boundary is
// the one copy). Either way, the next batch is read and parsed while the caller works on this one.
//
// Line i of the input is document i of every output. A bad line (not JSON, not an object, field missing or
// of the wrong type, invalid UTF-8, an empty line) is, by `onBadLine`: 'error' (default) a NeardupError
// (ERR_NEARDUP_BAD_LINE) naming file:line; 'skip' a slot with valid[i] = 0 (no shingles, never matched);
// 'empty' an empty document. A UTF-8 byte-order mark at the start of a file is skipped; a final line
// without '\n' counts; CR before LF is whitespace. A line longer than `maxLineBytes` (default MAX_LINE_BYTES)
// is an error naming file:line whatever onBadLine says. Fields are dot paths ('meta.content'; '\.' is a dot
// in a name), own members of the line's object, the last one counting when a key repeats (JSON.parse's rule).
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import { constants as bufferConstants } from 'node:buffer';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { NeardupError, fromNative, nativeCall, invalidArgument } from '../util/errors';
import { native, type NativeJsonlBatch, type NativeZstdDecoder } from '../native/addon';
import * as os from 'node:os';
import { expectArray, expectString, optionsObject, parseByteSize } from '../util/validate';
import { readParquetDocuments } from './parquet';
import { applyBadLines, displayName, fieldPath, type DocumentBatch, type DocumentIds, type InputCompression, type InputFormat, type OnBadLine } from './documents';

export { applyBadLines, displayName, fieldPath, type BadLinePolicy, type DocumentBatch, type DocumentIds, type InputCompression, type InputFormat, type OnBadLine } from './documents';

/** The longest line (bytes, without its newline) accepted by default: V8's longest string. */
export const MAX_LINE_BYTES: number = bufferConstants.MAX_STRING_LENGTH;

export interface ReadDocumentsOptions {
  /** The text field: a dot path ('meta.content'; '\.' is a literal dot). Default 'text'. */
  field?: string;
  /** The id field (a string or an integer), dot path as `field`. Default: none. */
  idField?: string;
  onBadLine?: OnBadLine;
  /** Input bytes per batch (default 16 MiB; a batch always holds at least one line). */
  batchBytes?: number;
  /** The longest line accepted (default MAX_LINE_BYTES, and never more than memoryLimit). */
  maxLineBytes?: number;
  /**
   * The most bytes one unit of the input may take in memory as it is decoded: a line of JSONL (also after
   * gzip/zstd decompression), a Parquet page or a row group's column chunk (uncompressed). A unit beyond it is
   * ERR_NEARDUP_INVALID_INPUT naming the file (and line, or row group and column), found before it is held
   * (a decompression bomb costs at most this). Default: the document memory (documentMemoryFromEnv()).
   */
  memoryLimit?: number;
  /** Also give each line's raw bytes (JSONL only), for commands that rewrite lines. */
  raw?: boolean;
  /** Also give where each line is in its file (DocumentBatch.lines), for plain JSONL files read by the addon. */
  lines?: boolean;
  /**
   * Called after each batch with the input bytes consumed so far (uncompressed JSONL; Parquet: the text
   * bytes) and, when every input is a regular file, the fraction of the files read (0 to 1).
   */
  onProgress?: (bytesRead: number, fraction?: number) => void;
}

/** The error for a line longer than the limit (not a bad line: skipping it would silently drop a document). */
export function lineTooLong(file: string, line: number, limit: number): NeardupError {
  return new NeardupError('ERR_NEARDUP_INVALID_INPUT',
    `${file}:${line}: the line is longer than ${limit} bytes, the limit for one document; split the document`, { file, line });
}

// ---------------------------------------------------------------------------------------------------------
// Opening: format and compression by magic bytes

const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const PARQUET_MAGIC = [0x50, 0x41, 0x52, 0x31];  // "PAR1"

const startsWith = (b: Uint8Array, m: number[]) => b.length >= m.length && m.every((x, i) => b[i] === x);

/** What the first bytes of an input say it is. */
export function sniffInput(head: Uint8Array): { format: InputFormat; compression: InputCompression } {
  if (!(head instanceof Uint8Array)) throw invalidArgument(TypeError, 'head must be a Uint8Array (the first bytes of an input)');
  if (startsWith(head, PARQUET_MAGIC)) return { format: 'parquet', compression: 'none' };
  if (startsWith(head, GZIP_MAGIC)) return { format: 'jsonl', compression: 'gzip' };
  if (startsWith(head, ZSTD_MAGIC)) return { format: 'jsonl', compression: 'zstd' };
  return { format: 'jsonl', compression: 'none' };
}

/** Compressed and archive formats the readers do not take, by their magic bytes, and how to read them. */
const OTHER_FORMATS: { name: string; magic: number[]; tool: string }[] = [
  { name: 'xz', magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], tool: 'xz -dc' },
  { name: 'bzip2', magic: [0x42, 0x5a, 0x68], tool: 'bzip2 -dc' },
  { name: 'lz4', magic: [0x04, 0x22, 0x4d, 0x18], tool: 'lz4 -dc' },
  { name: 'zip', magic: [0x50, 0x4b, 0x03, 0x04], tool: 'unzip -p' },
  { name: '7-Zip', magic: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], tool: '7z x -so' },
  { name: 'lzip', magic: [0x4c, 0x5a, 0x49, 0x50], tool: 'lzip -dc' },
];

/**
 * ERR_NEARDUP_UNSUPPORTED for an input whose first bytes are a compressed or archive format the readers do
 * not take (xz, bzip2, lz4, zip, 7-Zip, lzip), naming it and the formats read; undefined for anything else.
 */
export function unsupportedFormat(file: string, head: Uint8Array): NeardupError | undefined {
  const f = OTHER_FORMATS.find((o) => head.length >= o.magic.length && o.magic.every((b, i) => head[i] === b));
  if (!f) return undefined;
  const name = file === '-' ? '<stdin>' : file;
  return new NeardupError('ERR_NEARDUP_UNSUPPORTED',
    `${name}: ${f.name}-compressed input is not read (inputs are JSONL, plain, gzip or zstd, and Parquet); ` +
    `decompress it first, e.g. '${f.tool} ${file === '-' ? 'FILE' : file} | neardup ... -'`, { file: name });
}

/**
 * sniffInput of a regular file's first bytes. JSONL, uncompressed, for '-', an empty file or one that cannot be
 * read (opening it reports that), and for anything but a regular file: a FIFO is not opened here (the open
 * would block, and closing it again would leave its writer without a reader); its reader sniffs the stream.
 */
export function sniffFile(file: string): { format: InputFormat; compression: InputCompression } {
  if (file === '-') return { format: 'jsonl', compression: 'none' };
  let fd: number | undefined;
  try {
    if (!fs.statSync(file).isFile()) return { format: 'jsonl', compression: 'none' };
    fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(4);
    const n = fs.readSync(fd, head, 0, 4, 0);
    return sniffInput(head.subarray(0, n));
  } catch {
    return { format: 'jsonl', compression: 'none' };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export interface CheckInputsOptions {
  /** Whether the command reads Parquet (default true); false: a Parquet input is refused up front. */
  parquet?: boolean;
  /** Whether formats are told by magic bytes (default true); false: only that each file can be read. */
  sniff?: boolean;
}

/**
 * Checks, before any work, that every input ('-' is standard input, not checked) exists, is not a folder,
 * can be opened for reading and, for a regular file, starts like a format the readers take: an xz, bzip2,
 * lz4, zip, 7-Zip or lzip file is refused naming its compression, a Parquet file where Parquet is not read
 * is refused. A FIFO or device is checked for read permission only (opening it could block or consume it).
 * Throws ERR_NEARDUP_IO or ERR_NEARDUP_UNSUPPORTED naming the first bad file; returns nothing.
 */
export function checkInputFiles(files: string[], options: CheckInputsOptions = {}): void {
  // as the addon words it (strerror: "No such file or directory"): Node's message without its code and its
  // ", stat 'path'" tail (the path is in the message already)
  const why = (e: unknown) => {
    const m = (e as Error).message.replace(/^E[A-Z]+: /, '').replace(/, \w+ '.*'$/s, '');
    return m.charAt(0).toUpperCase() + m.slice(1);
  };
  for (const file of files) {
    if (file === '-') continue;
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `cannot open '${file}': ${why(e)}`, { file, cause: e });
    }
    if (st.isDirectory()) throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': it is a folder, not a file`, { file });
    if (!st.isFile()) {
      try {
        fs.accessSync(file, fs.constants.R_OK);
      } catch (e) {
        throw new NeardupError('ERR_NEARDUP_IO', `cannot open '${file}': ${why(e)}`, { file, cause: e });
      }
      continue;
    }
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `cannot open '${file}': ${why(e)}`, { file, cause: e });
    }
    const head = Buffer.alloc(8);
    let n: number;
    try {
      n = fs.readSync(fd, head, 0, head.length, 0);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': ${why(e)}`, { file, cause: e });
    } finally {
      fs.closeSync(fd);
    }
    if (options.sniff === false) continue;
    const first = head.subarray(0, n);
    const other = unsupportedFormat(file, first);
    if (other) throw other;
    if (options.parquet === false && sniffInput(first).format === 'parquet')
      throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `${file}: Parquet input is not read by this command (it reads JSONL: plain, gzip or zstd)`, { file });
  }
}

/** A Transform that decompresses zstd frames on the libuv thread pool (native/core/io/zstd_stream.h). */
export class ZstdDecompress extends Transform {
  private readonly dec: NativeZstdDecoder = new native.ZstdDecoder('');
  private static readonly MAX_OUT = 8 << 20;
  constructor() {
    super({ readableHighWaterMark: 8 << 20 });
  }
  private async feed(chunk: Uint8Array): Promise<void> {
    let off = 0;
    let out: Uint8Array;
    do {
      const r = await nativeCall(this.dec.decompress(chunk, off, ZstdDecompress.MAX_OUT));
      off = r.consumed;
      out = r.output;
      if (out.length > 0) this.push(Buffer.from(out.buffer, out.byteOffset, out.length));
    } while (off < chunk.length || out.length >= ZstdDecompress.MAX_OUT);
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.feed(chunk).then(() => cb(), (e) => cb(e as Error));
  }
  override _flush(cb: TransformCallback): void {
    this.feed(new Uint8Array(0)).then(() => {
      try {
        this.dec.finish();
        cb();
      } catch (e) {
        cb(fromNative(e) as Error);
      }
    }, (e) => cb(e as Error));
  }
}

/** The file stream under each stream openInput returned (for progress: bytes of the file read so far). */
const SOURCES = new WeakMap<Readable, fs.ReadStream>();

/** Bytes read from the file under a stream openInput returned (0 for stdin). */
export function sourceBytesRead(stream: Readable): number {
  return SOURCES.get(stream)?.bytesRead ?? 0;
}

export interface OpenedInput {
  format: InputFormat;
  compression: InputCompression;
  /** The decompressed bytes (JSONL); null for Parquet (read by path). */
  stream: Readable | null;
}

async function peek(src: Readable, file: string): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
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
}

/**
 * Opens a file ('-': standard input) and tells its format by its first bytes: JSONL comes back as a stream
 * of decompressed bytes (gzip and zstd undone), Parquet with no stream (it is read by path).
 */
export async function openInputFile(file: string, chunkBytes = 16 << 20): Promise<OpenedInput> {
  let src: Readable;
  if (file === '-') {
    src = process.stdin;
  } else {
    // compressed input is read in small pieces: each is decompressed in one go (a bounded amount of output);
    // never less than 4 KiB a read, so the first read holds the magic bytes that tell the format
    const rs = fs.createReadStream(file, { highWaterMark: sniffFile(file).compression === 'none' ? Math.max(4096, chunkBytes) : 1 << 20 });
    await new Promise<void>((resolve, reject) => {
      rs.once('open', () => resolve());
      rs.once('error', (e: NodeJS.ErrnoException) =>
        reject(new NeardupError('ERR_NEARDUP_IO', `cannot open '${file}': ${e.message}`, { file, cause: e })));
    });
    src = rs;
  }
  const first = await peek(src, file);
  if (first === null) return { format: 'jsonl', compression: 'none', stream: src };
  const kind = sniffInput(first);
  const other = kind.compression === 'none' && kind.format === 'jsonl' ? unsupportedFormat(file, first) : undefined;
  if (other) {
    src.destroy();
    throw other;
  }
  if (kind.format === 'parquet') {
    src.destroy();
    if (file === '-') throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', 'Parquet on standard input: give the file (Parquet is read from its end)');
    return { ...kind, stream: null };
  }
  src.unshift(first);
  if (kind.compression === 'none') {
    if (src instanceof fs.ReadStream) SOURCES.set(src, src);
    return { ...kind, stream: src };
  }
  const dec: Transform = kind.compression === 'gzip' ? zlib.createGunzip({ chunkSize: 1 << 20 }) : new ZstdDecompress();
  src.on('error', (e) => dec.destroy(e));
  const out = src.pipe(dec);
  if (src instanceof fs.ReadStream) SOURCES.set(out, src);
  return { ...kind, stream: out };
}

/** A read error of `file` as a NeardupError (corrupt compressed data: ERR_NEARDUP_CORRUPT). */
export function readError(file: string, e: unknown): NeardupError {
  if (e instanceof NeardupError && e.code !== 'ERR_NEARDUP_CORRUPT') return e;
  const msg = (e as Error).message;
  const corrupt = (e instanceof NeardupError && e.code === 'ERR_NEARDUP_CORRUPT') ||
    (e as { code?: string }).code === 'Z_BUF_ERROR' || (e as { code?: string }).code === 'Z_DATA_ERROR' ||
    /incorrect header|invalid|unexpected end/i.test(msg);
  return new NeardupError(corrupt ? 'ERR_NEARDUP_CORRUPT' : 'ERR_NEARDUP_IO', `cannot read '${file}': ${msg}`, { file, cause: e });
}

// ---------------------------------------------------------------------------------------------------------
// Cutting a byte stream into groups of whole lines

interface LineGroup {
  /** Whole lines; the last segment of the last group may end without '\n'. */
  segments: Buffer[];
  /** Input bytes taken into this group. */
  bytes: number;
  /** The line after the group's lines is longer than the limit. */
  tooLong?: boolean;
}

const BOM = [0xef, 0xbb, 0xbf];

/**
 * Groups of whole lines of about `batchBytes` each. A line cut by chunk boundaries is assembled (its only
 * copy); the rest are views of the chunks. A UTF-8 BOM at the start is dropped.
 */
async function* lineGroups(stream: Readable, file: string, batchBytes: number, maxLine: number): AsyncGenerator<LineGroup> {
  let segments: Buffer[] = [];
  let size = 0, bytes = 0;
  let cur: Buffer[] = [];  // pieces of the line being assembled
  let curLen = 0;
  let head: Buffer | null = Buffer.alloc(0);  // the first bytes, until the BOM question is settled
  const take = (part: Buffer): boolean => {
    const first = part.indexOf(0x0a);
    if (first < 0) {
      cur.push(part);
      curLen += part.length;
      return curLen <= maxLine;
    }
    const last = part.lastIndexOf(0x0a);
    if (cur.length === 0) {
      segments.push(part.subarray(0, last + 1));
    } else {
      cur.push(part.subarray(0, first + 1));
      segments.push(Buffer.concat(cur, curLen + first + 1));
      if (last > first) segments.push(part.subarray(first + 1, last + 1));
    }
    size += last + 1 + curLen;
    cur = last + 1 < part.length ? [part.subarray(last + 1)] : [];
    curLen = part.length - last - 1;
    return curLen <= maxLine;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let part = chunk;
      if (head !== null) {
        head = Buffer.concat([head, part]);
        if (head.length < BOM.length) continue;
        part = startsWith(head, BOM) ? head.subarray(BOM.length) : head;
        bytes += head.length - part.length;
        head = null;
      }
      // a chunk larger than a batch is cut (the line across each cut is assembled)
      for (let at = 0; at < part.length; at += batchBytes) {
        const slice = at === 0 && part.length <= batchBytes ? part : part.subarray(at, at + batchBytes);
        bytes += slice.length;
        if (!take(slice)) {
          yield { segments, bytes, tooLong: true };
          return;
        }
        if (size >= batchBytes) {
          yield { segments, bytes };
          segments = [];
          size = 0;
          bytes = 0;
        }
      }
    }
  } catch (e) {
    throw readError(file, e);
  }
  if (head !== null && head.length > 0) {
    const part = startsWith(head, BOM) ? head.subarray(BOM.length) : head;
    bytes += head.length;
    if (!take(part)) {
      yield { segments, bytes, tooLong: true };
      return;
    }
  }
  if (curLen > 0) segments.push(cur.length === 1 ? cur[0] : Buffer.concat(cur, curLen));
  if (segments.length > 0 || bytes > 0) yield { segments, bytes };
}

/** The raw lines of whole-line segments (without '\n'). */
function splitLines(segments: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (const s of segments) {
    let at = 0;
    while (at < s.length) {
      const nl = s.indexOf(0x0a, at);
      const end = nl < 0 ? s.length : nl;
      out.push(s.subarray(at, end));
      at = end + 1;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Documents

/** The total size of the inputs when every one is a regular file (else undefined: no fraction). */
export function inputSize(files: string[]): number | undefined {
  let total = 0;
  for (const f of files) {
    if (f === '-') return undefined;
    try {
      const st = fs.statSync(f);
      if (!st.isFile()) return undefined;
      total += st.size;
    } catch {
      return undefined;  // reported when opened
    }
  }
  return total;
}

const isRegularFile = (file: string) => {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
};

/**
 * The document memory: NEARDUP_DOCUMENT_MEMORY (a size: 512M, 8G) or, when it is not set, half of the
 * physical memory; undefined when the variable is not a size.
 */
export function documentMemoryFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.NEARDUP_DOCUMENT_MEMORY;
  if (v === undefined || v === '') return Math.floor(os.totalmem() / 2);
  return parseByteSize(v);
}

/** Reads documents from files in batches, line i = document i (see the header comment). */
export async function* readDocuments(files: string[], options: ReadDocumentsOptions = {}): AsyncGenerator<DocumentBatch> {
  expectArray(files, 'files').forEach((f, i) => expectString(f, `files[${i}]`));
  optionsObject(options);
  const field = options.field ?? 'text';
  const idField = options.idField;
  fieldPath(field);
  if (idField !== undefined) fieldPath(idField);
  const onBad = options.onBadLine ?? 'error';
  if (!['error', 'skip', 'empty'].includes(onBad)) throw invalidArgument(RangeError, "onBadLine must be 'error', 'skip' or 'empty'");
  const batchBytes = options.batchBytes ?? 16 << 20;
  const memoryLimit = options.memoryLimit ?? documentMemoryFromEnv();
  if (memoryLimit === undefined) throw invalidArgument(RangeError, `NEARDUP_DOCUMENT_MEMORY must be a size like 512M or 8G, got '${process.env.NEARDUP_DOCUMENT_MEMORY}'`);
  if (!(Number.isSafeInteger(memoryLimit) && memoryLimit > 0)) throw invalidArgument(RangeError, 'memoryLimit must be a positive integer (bytes)');
  const maxLine = Math.min(options.maxLineBytes ?? MAX_LINE_BYTES, memoryLimit);
  checkInputFiles(files);  // every file before the first is read: a bad last file fails now, not hours in
  const total = inputSize(files);
  let consumed = 0;
  let before = 0;  // bytes of the files already read
  for (const [fileIndex, file] of files.entries()) {
    const name = displayName(file);
    const opened = await openInputFile(file, Math.min(batchBytes, 16 << 20));
    if (opened.format === 'parquet') {
      const size = file === '-' ? 0 : fs.statSync(file).size;
      for await (const b of readParquetDocuments(file, fileIndex, { field, idField, onBadLine: onBad, batchBytes, memoryLimit })) {
        consumed += b.bytes;
        options.onProgress?.(consumed, total ? Math.min(1, (before + size * b.fractionOfFile) / total) : undefined);
        yield b.batch;
      }
      before += size;
      continue;
    }
    if (opened.compression === 'none' && file !== '-' && !options.raw && isRegularFile(file)) {
      // a plain file: read and parsed natively, the JS thread only hands over the batches
      opened.stream?.destroy();
      yield* readPlainFile(file, fileIndex, { field, idField, onBad, batchBytes, maxLine, lines: options.lines === true }, (bytes, fileBytes) => {
        consumed += bytes;
        options.onProgress?.(consumed, total ? Math.min(1, (before + fileBytes) / total) : total === 0 ? 1 : undefined);
      });
      before += fs.statSync(file).size;
      continue;
    }
    const stream = opened.stream!;
    const fraction = () => (total ? Math.min(1, (before + sourceBytesRead(stream)) / total) : total === 0 ? 1 : undefined);
    let line = 1;
    const parse = (g: LineGroup) => {
      const p = nativeCall(native.parseJsonl(g.segments, { field, idField, maxLineBytes: Math.min(maxLine, 0xffffffff) }));
      p.catch(() => undefined);  // awaited in order below
      return p;
    };
    const finish = (r: NativeJsonlBatch, g: LineGroup): DocumentBatch => {
      const batch = jsonlBatch(r, { file, fileIndex, compression: opened.compression, firstLine: line, bytes: g.bytes, onBad, maxLine });
      if (options.raw) batch.raw = splitLines(g.segments);
      line += r.lines;
      consumed += g.bytes;
      options.onProgress?.(consumed, fraction());
      return batch;
    };
    let pending: { p: Promise<NativeJsonlBatch>; g: LineGroup } | undefined;
    try {
      for await (const g of lineGroups(stream, name, batchBytes, maxLine)) {
        const next = g.segments.length > 0 ? { p: parse(g), g } : undefined;
        if (pending) yield finish(await pending.p, pending.g);
        pending = next;
        if (g.tooLong) {
          if (pending) yield finish(await pending.p, pending.g);
          throw lineTooLong(name, line, maxLine);
        }
        if (!next) consumed += g.bytes;
      }
      if (pending) yield finish(await pending.p, pending.g);
    } finally {
      stream.destroy();
    }
    options.onProgress?.(consumed, fraction());
    before += sourceBytesRead(stream);
  }
}

/** A parsed batch as a DocumentBatch: a line over the limit or (onBadLine 'error') a bad line throws, naming file:line. */
function jsonlBatch(r: NativeJsonlBatch, o: {
  file: string; fileIndex: number; compression: InputCompression; firstLine: number; bytes: number; onBad: OnBadLine; maxLine: number;
}): DocumentBatch {
  const name = displayName(o.file);
  if (r.tooLong !== undefined) throw lineTooLong(name, o.firstLine + r.tooLong, o.maxLine);
  const bad = new Map<number, string>();
  for (let k = 0; k < r.badLines.length; k++) bad.set(r.badLines[k], r.reasons[k]);
  return {
    file: o.file, fileIndex: o.fileIndex, format: 'jsonl', compression: o.compression, firstLine: o.firstLine, count: r.lines,
    packed: { data: r.text, offsets: r.offsets }, valid: applyBadLines(name, o.firstLine, r.lines, bad, o.onBad), bad, bytes: o.bytes,
    ...(r.ids ? { ids: { data: r.ids, offsets: r.idOffsets!, kinds: r.idKinds! } } : {}),
  };
}

/** Batches of a plain JSONL file read by the addon (JsonlFile): the next batch is read and parsed while this one is used. */
async function* readPlainFile(
  file: string, fileIndex: number,
  o: { field: string; idField?: string; onBad: OnBadLine; batchBytes: number; maxLine: number; lines: boolean },
  progress: (bytes: number, fileBytes: number) => void,
): AsyncGenerator<DocumentBatch> {
  let reader: InstanceType<typeof native.JsonlFile>;
  try {
    reader = new native.JsonlFile(file);
  } catch (e) {
    throw readError(file, fromNative(e));
  }
  const next = () => {
    const p = nativeCall(reader.next({ field: o.field, idField: o.idField, maxLineBytes: Math.min(o.maxLine, 0xffffffff), batchBytes: o.batchBytes, lines: o.lines }));
    p.catch(() => undefined);  // awaited below
    return p;
  };
  let line = 1, fileBytes = 0;
  try {
    let pending = next();
    for (;;) {
      let r;
      try {
        r = await pending;
      } catch (e) {
        throw readError(file, e);
      }
      if (!r.eof && r.tooLong === undefined) pending = next();
      fileBytes += r.bytes;
      if (r.tooLong !== undefined || r.lines > 0) {
        const batch = jsonlBatch(r, { file, fileIndex, compression: 'none', firstLine: line, bytes: r.bytes, onBad: o.onBad, maxLine: o.maxLine });
        if (r.lineAt) batch.lines = { start: r.start!, lineAt: r.lineAt, lineLen: r.lineLen! };
        line += r.lines;
        progress(r.bytes, fileBytes);
        yield batch;
      } else if (r.bytes > 0) {
        progress(r.bytes, fileBytes);
      }
      if (r.eof) break;
    }
  } finally {
    reader.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Ids in outputs

/** Id i of a batch as JSON text: a string (quoted, escaped), an integer as written, or null. */
export function idJson(ids: DocumentIds, i: number): string {
  const kind = ids.kinds[i];
  if (kind === 0) return 'null';
  const bytes = Buffer.from(ids.data.buffer, ids.data.byteOffset + ids.offsets[i], ids.offsets[i + 1] - ids.offsets[i]);
  return kind === 2 ? bytes.toString('latin1') : JSON.stringify(bytes.toString('utf8'));
}

/** Id i as a JavaScript value: a string, an integer (a number when safe, else a bigint), or null. */
export function idValue(ids: DocumentIds, i: number): string | number | bigint | null {
  const kind = ids.kinds[i];
  if (kind === 0) return null;
  const bytes = Buffer.from(ids.data.buffer, ids.data.byteOffset + ids.offsets[i], ids.offsets[i + 1] - ids.offsets[i]);
  if (kind === 1) return bytes.toString('utf8');
  const n = Number(bytes.toString('latin1'));
  return Number.isSafeInteger(n) ? n : BigInt(bytes.toString('latin1'));
}
