// Writing documents: the second pass of `neardup dedup --kept FILE` / `--kept-dir DIR` / `--removed FILE` over
// the inputs, copying the lines of the documents kept (or dropped) into outputs that may be compressed (gzip:
// node:zlib; zstd: the addon's libzstd encoder, level 3, with a checksum); Parquet inputs' rows go to
// Parquet outputs as stored (lib/io/parquet-out.ts) or to JSONL ones as JSON objects; --annotate adds each
// document's cluster. Every output is an OutputFile: it appears complete or not at all.
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { NeardupError, nativeCall } from '../util/errors';
import { native } from '../native/addon';
import { documentMemoryFromEnv, openInputFile, readError, sniffFile, type InputCompression, type InputFormat } from './input';
import { parquetRowGroups, parquetRowsAsJson } from './parquet';
import { ANNOTATION_NAMES, ParquetOutput, isParquetName, parquetOutputSchema, type Annotation, type ParquetSchema } from './parquet-out';
import { OutputFile } from './files';
import { readLines } from './jsonl';
import { UsageError } from '../util/options';

export { ANNOTATION_NAMES, type Annotation } from './parquet-out';

/** The compression an output's name asks for: .gz gzip, .zst/.zstd zstd, else none. */
export function compressionOfName(file: string): InputCompression {
  if (/\.gz$/i.test(file)) return 'gzip';
  if (/\.zstd?$/i.test(file)) return 'zstd';
  return 'none';
}

/** Names of formats no output is written in (an output so named would hold something else). */
const FOREIGN = /\.(xz|lzma|bz2|lz4|zip|7z|lz|br|tar|parquet|gz|zstd?)$/i;

/**
 * Refuses an output whose name asks for a format it is not written in: text outputs (--flags, --clusters,
 * --pairs, --removed-ids) are plain, so .gz/.zst/.parquet/.xz/... names are refused; document outputs
 * (--kept, --removed) write JSONL (.gz/.zst compressed) or, for Parquet inputs, .parquet.
 */
export function checkOutputName(option: string, file: string, documents: boolean): void {
  if (file === '-') return;
  const m = FOREIGN.exec(file);
  if (!m) return;
  const ext = m[1].toLowerCase();
  if (documents && (ext === 'gz' || ext === 'zst' || ext === 'zstd' || ext === 'parquet')) return;
  throw new UsageError(`${option} '${file}': its name asks for .${ext}, but ${option} writes ${documents ? 'JSONL (plain, .gz or .zst) or, for Parquet inputs, .parquet' : 'plain text lines'}; name it accordingly`);
}

/** A file written through a compressor (or as it is): write() buffers ~1 MiB, commit() puts it in place. */
export class CompressedOutput {
  private parts: Buffer[] = [];
  private size = 0;
  private readonly gz?: zlib.Gzip;
  private gzOut: Buffer[] = [];
  private gzError: Error | undefined;
  private readonly zstd?: { compress(input: Uint8Array, end: boolean): Promise<Uint8Array> };

  private constructor(private readonly out: OutputFile, readonly compression: InputCompression) {
    if (compression === 'gzip') {
      this.gz = zlib.createGzip();
      this.gz.on('data', (c: Buffer) => this.gzOut.push(c));
      this.gz.on('error', (e) => { this.gzError = e; });
    } else if (compression === 'zstd') {
      this.zstd = new native.ZstdEncoder(3);
    }
  }

  static open(file: string, compression: InputCompression): CompressedOutput {
    return new CompressedOutput(OutputFile.open(file), compression);
  }

  get file(): string {
    return this.out.file;
  }

  async write(b: Buffer): Promise<void> {
    this.parts.push(b);
    this.size += b.length;
    if (this.size >= 1 << 20) await this.flush(false);
  }

