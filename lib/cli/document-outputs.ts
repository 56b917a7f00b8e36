// What the document-dedup commands (dedup, exact) share: the bookkeeping of the documents read (where each
// input's documents are, the bad lines, the ids) and the outputs written from each document's
// representative (--flags, --clusters, --removed-ids, --kept/--kept-dir/--removed with --annotate).
import * as fs from 'node:fs';
import { idJson, sniffFile, type DocumentIds } from '../io/input';
import {
  annotations, compressionOfName, copyDocuments, keptCompression, keptDirName, openDocumentOutput,
  type DocumentOutput, type KeptInput, type ParquetPlan,
} from '../io/kept';
import type { ParquetSchema } from '../io/parquet-out';
import { OutputFile, writeLinesTo } from '../io/files';

/** The documents of a run as they were read: per input, its range of documents; the bad lines; the ids. */
export class DocumentLog {
  readonly files: KeptInput[] = [];
  /** 0-based, ascending: never copied to --kept / --removed. */
  readonly badLines: number[] = [];
  private readonly idBatches: { first: number; ids: DocumentIds }[] = [];
  /** Where each batch's lines are (for messages naming a document's file and line). */
  private readonly starts: { doc: number; file: string; line: number }[] = [];
  documents = 0;
  bad = 0;

  constructor(private readonly inputs: readonly string[]) {}

  /** Records the next batch (documents numbered on from those recorded before). */
  record(batch: { count: number; bad: { keys(): Iterable<number>; size: number }; fileIndex: number; file: string; firstLine: number; format: KeptInput['format']; compression: KeptInput['compression']; ids?: DocumentIds }): void {
    for (const i of batch.bad.keys()) this.badLines.push(this.documents + i);
    this.starts.push({ doc: this.documents, file: batch.file === '-' ? '<stdin>' : batch.file, line: batch.firstLine });
    if (batch.ids) this.idBatches.push({ first: this.documents, ids: batch.ids });
    while (this.files.length <= batch.fileIndex) this.files.push(this.inputAt(this.files.length));
    Object.assign(this.files[batch.fileIndex], { format: batch.format, compression: batch.compression });
    this.files[batch.fileIndex].count += batch.count;
    this.documents += batch.count;
    this.bad += batch.bad.size;
  }

  /** After the last batch: the inputs that held no document. */
  end(): void {
    while (this.files.length < this.inputs.length) this.files.push(this.inputAt(this.files.length));
  }

  private inputAt(k: number): KeptInput {
    return { file: this.inputs[k], ...sniffFile(this.inputs[k]), first: this.documents, count: 0 };
  }

  /** The id of document d as JSON (binary search over the batches' ids; needs --id-field). */
  idOf(d: number): string {
    const b = this.idBatches;
    let lo = 0, hi = b.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (b[mid].first <= d) lo = mid; else hi = mid - 1;
    }
    return idJson(b[lo].ids, d - b[lo].first);
  }

  /** "file:line" of document d. */
  describe(d: number): string {
    let k = this.starts.length - 1;
    while (k > 0 && this.starts[k].doc > d) k--;
    return `${this.starts[k].file}:${this.starts[k].line + d - this.starts[k].doc}`;
  }
}

export interface ClusterOutputOptions {
  flags?: string;
  clusters?: string;
  removedIds?: string;
  kept?: string;
  keptDir?: string;
  removed?: string;
  annotate?: boolean;
  idField?: string;
  parquetPlan: ParquetPlan;
}

/**
 * Writes the outputs that follow from each document's representative: rep[d] (its own number when kept),
 * dropped[d] (1: not kept). repNumber(d): the --clusters value of d; keptId(d): the id of the document d is
 * kept for; indexKey(d): the key of the indexed document d was dropped for (dedup --index). Every output file
 * opened is pushed to `open` (the caller aborts the uncommitted ones on error).
 */
export async function writeClusterOutputs(
  log: DocumentLog, rep: Uint32Array, dropped: Uint8Array, o: ClusterOutputOptions, open: { abort(): void }[],
  names: { repNumber: (d: number) => string; keptId: (d: number) => string; indexKey?: (d: number) => string },
): Promise<void> {
  const create = (file: string) => {
    const f = OutputFile.open(file);
    open.push(f);
    return f;
  };
  const n = rep.length;
  if (o.flags !== undefined) await writeLinesTo(create(o.flags), n, (i) => (dropped[i] ? '0\n' : '1\n'));
  if (o.clusters !== undefined) {
    await writeLinesTo(create(o.clusters), n, o.idField === undefined ? (i) => `${names.repNumber(i)}\n`
      : (i) => `{"id": ${log.idOf(i)}, "kept": ${names.repNumber(i)}, "kept_id": ${names.keptId(i)}}\n`);
  }
  if (o.removedIds !== undefined) {
    const removed: number[] = [];
    for (let i = 0; i < n; i++) if (dropped[i]) removed.push(i);
    await writeLinesTo(create(o.removedIds), removed.length, (k) => `${log.idOf(removed[k])}\n`);
  }
  if (o.kept === undefined && o.keptDir === undefined && o.removed === undefined) return;
  const keptDir = o.keptDir;
  if (keptDir !== undefined) fs.mkdirSync(keptDir, { recursive: true });
  const isBad = new Uint8Array(n);
  for (const i of log.badLines) isBad[i] = 1;
  const outs = new Map<string, DocumentOutput>();
  const annotate = o.annotate ? { idField: o.idField } : undefined;
  const outputNamed = (name: string, compression: () => ReturnType<typeof compressionOfName>, schema: ParquetSchema | undefined) => {
    let out = outs.get(name);
    if (!out) {
      out = openDocumentOutput(name, compression(), schema, annotate);
      open.push(out);
      outs.set(name, out);
    }
    return out;
  };
  const plan = o.parquetPlan;
  // kept and removed documents in one pass over the inputs; bad lines go to neither
  await copyDocuments(log.files, (d) => (isBad[d] ? 0 : dropped[d] ? 2 : 1), {
    ...(o.kept !== undefined || keptDir !== undefined ? {
      kept: (inp: KeptInput) => (keptDir === undefined ? outputNamed(o.kept!, () => compressionOfName(o.kept!), plan.kept)
        : outputNamed(keptDirName(keptDir, inp.file, inp.format), () => keptCompression(inp.format, inp.compression), plan.keptDir.get(inp.file))),
    } : {}),
    ...(o.removed !== undefined ? { removed: () => outputNamed(o.removed!, () => compressionOfName(o.removed!), plan.removed) } : {}),
  }, annotate && annotations(rep, {
    cluster: names.repNumber, ...(names.indexKey ? { indexKey: names.indexKey } : {}),
    ...(o.idField === undefined ? {} : { keptId: names.keptId }),
  }));
  for (const out of outs.values()) await out.commit();
}
