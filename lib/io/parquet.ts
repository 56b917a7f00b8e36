// Parquet input (lib/io/input.ts hands over files that start with "PAR1"): the text column, and the id column,
// read row group by row group with hyparquet (pure JavaScript; HACKING.md says why), row i = document i
// across row groups. Pages: uncompressed, snappy (hyparquet's own decoder), zstd (the addon's libzstd
// decoder), gzip (node:zlib), brotli (node:zlib). The text column must hold strings (BYTE_ARRAY, taken as
// bytes and checked as strict UTF-8); a nested field ('meta.content') is a member of a struct column. A null
// or missing value, invalid UTF-8 or a value of another type is a bad row, under the same --on-bad-line
// policy as a bad JSONL line ("FILE:ROW", 1-based rows). Ids: strings or integers (INT32/INT64). A BYTE_ARRAY
// column without a UTF-8 annotation (binary, as some writers store strings) is read as text when its values
// are valid UTF-8 (as hyparquet and Spark's binaryAsString do); a value that is not says it is binary. A list
// column's value says it is a list.
// A file that is not valid Parquet is ERR_NEARDUP_CORRUPT naming it.
// Memory: a row group is read in slices of rows (about batchBytes of text each, for flat columns), and every
// column chunk's uncompressed size (from the footer) and every page's declared uncompressed size are checked
// against memoryLimit before anything is read or allocated; the decoders stop at the page's declared size, so a
// page that expands to more (a decompression bomb) fails after at most that many bytes. Both are
// ERR_NEARDUP_INVALID_INPUT naming the file, the row group and the column.
import * as zlib from 'node:zlib';
import { isUtf8 } from 'node:buffer';
import { NeardupError, formatBytes, nativeSync } from '../util/errors';
import { native } from '../native/addon';
import { applyBadLines, displayName, fieldPath, type DocumentBatch, type OnBadLine } from './documents';

type Hyparquet = typeof import('hyparquet', { with: { 'resolution-mode': 'import' } });
let hyparquet: Promise<Hyparquet> | undefined;
/** hyparquet is an ES module: loaded on first use (import() works from CommonJS on every supported Node). */
const loadHyparquet = () => (hyparquet ??= import('hyparquet'));

export interface ParquetReadOptions {
  field: string;
  idField?: string;
  onBadLine: OnBadLine;
  /** Text bytes per batch (default 16 MiB); a row group larger than this is cut into several batches. */
  batchBytes?: number;
  /** The most bytes a column chunk of a row group or one page may take uncompressed (default: no limit). */
  memoryLimit?: number;
}

function corrupt(file: string, e: unknown): NeardupError {
  if (e instanceof NeardupError) return e;
  return new NeardupError('ERR_NEARDUP_CORRUPT', `cannot read '${file}': not a valid Parquet file (${(e as Error).message})`, { file, cause: e });
}

type Metadata = Awaited<ReturnType<Hyparquet['parquetMetadataAsync']>>;
type RowGroup = Metadata['row_groups'][number];

/** Where a read is, for the errors: "FILE: row group G of N, column 'C'". */
interface Place { file: string; group: number; groups: number; column: string }
const placeText = (p: Place) => `${p.file}: row group ${p.group + 1} of ${p.groups}, column '${p.column}'`;

function tooLarge(p: Place, what: string, bytes: number, limit: number): NeardupError {
  return new NeardupError('ERR_NEARDUP_INVALID_INPUT',
    `${placeText(p)}: ${what} ${formatBytes(bytes)} uncompressed, more than the memory limit of ${formatBytes(limit)} ` +
    '(NEARDUP_DOCUMENT_MEMORY, or --memory where the command has it); write the file with smaller row groups ' +
    'and pages, or raise the limit', { file: p.file });
}

function overDeclared(p: Place, codec: string, declared: number): NeardupError {
  return new NeardupError('ERR_NEARDUP_INVALID_INPUT',
    `${placeText(p)}: a ${codec} page expands to more than the ${declared} bytes its header declares (a corrupt or ` +
    'crafted file); stopped there', { file: p.file });
}

/**
 * The page decoders for one column chunk: each checks the page's declared uncompressed size against the
 * limit before it allocates, and stops decoding at that size.
 */