  private async flush(end: boolean): Promise<void> {
    const data = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    if (this.gz) {
      const gz = this.gz;
      await new Promise<void>((resolve, reject) => {
        const done = (e?: Error | null) => (e ? reject(e) : resolve());
        if (end) {
          if (data.length) gz.write(data);
          gz.end();
          gz.once('end', () => done());
          gz.once('error', done);
        } else {
          gz.write(data, (e) => done(e));
        }
      });
      if (this.gzError) throw this.gzError;
      const ready = this.gzOut;
      this.gzOut = [];
      for (const c of ready) await this.out.write(c);
    } else if (this.zstd) {
      if (data.length || end) {
        const c = await nativeCall(this.zstd.compress(data, end));
        if (c.length) await this.out.write(Buffer.from(c.buffer, c.byteOffset, c.length));
      }
    } else if (data.length) {
      await this.out.write(data);
    }
  }

  async commit(): Promise<void> {
    await this.flush(true);
    await this.out.commit();
  }

  abort(): void {
    this.gz?.destroy();
    this.out.abort();
  }
}

/** The compression of --kept-dir's file for an input: the input's own (Parquet: its own format, see ParquetOutput). */
export function keptCompression(format: InputFormat, compression: InputCompression): InputCompression {
  return format === 'parquet' ? 'none' : compression;
}

/** The file `--kept-dir DIR` writes for an input: the same base name and format (a Parquet input's ends in .parquet). */
export function keptDirName(dir: string, input: string, format: InputFormat): string {
  const base = path.basename(input);
  return path.join(dir, format === 'parquet' && !/\.parquet$/i.test(base) ? `${base}.parquet` : base);
}

/** Refuses two inputs with the same base name under --kept-dir (one would overwrite the other). */
export function checkKeptDirInputs(files: string[]): void {
  const seen = new Map<string, string>();
  for (const f of files) {
    const b = path.basename(f);
    const other = seen.get(b);
    if (other !== undefined) throw new UsageError(`--kept-dir: the inputs '${other}' and '${f}' have the same name '${b}'; one kept file each is not possible`);
    seen.set(b, f);
  }
}

export interface KeptInput {
  file: string;
  format: InputFormat;
  compression: InputCompression;
  /** The input's documents are [first, first + count) of the run. */
  first: number;
  count: number;
}

/** Where copyDocuments puts a document: 0 nowhere (a bad line, or an output not asked for), 1 kept, 2 removed. */
export type DocumentRoute = 0 | 1 | 2;

/** An output of copyDocuments: JSON lines (plain or compressed), or Parquet (for Parquet inputs). */
export type DocumentOutput = CompressedOutput | ParquetOutput;

/** A JSON object's text with the annotation's members added at its end (a bad line is never annotated). */
export function annotateJson(line: Buffer | string, a: Annotation): Buffer {
  const b = typeof line === 'string' ? Buffer.from(line) : line;
  let end = b.length - 1;
  while (end >= 0 && (b[end] === 0x20 || b[end] === 0x09 || b[end] === 0x0d)) end--;
  if (end < 0 || b[end] !== 0x7d) return b;  // not an object: as it is
  let k = end - 1;
  while (k >= 0 && (b[k] === 0x20 || b[k] === 0x09 || b[k] === 0x0a || b[k] === 0x0d)) k--;
  const empty = k >= 0 && b[k] === 0x7b;
  const add = `${empty ? '' : ','}"${ANNOTATION_NAMES.cluster}":${a.cluster},"${ANNOTATION_NAMES.size}":${a.size}` +
    (a.keptId !== undefined ? `,"${ANNOTATION_NAMES.keptId}":${a.keptId}` : '') + '}';
  return Buffer.concat([b.subarray(0, end), Buffer.from(add), b.subarray(end + 1)]);
}

/**
 * Each document's annotation from the run's representatives (rep[d]: the document d is kept for, d when
 * kept; a value >= n for an earlier run's indexed document, whose cluster `indexKey(d)` names).
 */
export function annotations(rep: Uint32Array, o: { cluster: (d: number) => string; keptId?: (d: number) => string; indexKey?: (d: number) => string }): (d: number) => Annotation {
  const n = rep.length;
  const size = new Uint32Array(n);
  const indexSizes = new Map<string, number>();
  const key = o.indexKey ?? o.cluster;
  for (let d = 0; d < n; d++) {
    if (rep[d] < n) size[rep[d]]++;
    else { const k = key(d); indexSizes.set(k, (indexSizes.get(k) ?? 0) + 1); }
  }
  return (d) => ({
    cluster: o.cluster(d), size: rep[d] < n ? size[rep[d]] : indexSizes.get(key(d))!, ...(o.keptId ? { keptId: o.keptId(d) } : {}),
  });
}

