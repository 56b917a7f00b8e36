// Parquet output: `dedup --kept out.parquet` / `--removed` / `--kept-dir` of Parquet inputs write the rows
// back as Parquet, with the input's schema (every column, its types and annotations) and its values as they
// were stored (lib/io/parquet.ts reads them with WRITE_PARSERS), through hyparquet-writer: one row group per
// input row group (its rows that go there), snappy pages. The file is an OutputFile: it appears complete or
// not at all. Columns whose values hyparquet cannot give back as stored (DECIMAL beyond 15 digits, INT96
// timestamps, geometry, variants) are refused before any work, naming the column.
import { NeardupError } from '../util/errors';
import { displayName } from './documents';
import { OutputFile } from './files';
import { parquetFileSchema } from './parquet';

/** The members dedup --annotate adds to each document it writes (ANNOTATION_NAMES: their names). */
export interface Annotation {
  /** Its cluster, as --clusters names it (JSON: a line number, or null for an earlier run's document named by id). */
  cluster: string;
  /** The documents of this run in its cluster. */
  size: number;
  /** With ids: the id of the cluster's kept document (JSON text), as --clusters' kept_id. */
  keptId?: string;
}

/** dedup --annotate's members (JSONL) and columns (Parquet). */
export const ANNOTATION_NAMES = { cluster: 'neardup_cluster', size: 'neardup_cluster_size', keptId: 'neardup_kept_id' } as const;

type Writer = typeof import('hyparquet-writer', { with: { 'resolution-mode': 'import' } });
let writerModule: Promise<Writer> | undefined;
let loaded: Writer | undefined;
/** Loads hyparquet-writer (an ES module) before a ParquetOutput is opened. */
export async function loadParquetWriter(): Promise<void> {
  loaded = await (writerModule ??= import('hyparquet-writer'));
}

export type ParquetSchema = Awaited<ReturnType<typeof parquetFileSchema>>;

/** Output names that ask for Parquet. */
export function isParquetName(file: string): boolean {
  return /\.parquet$/i.test(file);
}

/** Why a column cannot be written back exactly, or undefined. */
function unwritable(e: ParquetSchema[number]): string | undefined {
  if (e.type === 'INT96') return 'an INT96 timestamp';
  if (e.converted_type === 'DECIMAL' && (e.precision ?? 0) > 15) return `a DECIMAL of ${e.precision} digits (read as a double, it would lose digits)`;
  const lt = e.logical_type?.type;
  if (lt === 'GEOMETRY' || lt === 'GEOGRAPHY') return `a ${lt.toLowerCase()}`;
  if (lt === 'VARIANT') return 'a variant';
  if ((lt as string | undefined) === 'FILE') return 'a file';
  if (e.converted_type === 'BSON' || e.converted_type === 'INTERVAL') return `a ${e.converted_type}`;
  return undefined;
}

/**
 * The schema that `--kept OUT.parquet` (or --removed) writes for these inputs: theirs, which must be one and the
 * same, every column writable. Throws ERR_NEARDUP_INVALID_INPUT naming the option, the file and the column.
 */