function compressors(hp: Hyparquet, p: Place, limit: number) {
  const declared = (codec: string, n: number) => {
    if (n > limit) throw tooLarge(p, `a ${codec} page declares`, n, limit);
  };
  const zlibCapped = (codec: string, n: number, f: (o: zlib.ZlibOptions) => Buffer) => {
    declared(codec, n);
    try {
      return new Uint8Array(f({ maxOutputLength: Math.max(1, n) }));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw overDeclared(p, codec, n);
      throw e;
    }
  };
  return {
    ZSTD: (input: Uint8Array, n: number) => {
      declared('ZSTD', n);
      try {
        return nativeSync(() => native.zstdDecompressSync(input, '', n));
      } catch (e) {
        if (e instanceof NeardupError && e.code === 'ERR_NEARDUP_INVALID_INPUT') throw overDeclared(p, 'ZSTD', n);
        throw e;
      }
    },
    GZIP: (input: Uint8Array, n: number) => zlibCapped('GZIP', n, (o) => zlib.gunzipSync(input, o)),
    BROTLI: (input: Uint8Array, n: number) => zlibCapped('BROTLI', n, (o) => zlib.brotliDecompressSync(input, o)),
    SNAPPY: (input: Uint8Array, n: number) => {
      declared('SNAPPY', n);
      const out = new Uint8Array(n);
      hp.snappyUncompress(input, out);
      return out;
    },
  };
}

/** The uncompressed bytes of the column chunks of top-level column `column` in a row group (every leaf of a struct). */
function chunkBytes(group: RowGroup, column: string): number {
  let n = 0;
  for (const c of group.columns) if (c.meta_data?.path_in_schema[0] === column) n += Number(c.meta_data.total_uncompressed_size);
  return n;
}

/**
 * Rows [start, end) of top-level column `column` (end within the row group), each row an object holding that
 * column. The column chunk's size is checked first; pages are checked as they are decoded.
 */
async function readColumnRows(hp: Hyparquet, buf: Parameters<Hyparquet['parquetReadObjects']>[0]['file'], meta: Metadata,
  p: Place, start: number, end: number, limit: number, values: 'bytes' | 'json' | 'write'): Promise<Record<string, unknown>[]> {
  const bytes = chunkBytes(meta.row_groups[p.group], p.column);
  if (bytes > limit) throw tooLarge(p, 'the column chunk is', bytes, limit);
  return hp.parquetReadObjects({
    file: buf, metadata: meta, columns: [p.column], rowStart: start, rowEnd: end, compressors: compressors(hp, p, limit),
    ...(values === 'bytes' ? { parsers: { stringFromBytes: (b: Uint8Array) => b as unknown as string } } : {}),
    ...(values === 'write' ? { parsers: WRITE_PARSERS } : {}),
  });
}

/**
 * Values as they are stored, for writing them back unchanged (lib/io/parquet-out.ts): strings, UUIDs as their
 * bytes, timestamps and dates as their integers (hyparquet-writer encodes each of these as it is given).
 */
const WRITE_PARSERS = {
  stringFromBytes: (b: Uint8Array) => b,
  uuidFromBytes: (b: Uint8Array) => b,
  timestampFromMilliseconds: (v: bigint) => v,
  timestampFromMicroseconds: (v: bigint) => v,
  timestampFromNanoseconds: (v: bigint) => v,
  dateFromDays: (v: number) => v,
};

/** The JSON type name of a decoded Parquet value, as the JSONL reasons say it. */
function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return 'number';
  if (v instanceof Uint8Array) return 'string';
  if (Array.isArray(v)) return 'a list';
  return typeof v;
}

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A string value's UTF-8: byte arrays (string columns, kept as bytes) checked as strict UTF-8, JavaScript
 * strings (members of JSON columns) encoded; null when invalid, undefined when not a string.
 */
function utf8Of(v: unknown): Uint8Array | null | undefined {
  if (v instanceof Uint8Array) return isUtf8(v) ? v : null;
  if (typeof v === 'string') return LONE.test(v) ? null : Buffer.from(v, 'utf8');
  return undefined;
}

/** Follows a dot path into a row object (struct columns are objects); undefined when a part is missing. */
function follow(row: Record<string, unknown>, parts: string[]): { value: unknown; missingAt?: number } {
  let v: unknown = row;
  for (let k = 0; k < parts.length; k++) {
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array || Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, parts[k]))
      return { value: undefined, missingAt: k };
    v = (v as Record<string, unknown>)[parts[k]];
  }
  return { value: v };
}