/**
 * Copies the documents of each input, in input order, to `kept(input)` or `removed(input)` as `route(d)` says
 * (--kept/--kept-dir and --removed, in one pass over the inputs); outputs shared by several inputs get them
 * back to back. JSONL lines are copied byte for byte (a BOM at the start of a file is not); Parquet rows go
 * to a ParquetOutput as they were stored, to a JSON output as JSON objects. A route to an output not given
 * copies nothing.
 */
export async function copyDocuments(inputs: KeptInput[], route: (doc: number) => DocumentRoute,
  targets: { kept?: (input: KeptInput) => DocumentOutput; removed?: (input: KeptInput) => DocumentOutput }, annotate?: (doc: number) => Annotation): Promise<void> {
  const nl = Buffer.from('\n');
  for (const inp of inputs) {
    const outs = [undefined, targets.kept?.(inp), targets.removed?.(inp)];
    const to = (doc: number) => (doc < inp.first + inp.count ? outs[route(doc)] : undefined);
    let d = inp.first;
    if (inp.format === 'parquet') {
      // Parquet outputs: each row group's rows, as stored; JSON outputs: the rows as JSON objects (a pass of its own)
      if (outs.some((o) => o instanceof ParquetOutput)) {
        for await (const g of parquetRowGroups(inp.file, documentMemoryFromEnv() ?? Number.MAX_SAFE_INTEGER, 'write')) {
          const groupFirst = d;
          const take = new Map<ParquetOutput, number[]>();
          for (let r = 0; r < g.rows; r++, d++) {
            const out = to(d);
            if (out instanceof ParquetOutput) {
              let t = take.get(out);
              if (!t) take.set(out, (t = []));
              t.push(r);
            }
          }
          for (const [out, rows] of take) await out.writeRows(g.columns, rows, annotate && rows.map((r) => annotate(groupFirst + r)));
        }
      }
      if (outs.some((o) => o instanceof CompressedOutput)) {
        d = inp.first;
        for await (const rows of parquetRowsAsJson(inp.file, documentMemoryFromEnv())) {
          for (const r of rows) {
            const out = to(d);
            if (out instanceof CompressedOutput) await out.write(Buffer.concat([annotate ? annotateJson(r, annotate(d)) : Buffer.from(r), nl]));
            d++;
          }
        }
      }
      if (outs.every((o) => o === undefined)) d = inp.first + inp.count;
    } else {
      if (outs.some((o) => o instanceof ParquetOutput))
        throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${inp.file}' is JSONL: its lines cannot go into a Parquet output`, { file: inp.file });
      const opened = await openInputFile(inp.file, 4 << 20);
      if (!annotate) {
        try {
          d = await copyLineRuns(opened.stream!, d, (doc) => to(doc) as CompressedOutput | undefined);
        } catch (e) {
          throw readError(inp.file, e);
        } finally {
          opened.stream!.destroy();
        }
      } else {
      let first = true;
      try {
        for await (let raw of readLines(opened.stream!, inp.file)) {
          if (first && raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) raw = raw.subarray(3);
          first = false;
          const out = to(d) as CompressedOutput | undefined;
          if (out) {
            await out.write(annotate ? annotateJson(raw, annotate(d)) : raw);
            await out.write(nl);
          }
          d++;
        }
      } catch (e) {
        throw readError(inp.file, e);
      } finally {
        opened.stream!.destroy();
      }
      }
    }
    if (d !== inp.first + inp.count)
      throw new NeardupError('ERR_NEARDUP_IO', `'${inp.file}' changed between the two passes (${inp.count} documents, then ${d - inp.first})`, { file: inp.file });
  }
}

/**
 * JSONL lines copied byte for byte a chunk at a time: each run of consecutive lines of a chunk that go to one
 * output is one slice of it (no per-line await). Line d (numbered on from `doc`) goes to to(d), or nowhere;
 * a BOM at the start is not copied; a last line without '\n' gets one. Returns the number after the last line.
 */