export async function parquetOutputSchema(option: string, output: string, inputs: { file: string; format: string }[]): Promise<ParquetSchema> {
  let schema: ParquetSchema | undefined;
  let first = '';
  for (const inp of inputs) {
    if (inp.format !== 'parquet')
      throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${option} '${output}': a Parquet output takes Parquet inputs, and '${displayName(inp.file)}' is JSONL ` +
        '(JSON lines have no column types to write); name the output .jsonl (or .jsonl.gz, .jsonl.zst)', { file: inp.file });
    const s = await parquetFileSchema(inp.file);
    if (schema === undefined) {
      schema = s;
      first = inp.file;
      for (const e of s.slice(1)) {
        const why = unwritable(e);
        if (why) throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `${option} '${output}': the column '${e.name}' of '${displayName(inp.file)}' is ${why}, which cannot be written back exactly; name the output .jsonl`, { file: inp.file });
      }
    } else if (schemaText(s) !== schemaText(schema)) {
      throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${option} '${output}': '${displayName(inp.file)}' and '${displayName(first)}' have different schemas ` +
        `(columns ${columnList(s)} vs ${columnList(schema)}), and one Parquet file has one; use --kept-dir (a file per input) or a .jsonl output`, { file: inp.file });
    }
  }
  if (schema === undefined) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${option} '${output}': a Parquet output needs Parquet inputs`);
  await loadParquetWriter();
  return schema;
}

const schemaText = (s: ParquetSchema) => JSON.stringify(s.slice(1), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
const columnList = (s: ParquetSchema) => s.slice(1).map((e) => e.name).join(', ');

/** A Parquet file written row group by row group: writeRows() adds the chosen rows of a group, commit() puts it in place. */
export class ParquetOutput {
  private pending: Uint8Array[] = [];

  private constructor(private readonly out: OutputFile, private readonly writer: InstanceType<Writer['ParquetWriter']>,
    private readonly bytes: InstanceType<Writer['ByteWriter']>, private readonly names: string[],
    private readonly annotated?: { idKind: 'string' | 'int' | undefined }) {}

  /**
   * Opens FILE (a temporary file until commit()); loadParquetWriter() first. `annotate`: the schema gets
   * dedup --annotate's columns (neardup_cluster INT64, neardup_cluster_size INT64, and with ids
   * neardup_kept_id of the id column's kind: INT64 for integer ids, else a string).
   */
  static open(file: string, input: ParquetSchema, annotate?: { idKind?: 'string' | 'int' }): ParquetOutput {
    const w = loaded;
    if (!w) throw new Error('internal: loadParquetWriter() was not awaited');
    const schema = annotate ? annotatedSchema(input, annotate.idKind) : input;
    const out = OutputFile.open(file);
    const bytes = new w.ByteWriter();
    let self: ParquetOutput | undefined;
    // the bytes of each row group are handed on as it ends (the buffer is then reused)
    (bytes as unknown as { flush(): Promise<void> }).flush = () => self!.drain();
    // (hyparquet-writer has its own copy of hyparquet's types, a version behind: the same elements)
    const writer = new w.ParquetWriter({ writer: bytes, schema: schema as never, codec: 'SNAPPY', createdBy: 'neardup' });
    self = new ParquetOutput(out, writer, bytes, input.filter((_, i) => i > 0 && isTopLevel(input, i)).map((e) => e.name),
      annotate ? { idKind: annotate.idKind } : undefined);
    return self;
  }

  get file(): string {
    return this.out.file;
  }

  private async drain(): Promise<void> {
    const b = this.bytes as unknown as { buffer: ArrayBuffer; index: number };
    if (b.index === 0) return;
    const chunk = Buffer.from(new Uint8Array(b.buffer, 0, b.index));  // a copy: the buffer is reused
    b.index = 0;
    await this.out.write(chunk);
  }

  /** Rows `take` (ascending indices) of a row group given by column (parquetRowGroups(..., 'write')), with their annotations when opened so. */
  async writeRows(columns: Map<string, unknown[]>, take: number[], notes?: Annotation[]): Promise<void> {
    if (take.length === 0) return;
    const columnData: { name: string; data: unknown[] }[] = this.names.map((name) => {
      const v = columns.get(name);
      if (v === undefined) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${this.file}': a row group without the column '${name}'`);
      return { name, data: take.map((i) => v[i]) };
    });
    if (this.annotated) {
      if (!notes || notes.length !== take.length) throw new Error('internal: an annotated Parquet output needs an annotation per row');
      const big = (json: string) => (json === 'null' ? null : BigInt(json));
      columnData.push({ name: ANNOTATION_NAMES.cluster, data: notes.map((a) => big(a.cluster)) }, { name: ANNOTATION_NAMES.size, data: notes.map((a) => BigInt(a.size)) });
      if (this.annotated.idKind !== undefined) {
        const kind = this.annotated.idKind;
        columnData.push({ name: ANNOTATION_NAMES.keptId, data: notes.map((a) => (a.keptId === undefined || a.keptId === 'null' ? null
          : kind === 'int' ? BigInt(a.keptId) : typeof JSON.parse(a.keptId) === 'string' ? JSON.parse(a.keptId) as string : a.keptId)) });
      }
    }
    await this.writer.write({ columnData, rowGroupSize: take.length });
    await this.drain();
  }

  async commit(): Promise<void> {
    await this.writer.finish();
    await this.drain();
    await this.out.commit();
  }

  abort(): void {
    this.out.abort();
  }
}

/** The input schema with dedup --annotate's columns added at the end (refused when it has one of their names). */
function annotatedSchema(schema: ParquetSchema, idKind: 'string' | 'int' | undefined): ParquetSchema {
  const top = schema.filter((_, i) => i > 0 && isTopLevel(schema, i)).map((e) => e.name);
  const added: ParquetSchema = [
    { name: ANNOTATION_NAMES.cluster, type: 'INT64', repetition_type: 'OPTIONAL' },
    { name: ANNOTATION_NAMES.size, type: 'INT64', repetition_type: 'REQUIRED' },
    ...(idKind === undefined ? [] : [idKind === 'int' ? { name: ANNOTATION_NAMES.keptId, type: 'INT64' as const, repetition_type: 'OPTIONAL' as const }
      : { name: ANNOTATION_NAMES.keptId, type: 'BYTE_ARRAY' as const, repetition_type: 'OPTIONAL' as const, converted_type: 'UTF8' as const, logical_type: { type: 'STRING' as const } }]),
  ];
  for (const a of added) {
    if (top.includes(a.name)) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `--annotate: the input already has a column '${a.name}'`);
  }
  return [{ ...schema[0], num_children: (schema[0].num_children ?? 0) + added.length }, ...schema.slice(1), ...added];
}

/** Whether schema element i is a top-level column (a child of the root). */
function isTopLevel(schema: ParquetSchema, i: number): boolean {
  // walk the tree in order: the root's num_children elements, each followed by its own subtree
  let at = 1;
  const skip = (k: number): number => {
    let next = k + 1;
    for (let c = 0; c < (schema[k].num_children ?? 0); c++) next = skip(next);
    return next;
  };
  for (let c = 0; c < (schema[0].num_children ?? 0); c++) {
    if (at === i) return true;
    at = skip(at);
  }
  return false;
}