/** Documents of one Parquet file, in batches; `fractionOfFile`: the rows read so far over all rows. */
export async function* readParquetDocuments(file: string, fileIndex: number, o: ParquetReadOptions):
AsyncGenerator<{ batch: DocumentBatch; bytes: number; fractionOfFile: number }> {
  const hp = await loadHyparquet();
  const name = displayName(file);
  const textParts = fieldPath(o.field);
  const idParts = o.idField === undefined ? undefined : fieldPath(o.idField);
  let meta: Awaited<ReturnType<Hyparquet['parquetMetadataAsync']>>;
  let buf: Awaited<ReturnType<Hyparquet['asyncBufferFromFile']>>;
  try {
    buf = await hp.asyncBufferFromFile(file);
    meta = await hp.parquetMetadataAsync(buf);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== undefined && (e as NodeJS.ErrnoException).syscall !== undefined)
      throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${name}': ${(e as Error).message}`, { file: name, cause: e });
    throw corrupt(name, e);
  }
  const top = hp.parquetSchema(meta).children.map((c) => c.element.name);
  for (const [what, parts] of [['field', textParts], ['id field', idParts]] as const) {
    if (parts && !top.includes(parts[0]))
      throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${name}: no column '${parts[0]}' for the ${what} (columns: ${top.join(', ')})`, { file: name });
  }
  const columns = [...new Set([textParts[0], ...(idParts ? [idParts[0]] : [])])];
  const totalRows = Number(meta.num_rows);
  const batchBytes = o.batchBytes ?? 16 << 20;
  const limit = o.memoryLimit ?? Number.MAX_SAFE_INTEGER;
  // flat columns are read in slices of rows (hyparquet decodes only the pages a slice needs); a nested one whole
  const schema = hp.parquetSchema(meta);
  let leaf: (typeof schema) | undefined = schema;
  for (const part of textParts) leaf = leaf?.children.find((c) => c.element.name === part);
  const e = leaf?.element;
  const binaryText = e?.type === 'BYTE_ARRAY' && e.converted_type !== 'UTF8' && e.converted_type !== 'JSON' &&
    e.converted_type !== 'ENUM' && e.logical_type?.type !== 'STRING' && e.logical_type?.type !== 'JSON' && e.logical_type?.type !== 'ENUM';
  const flat = columns.every((c) => schema.children.find((x) => x.element.name === c)?.children.length === 0);
  let row = 0;
  for (const [g, group] of meta.row_groups.entries()) {
    const groupRows = Number(group.num_rows);
    const perRow = chunkBytes(group, textParts[0]) / Math.max(1, groupRows);
    const sliceRows = flat ? Math.max(1024, Math.min(groupRows, Math.floor(batchBytes / Math.max(1, perRow)))) : groupRows;
    for (let sliceStart = 0; sliceStart < groupRows; sliceStart += sliceRows) {
      const sliceEnd = Math.min(groupRows, sliceStart + sliceRows);
      const byColumn = new Map<string, Record<string, unknown>[]>();
      for (const column of columns) {
        let rows: Record<string, unknown>[];
        try {
          rows = await readColumnRows(hp, buf, meta, { file: name, group: g, groups: meta.row_groups.length, column },
            row + sliceStart, row + sliceEnd, limit, 'bytes');
        } catch (e) {
          throw corrupt(name, e);
        }
        if (rows.length !== sliceEnd - sliceStart)
          throw corrupt(name, new Error(`row group ${g + 1}: ${rows.length} rows read where ${sliceEnd - sliceStart} were announced`));
        byColumn.set(column, rows);
      }
      const textRows = byColumn.get(textParts[0])!;
      const idRows = idParts ? byColumn.get(idParts[0])! : undefined;
      yield* sliceBatches(textRows, idRows, row + sliceStart);
    }
    row += groupRows;
  }
  if (row !== totalRows) throw corrupt(name, new Error(`the row groups hold ${row} rows, the footer says ${totalRows}`));

  /** Batches of about batchBytes of text from rows [first, first + textRows.length) of the file. */
  function* sliceBatches(textRows: Record<string, unknown>[], idRows: Record<string, unknown>[] | undefined, first: number) {
    for (let at = 0; at < textRows.length;) {
      // one batch: rows until batchBytes of text
      const texts: (Uint8Array | null)[] = [];
      const bad = new Map<number, string>();
      const ids: (Uint8Array | null)[] = [];
      const kinds: number[] = [];
      let size = 0;
      for (; at < textRows.length && (texts.length === 0 || size < batchBytes); at++) {
        const i = texts.length;
        const t = follow(textRows[at], textParts);
        let text: Uint8Array | null = null;
        let reason: string | undefined;
        if (t.missingAt !== undefined) reason = `field '${o.field}' is missing`;
        else {
          const v = utf8Of(t.value);
          if (v === undefined) reason = `field '${o.field}' is ${typeName(t.value)}, expected a string`;
          else if (v === null && binaryText) reason = `field '${o.field}' is binary (BYTE_ARRAY without a UTF-8 annotation) and not valid UTF-8`;
          else if (v === null) reason = `field '${o.field}' is not valid UTF-8 (or holds an unpaired surrogate)`;
          else text = v;
        }
        let id: Uint8Array | null = null;
        let kind = 0;
        if (idParts && idRows && reason === undefined) {
          const v = follow(idRows[at], idParts);
          if (v.missingAt !== undefined) reason = `field '${o.idField}' is missing`;
          else if (utf8Of(v.value)) { id = utf8Of(v.value)!; kind = 1; }
          else if (typeof v.value === 'bigint' || (typeof v.value === 'number' && Number.isInteger(v.value))) {
            id = Buffer.from(String(v.value), 'latin1');
            kind = 2;
          } else reason = `field '${o.idField}' is ${typeName(v.value)}, expected a string or an integer`;
        }
        if (reason !== undefined) {
          bad.set(i, reason);
          text = null;
          id = null;
          kind = 0;
        }
        texts.push(text);
        ids.push(id);
        kinds.push(kind);
        size += text?.length ?? 0;
      }
      const firstLine = first + at - texts.length + 1;
      const valid = applyBadLines(name, firstLine, texts.length, bad, o.onBadLine);
      const batch: DocumentBatch = {
        file, fileIndex, format: 'parquet', compression: 'none', firstLine, count: texts.length,
        packed: pack(texts), valid, bad, bytes: size,
      };
      if (idParts) {
        const p = pack(ids);
        batch.ids = { data: p.data, offsets: p.offsets, kinds: Uint8Array.from(kinds) };
      }
      yield { batch, bytes: size, fractionOfFile: totalRows ? (first + at) / totalRows : 1 };
    }
  }
}

function pack(items: (Uint8Array | null)[]): { data: Uint8Array; offsets: Uint32Array } {
  const offsets = new Uint32Array(items.length + 1);
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += items[i]?.length ?? 0;
    offsets[i + 1] = total;
  }
  const data = Buffer.allocUnsafe(total);
  for (let i = 0; i < items.length; i++) if (items[i]) data.set(items[i]!, offsets[i]);
  return { data, offsets };
}

/**
 * Every row group of a Parquet file, whole: for each top-level column, its values in the group's rows.
 * `values`: 'json' decoded for JSON (strings, dates), 'write' as stored, for writing back (WRITE_PARSERS).
 */
export async function* parquetRowGroups(file: string, memoryLimit: number, values: 'json' | 'write'):
AsyncGenerator<{ rows: number; columns: Map<string, unknown[]> }> {
  const hp = await loadHyparquet();
  const name = displayName(file);
  let buf, meta;
  try {
    buf = await hp.asyncBufferFromFile(file);
    meta = await hp.parquetMetadataAsync(buf);
  } catch (e) {
    throw corrupt(name, e);
  }
  const names = hp.parquetSchema(meta).children.map((c) => c.element.name);
  let row = 0;
  for (const [g, group] of meta.row_groups.entries()) {
    const n = Number(group.num_rows);
    const columns = new Map<string, unknown[]>();
    try {
      for (const column of names) {
        const rows = await readColumnRows(hp, buf, meta, { file: name, group: g, groups: meta.row_groups.length, column }, row, row + n, memoryLimit, values);
        if (rows.length !== n) throw new Error(`row group ${g + 1}: ${rows.length} rows read where ${n} were announced`);
        columns.set(column, rows.map((r) => r[column]));
      }
    } catch (e) {
      throw corrupt(name, e);
    }
    yield { rows: n, columns };
    row += n;
  }
}

/** Every row of a Parquet file as a JSON object, in batches (dedup --kept of a Parquet input into JSONL). */
export async function* parquetRowsAsJson(file: string, memoryLimit = Number.MAX_SAFE_INTEGER): AsyncGenerator<string[]> {
  for await (const { rows, columns } of parquetRowGroups(file, memoryLimit, 'json')) {
    const lines: string[] = new Array(rows);
    for (let i = 0; i < rows; i++) {
      const r: Record<string, unknown> = {};
      for (const [name, v] of columns) r[name] = v[i];
      lines[i] = JSON.stringify(r, jsonValue);
    }
    yield lines;
  }
}

/** The schema of a Parquet file (its footer's elements, the root first): what a Parquet output of its rows keeps. */
export async function parquetFileSchema(file: string): Promise<Metadata['schema']> {
  const hp = await loadHyparquet();
  const name = displayName(file);
  try {
    const buf = await hp.asyncBufferFromFile(file);
    return (await hp.parquetMetadataAsync(buf)).schema;
  } catch (e) {
    throw corrupt(name, e);
  }
}

/** JSON for Parquet values: bigints as numbers when safe (else decimal strings), dates as ISO strings, bytes as base64. */
function jsonValue(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.length).toString('base64');
  return v;
}