async function copyLineRuns(stream: AsyncIterable<Buffer>, doc: number, to: (d: number) => CompressedOutput | undefined): Promise<number> {
  const nl = Buffer.from('\n');
  let d = doc;
  let carry: Buffer[] = [];  // the start of a line that began in an earlier chunk
  let carried = 0;
  let first = true;
  for await (let chunk of stream) {
    if (first) {
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
      first = false;
    }
    let start = 0;
    if (carried > 0) {
      const end = chunk.indexOf(0x0a);
      if (end < 0) {
        carry.push(chunk);
        carried += chunk.length;
        continue;
      }
      const out = to(d++);
      if (out) await out.write(Buffer.concat([...carry, chunk.subarray(0, end + 1)], carried + end + 1));
      carry = [];
      carried = 0;
      start = end + 1;
    }
    let runStart = start;
    let runOut: CompressedOutput | undefined;
    for (;;) {
      const end = chunk.indexOf(0x0a, start);
      if (end < 0) break;
      const out = to(d++);
      if (out !== runOut) {
        if (runOut && start > runStart) await runOut.write(chunk.subarray(runStart, start));
        runOut = out;
        runStart = start;
      }
      start = end + 1;
    }
    if (runOut && start > runStart) await runOut.write(chunk.subarray(runStart, start));
    if (start < chunk.length) {
      carry.push(chunk.subarray(start));
      carried += chunk.length - start;
    }
  }
  if (carried > 0) {
    const out = to(d++);
    if (out) {
      await out.write(Buffer.concat(carry, carried));
      await out.write(nl);
    }
  }
  return d;
}

/** The Parquet schemas of a run's document outputs (each output written as Parquet has one). */
export interface ParquetPlan {
  kept?: ParquetSchema;
  removed?: ParquetSchema;
  /** --kept-dir: each Parquet input's schema, by input file. */
  keptDir: Map<string, ParquetSchema>;
}

/**
 * Which document outputs are Parquet, and their schemas, checked before any work: --kept/--removed named
 * .parquet (all inputs Parquet, of one schema), and --kept-dir's file for each Parquet input (its schema).
 */
export async function planParquetOutputs(o: { kept?: string; removed?: string; keptDir?: string }, inputs: string[]): Promise<ParquetPlan> {
  const files = inputs.map((file) => ({ file, format: file === '-' ? 'jsonl' : sniffFile(file).format }));
  const plan: ParquetPlan = { keptDir: new Map() };
  if (o.kept !== undefined && isParquetName(o.kept)) plan.kept = await parquetOutputSchema('--kept', o.kept, files);
  if (o.removed !== undefined && isParquetName(o.removed)) plan.removed = await parquetOutputSchema('--removed', o.removed, files);
  if (o.keptDir !== undefined) {
    for (const f of files) {
      if (f.format === 'parquet') plan.keptDir.set(f.file, await parquetOutputSchema('--kept-dir', keptDirName(o.keptDir, f.file, 'parquet'), [f]));
    }
  }
  return plan;
}

/**
 * Opens a document output: Parquet when it has a schema, else JSONL compressed as given. `annotate` (dedup
 * --annotate): a Parquet output gets the annotation columns, with ids as the inputs' id column holds them.
 */
export function openDocumentOutput(file: string, compression: InputCompression, schema: ParquetSchema | undefined,
  annotate?: { idField?: string }): DocumentOutput {
  if (!schema) return CompressedOutput.open(file, compression);
  return ParquetOutput.open(file, schema, annotate && { idKind: annotate.idField === undefined ? undefined : idKind(schema, annotate.idField) });
}

/** How a Parquet schema holds the ids of `idField` (a dot path): integers, or strings. */
function idKind(schema: ParquetSchema, idField: string): 'int' | 'string' {
  const leaf = idField.split('.').at(-1);
  const e = schema.slice(1).find((x) => x.name === leaf && (x.num_children ?? 0) === 0);
  return e?.type === 'INT32' || e?.type === 'INT64' ? 'int' : 'string';
}
