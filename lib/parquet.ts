// Parquet input (lib/input.ts hands over files that start with "PAR1"): the text column, and the id column,
// read row group by row group with hyparquet (pure JavaScript; HACKING.md says why), row i = document i
// across row groups. Pages: uncompressed, snappy (hyparquet's own decoder), zstd (the addon's libzstd
// decoder), gzip (node:zlib), brotli (node:zlib). The text column must hold strings (BYTE_ARRAY, taken as
// bytes and checked as strict UTF-8); a nested field ('meta.content') is a member of a struct column. A null
// or missing value, invalid UTF-8 or a value of another type is a bad row, under the same --on-bad-line
// policy as a bad JSONL line ("FILE:ROW", 1-based rows). Ids: strings or integers (INT32/INT64).
// A file that is not valid Parquet is ERR_NEARDUP_CORRUPT naming it.
import * as zlib from 'node:zlib';
import { isUtf8 } from 'node:buffer';
import { NeardupError, nativeSync } from './errors';
import { native } from './native';
import { applyBadLines, displayName, fieldPath, type DocumentBatch, type OnBadLine } from './input';

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
}

function corrupt(file: string, e: unknown): NeardupError {
  if (e instanceof NeardupError) return e;
  return new NeardupError('ERR_NEARDUP_CORRUPT', `cannot read '${file}': not a valid Parquet file (${(e as Error).message})`, { file, cause: e });
}

const COMPRESSORS = {
  ZSTD: (input: Uint8Array) => nativeSync(() => native.zstdDecompressSync(input, '')),
  GZIP: (input: Uint8Array) => new Uint8Array(zlib.gunzipSync(input)),
  BROTLI: (input: Uint8Array) => new Uint8Array(zlib.brotliDecompressSync(input)),
};

/** The JSON type name of a decoded Parquet value, as the JSONL reasons say it. */
function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return 'number';
  if (v instanceof Uint8Array) return 'string';
  if (Array.isArray(v)) return 'object';
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
  let row = 0;
  for (const group of meta.row_groups) {
    const groupRows = Number(group.num_rows);
    let rows: Record<string, unknown>[];
    try {
      rows = await hp.parquetReadObjects({
        file: buf, metadata: meta, columns, rowStart: row, rowEnd: row + groupRows, compressors: COMPRESSORS,
        parsers: { stringFromBytes: (b: Uint8Array) => b as unknown as string },
      });
    } catch (e) {
      throw corrupt(name, e);
    }
    if (rows.length !== groupRows) throw corrupt(name, new Error(`row group has ${rows.length} rows, ${groupRows} announced`));
    for (let at = 0; at < rows.length;) {
      // one batch: rows until batchBytes of text
      const texts: (Uint8Array | null)[] = [];
      const bad = new Map<number, string>();
      const ids: (Uint8Array | null)[] = [];
      const kinds: number[] = [];
      let size = 0;
      for (; at < rows.length && (texts.length === 0 || size < batchBytes); at++) {
        const r = rows[at];
        const i = texts.length;
        const t = follow(r, textParts);
        let text: Uint8Array | null = null;
        let reason: string | undefined;
        if (t.missingAt !== undefined) reason = `field '${o.field}' is missing`;
        else {
          const v = utf8Of(t.value);
          if (v === undefined) reason = `field '${o.field}' is ${typeName(t.value)}, expected a string`;
          else if (v === null) reason = `field '${o.field}' is not valid UTF-8 (or holds an unpaired surrogate)`;
          else text = v;
        }
        let id: Uint8Array | null = null;
        let kind = 0;
        if (idParts && reason === undefined) {
          const v = follow(r, idParts);
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
      const firstLine = row + at - texts.length + 1;
      const valid = applyBadLines(name, firstLine, texts.length, bad, o.onBadLine);
      const batch: DocumentBatch = {
        file, fileIndex, format: 'parquet', compression: 'none', firstLine, count: texts.length,
        packed: pack(texts), valid, bad, bytes: size,
      };
      if (idParts) {
        const p = pack(ids);
        batch.ids = { data: p.data, offsets: p.offsets, kinds: Uint8Array.from(kinds) };
      }
      yield { batch, bytes: size, fractionOfFile: totalRows ? (row + at) / totalRows : 1 };
    }
    row += groupRows;
  }
  if (row !== totalRows) throw corrupt(name, new Error(`the row groups hold ${row} rows, the footer says ${totalRows}`));
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

/** Every row of a Parquet file as a JSON object, in batches (dedup --kept of a Parquet input writes JSONL). */
export async function* parquetRowsAsJson(file: string): AsyncGenerator<string[]> {
  const hp = await loadHyparquet();
  const name = displayName(file);
  let buf, meta;
  try {
    buf = await hp.asyncBufferFromFile(file);
    meta = await hp.parquetMetadataAsync(buf);
  } catch (e) {
    throw corrupt(name, e);
  }
  let row = 0;
  for (const group of meta.row_groups) {
    const n = Number(group.num_rows);
    let rows: Record<string, unknown>[];
    try {
      rows = await hp.parquetReadObjects({ file: buf, metadata: meta, rowStart: row, rowEnd: row + n, compressors: COMPRESSORS });
    } catch (e) {
      throw corrupt(name, e);
    }
    yield rows.map((r) => JSON.stringify(r, jsonValue));
    row += n;
  }
}

/** JSON for Parquet values: bigints as numbers when safe (else decimal strings), dates as ISO strings, bytes as base64. */
function jsonValue(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.length).toString('base64');
  return v;
}
