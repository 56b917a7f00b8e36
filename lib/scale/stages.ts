// lib/scale/ - runs split into idempotent tasks over a shared work folder (no native counterpart; stands on the
// engines and below, never on lib/cli):
//   stages.ts (this file: dedup's stages), staged.ts (the work folder's rules, the summary), passages-stages.ts
//   (a sharded passage-index build), queue.ts (BullMQ: workers and submitters; bullmq is optional, loaded on
//   use), queue-task.ts (the worker's child process running one task).
// Guarantee: each task can be rerun and gives the same files; the outputs are those of one single run.
//
// `neardup dedup` as independent, idempotent, shardable stages over a work folder (docs/scale.md):
//
//   plan        the run's options, inputs and outputs            -> plan.json
//   signatures  input files of shard i/N -> band keys per band shard, validity, where each text is with its
//               lengths and CRC and the texts of inputs that cannot be read in place (--verify exact),
//               signatures (estimates)                          -> sig-I.{meta,docs,locs,texts,sigs,keys-K}
//   buckets     band shard k/M, from every signature shard's keys -> its candidate pairs, cut by the shard of
//               their first document                            -> bkt-K.cand-I, bkt-K.pairs
//   verify      the candidate pairs whose first document is in shard i/N, from every band shard, each once
//               -> the reported (verified) pairs                -> vfy-I.pairs
//   clusters    every verify shard's pairs -> each document's representative, --flags/--clusters/--pairs
//                                                                -> clusters.rep
//   filter      input files of shard i/N -> their kept lines (--kept-dir files, or a part of --kept)
//   kept        the parts -> --kept
//
// Each stage reads only finished files of the stages before it and writes its own outputs atomically
// (temporary name + rename), so a stage can run anywhere, any number of times. The native engine does the
// work: signing and band keys (LshDedup.sign), buckets and candidate pairs (LshDedup.addKeys + finish over a
// range of bands), and the decision on each pair (verifyPairs: the function a dedup session decides its pairs
// with, over the texts read in place: plain inputs' lines, or the signatures stage's copies); the clustering rule is the one dedup applies
// to the same pairs (lsh_dedup.cc: KeptFromPairs, the bucket holder rule, union-find), so the outputs are those
// of one `neardup dedup` run, byte for byte (tested).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError, nativeCall, nativeSync } from '../util/errors';
import { native, type NativeLshDedup } from '../native/addon';
import { resolveDedupOptions, clusterCounts, dedupLimits, droppedDocuments, documentTooLarge, type DedupOptions } from '../minhash/dedup';
import { idJson, readDocuments, type DocumentBatch, type ReadDocumentsOptions } from '../io/input';
import type { InputCompression } from '../io/documents';
import { version } from '../util/version';
import { ExactDedup, exactHashes, urlKeys, type ExactDedupOptions, type UrlRule } from '../exact/exact';
import {
  annotations, compressionOfName, copyDocuments, keptCompression, keptDirName, openDocumentOutput, planParquetOutputs, type DocumentOutput, type KeptInput,
} from '../io/kept';
import { ParquetOutput, type ParquetSchema } from '../io/parquet-out';
import { parquetFileSchema, parquetRowGroups } from '../io/parquet';
import { OutputFile, writeLinesTo } from '../io/files';

export const STAGES = ['signatures', 'buckets', 'verify', 'clusters', 'filter', 'kept'] as const;
export type StageName = typeof STAGES[number];

/** plan.json: everything a stage needs besides its shard. */
export interface StagePlan {
  version: 1;
  neardup: string;
  /** Absolute input paths, in corpus order. */
  files: string[];
  /** Signature and filter shards (N of --shard i/N) and band shards (M of buckets --shard k/M). */
  shards: number;
  bandShards: number;
  /** DedupOptions with the seed as a string. */
  options: Omit<DedupOptions, 'seed'> & { seed?: string };
  /** idField: each document's id is kept by the signatures stage (sig-I.ids) for the outputs that name ids. */
  input: Pick<ReadDocumentsOptions, 'field' | 'onBadLine' | 'idField'>;
  outputs: { flags?: string; clusters?: string; pairs?: string; kept?: string; keptDir?: string; removedIds?: string; removed?: string };
  /** dedup --drop-all: every member of a cluster of two or more is dropped, its kept document too. */
  dropAll?: boolean;
  /** dedup --annotate: the documents written carry their cluster, its size and (with ids) the kept one's id. */
  annotate?: boolean;
  /**
   * `neardup exact`'s plan: what is compared (lib/exact). Its stages are signatures (the texts' 128-bit hashes,
   * sig-I.hash), clusters (the first copy of each hash), filter and kept; buckets and verify have no tasks, and
   * of `options` only memory and tmp are read.
   */
  exact?: { options: Omit<ExactDedupOptions, 'memory' | 'tmp' | 'indexOut'>; urlRules?: UrlRule[] };
}

// ---- the common header (docs/FORMAT.md section 3), written and checked here for the stage files ----

const MAGIC = Buffer.from([0x4e, 0x44, 0x55, 0x50, 0x0d, 0x0a, 0x1a, 0x0a]);
const HEADER = 64;

function crc(parts: Uint8Array[]): number {
  let c = 0;
  for (const p of parts) c = native.crc32c(p, c);
  return c;
}

function header(kind: string, version: number, flags: number, params: [number, number], payloadSize: number, payloadCrc: number): Buffer {
  const h = Buffer.alloc(HEADER);
  MAGIC.copy(h, 0);
  h.write(kind, 8, 4, 'latin1');
  h.writeUInt32LE(version, 12);
  h.writeUInt32LE(0x01020304, 16);
  h.writeUInt32LE(HEADER, 20);
  h.writeBigUInt64LE(BigInt(payloadSize), 24);
  h.writeUInt32LE(payloadCrc >>> 0, 32);
  h.writeUInt32LE(flags >>> 0, 36);
  h.writeBigUInt64LE(BigInt(params[0]), 40);
  h.writeBigUInt64LE(BigInt(params[1]), 48);
  h.writeUInt32LE(native.crc32c(h.subarray(0, 60)) >>> 0, 60);
  return h;
}

const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const byteLength = (parts: Buffer[]) => parts.reduce((s, x) => s + x.length, 0);

/** The version of each stage file kind this build writes and reads. */
const VERSIONS: Record<string, number> = { SGID: 1, SGKY: 1, SGDC: 4, SGLC: 1, SGTX: 2, SGSG: 1, SGMT: 2, BKCD: 1, BKPR: 2, VFPR: 1, CLRP: 1, SGXH: 1 };

/** Writes a stage file atomically: header (kind, flags = plan id, params) + the payload parts. */
async function writeStageFile(file: string, kind: string, planId: number, params: [number, number], parts: ArrayBufferView[]): Promise<number> {
  const bufs = parts.map(bytesOf);
  const size = bufs.reduce((s, b) => s + b.length, 0);
  const out = OutputFile.open(file);
  try {
    await out.write(header(kind, VERSIONS[kind], planId, params, size, crc(bufs)));
    for (const b of bufs) await out.write(b);
    await out.commit();
  } finally {
    out.abort();
  }
  return HEADER + size;
}

interface StageFile {
  params: [number, number];
  payload: Buffer;
}

/** A stage input that is not there: the error names the stage that writes it. */
function missing(file: string, what: string, e: unknown): NeardupError {
  const code = (e as NodeJS.ErrnoException).code;
  return new NeardupError('ERR_NEARDUP_IO',
    `${what}: '${file}' ${code === 'ENOENT' ? 'is missing (run that stage first)' : `cannot be read: ${(e as Error).message}`}`, { file });
}

/**
 * Checks a stage file's header (`data`: at least its first 64 bytes; `size`: the file's size) and returns
 * its params and payload CRC. `what` names the stage output in errors ("signatures shard 2/3").
 */
function checkHeader(data: Buffer, size: number, file: string, kind: string, planId: number, what: string): { params: [number, number]; payloadCrc: number } {
  const bad = (why: string, offset: number) =>
    new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' is corrupt: ${why}`, { file, offset });
  if (size < HEADER) throw bad(`${size} bytes, shorter than the 64-byte header`, 0);
  if (!data.subarray(0, 8).equals(MAGIC)) throw bad('not a neardup file (magic)', 0);
  if (data.toString('latin1', 8, 12) !== kind) throw bad(`kind '${data.toString('latin1', 8, 12)}', expected '${kind}'`, 8);
  if (data.readUInt32LE(16) !== 0x01020304) throw bad('byte order mark', 16);
  if ((native.crc32c(data.subarray(0, 60)) >>> 0) !== data.readUInt32LE(60)) throw bad('header checksum mismatch', 60);
  if (data.readUInt32LE(12) !== VERSIONS[kind]) throw bad(`version ${data.readUInt32LE(12)}, this build reads ${VERSIONS[kind]} (rerun that stage)`, 12);
  if (data.readUInt32LE(20) !== HEADER) throw bad('header size', 20);
  if (data.readUInt32LE(56) !== 0) throw bad('reserved word', 56);
  const payload = Number(data.readBigUInt64LE(24));
  if (payload !== size - HEADER) throw bad(`payload of ${size - HEADER} bytes, the header says ${payload}`, 24);
  if (data.readUInt32LE(36) !== planId)
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' was written for another plan (plan.json changed; rerun that stage)`, { file });
  return { params: [Number(data.readBigUInt64LE(40)), Number(data.readBigUInt64LE(48))], payloadCrc: data.readUInt32LE(32) };
}

/** Reads a whole stage file and checks its header and payload CRC. */
function readStageFile(file: string, kind: string, planId: number, what: string): StageFile {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (e) {
    throw missing(file, what, e);
  }
  const h = checkHeader(data, data.length, file, kind, planId, what);
  const payload = data.subarray(HEADER);
  if ((native.crc32c(payload) >>> 0) !== h.payloadCrc)
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' is corrupt: payload checksum mismatch`, { file, offset: 32 });
  return { params: h.params, payload };
}

/** Checks the header of a stage file read in place by others (sig-I.texts, sig-I.locs): its params and payload CRC. */
function statStageFile(file: string, kind: string, planId: number, what: string): { params: [number, number]; payloadCrc: number } {
  const head = Buffer.alloc(HEADER);
  let size: number;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      size = fs.fstatSync(fd).size;
      fs.readSync(fd, head, 0, HEADER, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    throw missing(file, what, e);
  }
  return checkHeader(head, size, file, kind, planId, what);
}

/** A typed array over a copy of bytes (aligned). */
function typed<T>(Ctor: { new(b: ArrayBuffer): T }, b: Buffer): T {
  const ab = new ArrayBuffer(b.length);
  new Uint8Array(ab).set(b);
  return new Ctor(ab);
}

// ---- plan and shards ----

export function planPath(work: string): string {
  return path.join(work, 'plan.json');
}

export interface LoadedPlan {
  plan: StagePlan;
  id: number;
  work: string;
}

export function loadPlan(work: string): LoadedPlan {
  const file = planPath(work);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `'${file}' cannot be read (run 'neardup dedup-stage plan' first): ${(e as Error).message}`, { file });
  }
  let plan: StagePlan;
  try {
    plan = JSON.parse(text) as StagePlan;
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is not valid JSON: ${(e as Error).message}`, { file });
  }
  if (plan === null || typeof plan !== 'object' || plan.version !== 1 || !Array.isArray(plan.files) || !(plan.shards >= 1) || !(plan.bandShards >= 1) ||
      plan.outputs === null || typeof plan.outputs !== 'object')
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is not a dedup stage plan of version 1`, { file });
  // the final outputs the stage tasks write: absolute paths outside the work folder (as the CLI checked them)
  for (const [k, v] of Object.entries(plan.outputs)) {
    const rel = typeof v === 'string' ? path.relative(path.resolve(work), v) : '';
    if (typeof v !== 'string' || !path.isAbsolute(v) || rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel)))
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}': the output ${k} ${JSON.stringify(v)} is not an absolute path outside the work folder`, { file });
  }
  return { plan, id: native.crc32c(Buffer.from(text)) >>> 0, work };
}

export async function writePlan(work: string, plan: StagePlan): Promise<void> {
  fs.mkdirSync(work, { recursive: true });
  const out = OutputFile.open(planPath(work));
  try {
    await out.write(JSON.stringify(plan, null, 2) + '\n');
    await out.commit();
  } finally {
    out.abort();
  }
}

/** DedupOptions of a plan (seed back to a bigint). */
export function planOptions(plan: StagePlan): DedupOptions {
  const { seed, ...o } = plan.options;
  return { ...o, ...(seed !== undefined ? { seed: BigInt(seed) } : {}) };
}

/** Input files [lo, hi) of signature/filter shard i of n: contiguous, so documents stay in corpus order. */
export function shardFiles(fileCount: number, i: number, n: number): [number, number] {
  return [Math.floor((i * fileCount) / n), Math.floor(((i + 1) * fileCount) / n)];
}

/** Bands [lo, hi) of band shard k of m. */
export function shardBands(b: number, k: number, m: number): [number, number] {
  return [Math.floor((k * b) / m), Math.floor(((k + 1) * b) / m)];
}

const sigName = (work: string, i: number, ext: string) => path.join(work, `sig-${i}.${ext}`);
const bktName = (work: string, k: number) => path.join(work, `bkt-${k}.pairs`);
const candName = (work: string, k: number, i: number) => path.join(work, `bkt-${k}.cand-${i}`);
const vfyName = (work: string, i: number) => path.join(work, `vfy-${i}.pairs`);
const repName = (work: string) => path.join(work, 'clusters.rep');
export const keptPartName = (work: string, i: number) => path.join(work, `kept-${i}.part`);
export const removedPartName = (work: string, i: number) => path.join(work, `removed-${i}.part`);

function needsEstimates(o: DedupOptions, plan: StagePlan): boolean {
  return o.verify === 'estimate' || plan.outputs.pairs !== undefined;
}

interface ShardMeta {
  docs: number;
  bad: number;
  bytes: number;
  /** --verify exact: text bytes copied to sig-I.texts (the documents of inputs not read in place). */
  textBytes: number;
  files: ShardFile[];
}

interface ShardFile {
  file: string;
  format: KeptInput['format'];
  compression: KeptInput['compression'];
  count: number;
  /** The input's size and modification time (ns, as a string) when the signatures stage read it. */
  size: number;
  mtimeNs: string;
  /** --verify exact: its texts are read again from its lines (plain JSONL), not from sig-I.texts. */
  inPlace: boolean;
}

/** An input's size and modification time now. */
function inputStat(file: string): { size: number; mtimeNs: string } {
  try {
    const st = fs.statSync(file, { bigint: true });
    return { size: Number(st.size), mtimeNs: String(st.mtimeNs) };
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read the input '${file}': ${(e as Error).message}`, { file });
  }
}

/**
 * The inputs a later stage reads again (verify: the lines of plain inputs; filter: every input) must be those the
 * signatures stage read: same size and modification time (each text read again is also checked by its CRC).
 */
function checkInputsUnchanged(files: ShardFile[], what: string): void {
  for (const f of files) {
    const now = inputStat(f.file);
    if (now.size !== f.size || now.mtimeNs !== f.mtimeNs) {
      throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${what}: the input '${f.file}' has changed since the signatures stage ` +
        `(${now.size !== f.size ? `${now.size} bytes, was ${f.size}` : 'modified'}); rerun the stages from signatures`, { file: f.file });
    }
  }
}

function readMeta(lp: LoadedPlan, i: number): ShardMeta {
  const f = readStageFile(sigName(lp.work, i, 'meta'), 'SGMT', lp.id, `signatures shard ${i}/${lp.plan.shards}`);
  return JSON.parse(f.payload.toString('utf8')) as ShardMeta;
}

/** Every signatures shard's meta, and the number of its first document. */
function readMetas(lp: LoadedPlan): { metas: ShardMeta[]; first: number[]; documents: number } {
  const metas: ShardMeta[] = [], first: number[] = [];
  let documents = 0;
  for (let i = 0; i < lp.plan.shards; i++) {
    metas.push(readMeta(lp, i));
    first.push(documents);
    documents += metas[i].docs;
  }
  return { metas, first, documents };
}

/** What a stage did: bytes read and written (stage files; inputs and final outputs not counted). */
export interface StageReport {
  stage: StageName;
  shard: string;
  readBytes: number;
  writtenBytes: number;
  seconds: number;
  /** CPU seconds of this process (every thread) during the task: the task's own work when it runs alone. */
  cpuSeconds?: number;
}

/** The tasks of a stage: input-file shards, band shards, or one. */
export function stageShards(plan: StagePlan, stage: StageName): number {
  if (plan.exact && (stage === 'buckets' || stage === 'verify')) return 0;
  return stage === 'buckets' ? plan.bandShards : stage === 'signatures' || stage === 'verify' || stage === 'filter' ? plan.shards : 1;
}

// ---- signatures ----

/** sig-I.docs: each document's validity. */
function readDocsFile(lp: LoadedPlan, i: number, n: number): { valid: Uint8Array; size: number } {
  const what = `signatures shard ${i}/${lp.plan.shards}`;
  const file = sigName(lp.work, i, 'docs');
  const df = readStageFile(file, 'SGDC', lp.id, what);
  if (df.params[0] !== n || df.payload.length !== n)
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' does not match its meta (${n} documents)`, { file });
  return { valid: df.payload, size: df.payload.length + HEADER };
}

/**
 * Records of sig-I.locs per block (docs/FORMAT.md section 13): a verify task reads only its documents' blocks.
 * Small (1.25 KiB), so that a task whose partners are spread over every shard reads little more than their records;
 * the table of block CRCs costs 4 bytes per 64 documents.
 */
const LOC_BLOCK = 64;
const LOC_BYTES = 20;

/** Copies bands [b0, b1) of each document's b keys (n x b) out (u64 moved as two u32: no BigInt). */
function bandRange(keys: BigUint64Array, n: number, b: number, b0: number, b1: number): BigUint64Array {
  if (b0 === 0 && b1 === b) return keys;
  const bk = b1 - b0;
  const out = new BigUint64Array(n * bk);
  const src = new Uint32Array(keys.buffer, keys.byteOffset, keys.length * 2), dst = new Uint32Array(out.buffer);
  for (let d = 0, at = 0; d < n; d++) {
    for (let x = 2 * (d * b + b0), end = 2 * (d * b + b1); x < end; x++) dst[at++] = src[x];
  }
  return out;
}

/**
 * The signatures stage's record of a batch read (dedup's and exact's plans): the shard's counts and its input's
 * format, the batch's ids (--id-field: each as dedup writes it, JSON, one a line) pushed to `ids`, and each
 * document's validity for sig-I.docs: 1 a document, 0 a skipped bad line, 2 a bad line read as an empty
 * document (a document for the engine, never copied by filter).
 */
function recordBatch(plan: StagePlan, meta: ShardMeta, batch: DocumentBatch, ids: Buffer[]): Uint8Array {
  const v = batch.valid ? Uint8Array.from(batch.valid) : new Uint8Array(batch.count).fill(1);
  if (plan.input.onBadLine === 'empty') for (const d of batch.bad.keys()) v[d] = 2;
  if (plan.input.idField !== undefined) {
    let text = '';
    for (let d = 0; d < batch.count; d++) text += (batch.ids ? idJson(batch.ids, d) : 'null') + '\n';
    ids.push(Buffer.from(text, 'utf8'));
  }
  const f = meta.files[batch.fileIndex];
  f.format = batch.format;
  f.compression = batch.compression;
  f.count += batch.count;
  meta.docs += batch.count;
  meta.bad += batch.bad.size;
  return v;
}

/** `neardup exact`'s signatures stage: each document's 128-bit hash and whether it is hashed (sig-I.hash). */
async function runExactHashes(lp: LoadedPlan, i: number): Promise<StageReport> {
  const start = Date.now();
  const { plan, work } = lp;
  const ex = plan.exact!;
  const rules = ex.urlRules ? new Set(ex.urlRules) : undefined;
  const [lo, hi] = shardFiles(plan.files.length, i, plan.shards);
  const files = plan.files.slice(lo, hi);
  const meta: ShardMeta = {
    docs: 0, bad: 0, bytes: 0, textBytes: 0,
    files: files.map((file) => ({ file, format: 'jsonl', compression: 'none', count: 0, ...inputStat(file), inPlace: false })),
  };
  const hashes: BigUint64Array[] = [], hashed: Uint8Array[] = [], valid: Uint8Array[] = [], idParts: Buffer[] = [];
  if (files.length) {
    for await (const batch of readDocuments(files, { ...plan.input, onProgress: (n) => { meta.bytes = n; } })) {
      // as `neardup exact` hashes them: the keys as URLs (--url-normalize), the texts as ExactDedup does
      const texts = rules ? urlKeys(batch.packed, batch.count, ex.options.unicode, rules) : batch.packed;
      hashes.push(await exactHashes(texts, rules ? { ...ex.options, unicode: 'none' } : ex.options));
      // hashed as the single run hashes them (batch.valid); sig-I.docs also marks the empty bad lines
      hashed.push(batch.valid ? Uint8Array.from(batch.valid) : new Uint8Array(batch.count).fill(1));
      valid.push(recordBatch(plan, meta, batch, idParts));
    }
  }
  checkInputsUnchanged(meta.files, `signatures shard ${i}/${plan.shards}`);
  let written = await writeStageFile(sigName(work, i, 'hash'), 'SGXH', lp.id, [meta.docs, 0], [...hashes, ...hashed]);
  written += await writeStageFile(sigName(work, i, 'docs'), 'SGDC', lp.id, [meta.docs, 0], valid);
  if (plan.input.idField !== undefined) written += await writeStageFile(sigName(work, i, 'ids'), 'SGID', lp.id, [meta.docs, byteLength(idParts)], idParts);
  written += await writeStageFile(sigName(work, i, 'meta'), 'SGMT', lp.id, [meta.docs, 0], [Buffer.from(JSON.stringify(meta))]);
  return { stage: 'signatures', shard: `${i}/${plan.shards}`, readBytes: meta.bytes, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
}


export async function runSignatures(lp: LoadedPlan, i: number): Promise<StageReport> {
  if (lp.plan.exact) return runExactHashes(lp, i);
  const start = Date.now();
  const { plan, work } = lp;
  const o = planOptions(plan);
  const res = resolveDedupOptions(o);
  const [lo, hi] = shardFiles(plan.files.length, i, plan.shards);
  const files = plan.files.slice(lo, hi);
  const exact = res.settings.verify === 'exact';
  const withSigs = needsEstimates({ ...o, verify: res.settings.verify }, plan);
  const handle: NativeLshDedup = nativeSync(() => new native.LshDedup({ ...res.native, verify: 'none', pairs: false, memory: 0 }));
  const m = plan.bandShards, b = res.b;
  const keyParts: BigUint64Array[][] = Array.from({ length: m }, () => []);
  const sigParts: Uint32Array[] = [], valid: Uint8Array[] = [], locs: Buffer[] = [], copiedCrcs: Uint32Array[] = [];
  // --id-field: each document's id as dedup writes it (JSON: a string, an integer or null), one a line
  const idParts: Buffer[] = [];
  const meta: ShardMeta = {
    docs: 0, bad: 0, bytes: 0, textBytes: 0,
    files: files.map((file) => ({ file, format: 'jsonl', compression: 'none', count: 0, ...inputStat(file), inPlace: false })),
  };
  const limits = dedupLimits({ profile: res.settings.profile, verify: res.settings.verify, memory: o.memory });
  // --verify exact: each document's record in sig-I.locs (where its text is, its lengths and CRC-32C). The texts
  // of plain JSONL inputs stay where they are (verify reads their lines again); the others are copied to
  // sig-I.texts as they are signed (header last).
  let texts: OutputFile | undefined;
  try {
    type Signed = { batch: DocumentBatch; valid: Uint8Array; signed: Promise<{ signatures: Uint32Array; keys: BigUint64Array; crcs?: Uint32Array }> };
    const take = async ({ batch, valid: v, signed }: Signed) => {
      const r = await signed;
      for (let k = 0; k < m; k++) {
        const [b0, b1] = shardBands(b, k, m);
        keyParts[k].push(bandRange(r.keys, batch.count, b, b0, b1));
      }
      if (withSigs) sigParts.push(r.signatures);
      valid.push(v);
      if (!exact) return;
      const off = batch.packed.offsets, n = batch.count, lines = batch.lines;
      const rec = Buffer.allocUnsafe(n * LOC_BYTES);
      for (let d = 0; d < n; d++) {
        const len = off[d + 1] - off[d];
        const at = lines ? lines.start + lines.lineAt[d] : meta.textBytes + off[d] - off[0];
        rec.writeUInt32LE(at % 0x100000000, d * LOC_BYTES);
        rec.writeUInt32LE(Math.floor(at / 0x100000000), d * LOC_BYTES + 4);
        // a bad line read as an empty document (--on-bad-line empty): no bytes to read again (its line may hold a
        // text, e.g. a line bad only for its missing --id-field; the parser would find that text)
        rec.writeUInt32LE(lines ? (batch.bad.has(d) ? 0 : lines.lineLen[d]) : len, d * LOC_BYTES + 8);
        rec.writeUInt32LE(len, d * LOC_BYTES + 12);
        rec.writeUInt32LE(r.crcs![d], d * LOC_BYTES + 16);
      }
      locs.push(rec);
      if (lines) return;
      if (!texts) {
        texts = OutputFile.open(sigName(work, i, 'texts'));
        await texts.write(Buffer.alloc(HEADER));
      }
      copiedCrcs.push(r.crcs!);
      const data = batch.packed.data, bytes = off[n] - off[0];
      meta.textBytes += bytes;
      await texts.write(Buffer.from(data.buffer, data.byteOffset + off[0], bytes));
      await texts.flush();  // written before the batch's buffers can go
    };
    // the next batch is read and parsed (native pool) while the pool signs the previous one
    const pending: Signed[] = [];
    if (files.length) {
      for await (const batch of readDocuments(files, { ...plan.input, lines: exact, onProgress: (n) => { meta.bytes = n; } })) {
        const off = batch.packed.offsets;
        for (let d = 0; d < batch.count; d++) {
          const len = off[d + 1] - off[d];
          if (len > limits.documentBytes) throw documentTooLarge(`${batch.file}:${batch.firstLine + d}: `, len, { profile: res.settings.profile, verify: res.settings.verify, memory: o.memory });
        }
        const signed = nativeCall(handle.sign(batch.packed, batch.valid ?? null, exact));
        signed.catch(() => undefined);  // awaited in take()
        pending.push({ batch, valid: recordBatch(plan, meta, batch, idParts), signed });
        meta.files[batch.fileIndex].inPlace = exact && batch.lines !== undefined;
        if (pending.length >= 2) await take(pending.shift()!);
      }
    }
    while (pending.length) await take(pending.shift()!);
    // an input written to while it was read: its lines could not be found again
    checkInputsUnchanged(meta.files, `signatures shard ${i}/${plan.shards}`);
  } catch (e) {
    texts?.abort();
    throw e;
  } finally {
    handle.close();
  }
  let written = 0;
  if (texts) {
    try {
      // the payload CRC of sig-I.texts is the CRC-32C of its texts' CRCs: any text is checked alone
      await texts.overwriteStart(header('SGTX', VERSIONS.SGTX, lp.id, [meta.docs, meta.textBytes], meta.textBytes, crc(copiedCrcs.map(bytesOf))));
      await texts.commit();
    } finally {
      texts.abort();
    }
    written += HEADER + meta.textBytes;
  } else {
    fs.rmSync(sigName(work, i, 'texts'), { force: true });  // of an earlier run
  }
  for (let k = 0; k < m; k++) {
    const [b0, b1] = shardBands(b, k, m);
    written += await writeStageFile(sigName(work, i, `keys-${k}`), 'SGKY', lp.id, [meta.docs, b1 - b0], keyParts[k]);
  }
  written += await writeStageFile(sigName(work, i, 'docs'), 'SGDC', lp.id, [meta.docs, 0], valid);
  if (exact) {
    // the records in blocks, each with its CRC-32C; the payload CRC is that of the block CRCs
    const recs = Buffer.concat(locs, meta.docs * LOC_BYTES);
    const blocks = new Uint32Array(Math.ceil(meta.docs / LOC_BLOCK));
    for (let k = 0; k < blocks.length; k++) blocks[k] = native.crc32c(recs.subarray(k * LOC_BLOCK * LOC_BYTES, (k + 1) * LOC_BLOCK * LOC_BYTES)) >>> 0;
    const table = bytesOf(blocks);
    const out = OutputFile.open(sigName(work, i, 'locs'));
    try {
      await out.write(header('SGLC', VERSIONS.SGLC, lp.id, [meta.docs, LOC_BLOCK], recs.length + table.length, native.crc32c(table)));
      await out.write(recs);
      await out.write(table);
      await out.commit();
    } finally {
      out.abort();
    }
    written += HEADER + recs.length + table.length;
  }
  if (withSigs) written += await writeStageFile(sigName(work, i, 'sigs'), 'SGSG', lp.id, [meta.docs, res.numPerm], sigParts);
  if (plan.input.idField !== undefined) written += await writeStageFile(sigName(work, i, 'ids'), 'SGID', lp.id, [meta.docs, byteLength(idParts)], idParts);
  // the meta last: it names what the shard holds
  written += await writeStageFile(sigName(work, i, 'meta'), 'SGMT', lp.id, [meta.docs, 0], [Buffer.from(JSON.stringify(meta))]);
  return { stage: 'signatures', shard: `${i}/${plan.shards}`, readBytes: meta.bytes, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
}

// ---- buckets ----

/** Chunks of documents fed to the native session at once. */
const CHUNK = 1 << 16;

/** The first index of sorted (a << 32 | b) pairs whose a is >= doc. */
function firstPairOf(cand: BigUint64Array, doc: number): number {
  const key = BigInt(doc) << 32n;
  let lo = 0, hi = cand.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cand[mid] < key) lo = mid + 1; else hi = mid;
  }
  return lo;
}

export async function runBuckets(lp: LoadedPlan, k: number): Promise<StageReport> {
  const start = Date.now();
  const { plan, work } = lp;
  const o = planOptions(plan);
  const res = resolveDedupOptions(o);
  const { verify, clustering } = res.settings;
  const [b0, b1] = shardBands(res.b, k, plan.bandShards);
  const bk = b1 - b0;
  let read = 0;
  // candidate pairs only: the verify stage decides them; unverified with doubri's rule, the large buckets too
  const groups = verify === 'none' && clustering === 'kept';
  const handle: NativeLshDedup = nativeSync(() => new native.LshDedup({
    ...res.native, b: bk, verify: 'none', pairs: false, candidates: true, groups, clustering: groups ? 'kept' : 'components',
  }));
  const { metas, first } = readMetas(lp);
  let r;
  try {
    for (let i = 0; i < plan.shards; i++) {
      const what = `signatures shard ${i}/${plan.shards}`;
      const n = metas[i].docs;
      const kf = readStageFile(sigName(work, i, `keys-${k}`), 'SGKY', lp.id, what);
      if (kf.params[0] !== n || kf.params[1] !== bk || kf.payload.length !== n * bk * 8)
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${sigName(work, i, `keys-${k}`)}' holds ${kf.params[0]} x ${kf.params[1]} keys, expected ${n} x ${bk}`);
      const keys = typed(BigUint64Array, kf.payload);
      const docs = readDocsFile(lp, i, n);
      // bad lines read as empty documents (2) are documents here
      const valid = docs.valid.includes(2) ? docs.valid.map((x) => (x === 0 ? 0 : 1)) : docs.valid;
      read += kf.payload.length + HEADER + docs.size;
      for (let d0 = 0; d0 < n; d0 += CHUNK) {
        const d1 = Math.min(n, d0 + CHUNK);
        await nativeCall(handle.addKeys(keys.subarray(d0 * bk, d1 * bk), valid.subarray(d0, d1), null, null));
      }
    }
    r = await nativeCall(handle.finish());
  } finally {
    handle.close();
  }
  // the candidates cut by the signatures shard of their first document: verify shard i reads bkt-*.cand-i
  let written = 0;
  for (let i = 0; i < plan.shards; i++) {
    const part = r.candidates.subarray(firstPairOf(r.candidates, first[i]), firstPairOf(r.candidates, first[i] + metas[i].docs));
    written += await writeStageFile(candName(work, k, i), 'BKCD', lp.id, [part.length, 0], [part]);
  }
  const nc = r.candidates.length;
  const table = new Float64Array([nc, r.groupEnds.length, r.groupDocs.length, r.spilledBytes, r.runs]);
  written += await writeStageFile(bktName(work, k), 'BKPR', lp.id, [nc, 0], [table, r.groupEnds, r.groupDocs]);
  return { stage: 'buckets', shard: `${k}/${plan.bandShards}`, readBytes: read, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
}

interface BucketGroups {
  candidates: number;
  groupEnds: BigUint64Array;
  groupDocs: Uint32Array;
  spilled: number;
  runs: number;
}

/** A stage file whose payload starts with `fields` f64 counts: the counts, the rest, and the error for sizes that do not add up. */
function readCounted(file: string, kind: string, lp: LoadedPlan, what: string, fields: number) {
  const f = readStageFile(file, kind, lp.id, what);
  const corrupt = () => new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' is corrupt: section sizes do not add up`, { file });
  if (f.payload.length < fields * 8) throw corrupt();
  return { params: f.params, counts: Array.from(typed(Float64Array, f.payload.subarray(0, fields * 8))), rest: f.payload.subarray(fields * 8), corrupt };
}

function readBuckets(lp: LoadedPlan, k: number): BucketGroups {
  const { params, counts: [nc, ng, ngd, spilled, runs], rest, corrupt } =
    readCounted(bktName(lp.work, k), 'BKPR', lp, `buckets shard ${k}/${lp.plan.bandShards}`, 5);
  if (nc !== params[0] || rest.length !== ng * 8 + ngd * 4) throw corrupt();
  return { candidates: nc, groupEnds: typed(BigUint64Array, rest.subarray(0, ng * 8)), groupDocs: typed(Uint32Array, rest.subarray(ng * 8)), spilled, runs };
}

// ---- verify ----

export async function runVerify(lp: LoadedPlan, i: number): Promise<StageReport> {
  const start = Date.now();
  const { plan, work } = lp;
  const o = planOptions(plan);
  const res = resolveDedupOptions(o);
  const verify = res.settings.verify;
  const withSigs = needsEstimates({ ...o, verify }, plan);
  const { metas, first } = readMetas(lp);
  let read = 0;
  // the candidate pairs whose first document is in shard i, from every band range
  const cands: BigUint64Array[] = [];
  for (let k = 0; k < plan.bandShards; k++) {
    const file = candName(work, k, i);
    const f = readStageFile(file, 'BKCD', lp.id, `buckets shard ${k}/${plan.bandShards}`);
    if (f.payload.length !== f.params[0] * 8)
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `buckets shard ${k}/${plan.bandShards}: '${file}' is corrupt: ${f.payload.length} bytes for ${f.params[0]} pairs`, { file });
    cands.push(typed(BigUint64Array, f.payload));
    read += f.payload.length + HEADER;
  }
  // the shards their documents are in (the first documents are in shard i; their partners in it or later)
  const shards = new Set<number>();
  if (cands.some((c) => c.length > 0)) {
    shards.add(i);
    const shardOf = (d: number) => {
      let lo = i, hi = plan.shards - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (first[mid] <= d) lo = mid; else hi = mid - 1;
      }
      return lo;
    };
    for (const c of cands) {
      const w = new Uint32Array(c.buffer, c.byteOffset, c.length * 2);  // b: the low word
      for (let x = 0; x < c.length; x++) {
        const s = shardOf(w[2 * x]);
        if (!shards.has(s)) shards.add(s);
      }
    }
  }
  const used = [...shards].sort((a, b) => a - b);
  type Texts = NonNullable<Parameters<typeof native.verifyPairs>[2]>;
  let texts: Texts | null = null;
  if (verify === 'exact') {
    texts = [];
    for (const s of used) {
      const what = `signatures shard ${s}/${plan.shards}`;
      const meta = metas[s];
      const locs = sigName(work, s, 'locs');
      const lh = statStageFile(locs, 'SGLC', lp.id, what);
      if (lh.params[0] !== meta.docs || !(lh.params[1] >= 1))
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${locs}' holds ${lh.params[0]} records in blocks of ${lh.params[1]}; its meta says ${meta.docs} documents`, { file: locs });
      read += HEADER;
      let textsFile: string | null = null;
      if (meta.textBytes > 0) {
        textsFile = sigName(work, s, 'texts');
        const [n, bytes] = statStageFile(textsFile, 'SGTX', lp.id, what).params;
        if (n !== meta.docs || bytes !== meta.textBytes)
          throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${textsFile}' holds ${n} documents, ${bytes} bytes of text; its meta says ${meta.docs}, ${meta.textBytes}`, { file: textsFile });
        read += HEADER;
      }
      checkInputsUnchanged(meta.files.filter((f) => f.inPlace), `verify shard ${i}/${plan.shards}`);
      let d = first[s];
      const inputs = meta.files.map((f) => {
        const inp = { path: f.file, first: d, count: f.count, inPlace: f.inPlace };
        d += f.count;
        return inp;
      }).filter((f) => f.count > 0);
      texts.push({ first: first[s], n: meta.docs, locs, locsCrc: lh.payloadCrc, block: lh.params[1], texts: textsFile, textsBytes: meta.textBytes, inputs });
    }
  }
  let sigs: { first: number; data: Uint32Array }[] | null = null;
  if (withSigs) {
    sigs = [];
    for (const s of used) {
      const what = `signatures shard ${s}/${plan.shards}`;
      const sf = readStageFile(sigName(work, s, 'sigs'), 'SGSG', lp.id, what);
      if (sf.params[0] !== metas[s].docs || sf.params[1] !== res.numPerm || sf.payload.length !== metas[s].docs * res.numPerm * 4)
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${sigName(work, s, 'sigs')}' does not match its meta`);
      sigs.push({ first: first[s], data: typed(Uint32Array, sf.payload) });
      read += sf.payload.length + HEADER;
    }
  }
  // no candidates (e.g. an input-file shard without files): nothing to decide, no texts or signatures to read
  const r = cands.every((c) => c.length === 0)
    ? { candidatePairs: 0, pairA: new Uint32Array(0), pairB: new Uint32Array(0), pairEstimate: new Float32Array(0), pairExact: new Float32Array(0), textBytes: 0 }
    : await nativeCall(native.verifyPairs({ ...res.native, textSkip: HEADER, field: plan.input.field }, cands, texts, sigs));
  read += r.textBytes;
  const np = r.pairA.length;
  const table = new Float64Array([r.candidatePairs, np, r.pairEstimate.length, r.pairExact.length]);
  const written = await writeStageFile(vfyName(work, i), 'VFPR', lp.id, [r.candidatePairs, np], [table, r.pairA, r.pairB, r.pairEstimate, r.pairExact]);
  return { stage: 'verify', shard: `${i}/${plan.shards}`, readBytes: read, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
}

interface VerifiedPairs {
  candidates: number;
  pairA: Uint32Array;
  pairB: Uint32Array;
  est: Float32Array;
  exact: Float32Array;
}

function readVerified(lp: LoadedPlan, i: number): VerifiedPairs {
  const { params, counts: [nc, np, ne, nx], rest, corrupt } = readCounted(vfyName(lp.work, i), 'VFPR', lp, `verify shard ${i}/${lp.plan.shards}`, 4);
  if (nc !== params[0] || np !== params[1] || (ne !== 0 && ne !== np) || (nx !== 0 && nx !== np) || rest.length !== np * 8 + ne * 4 + nx * 4) throw corrupt();
  let at = 0;
  const take = (bytes: number) => rest.subarray(at, (at += bytes));
  return {
    candidates: nc, pairA: typed(Uint32Array, take(np * 4)), pairB: typed(Uint32Array, take(np * 4)),
    est: typed(Float32Array, take(ne * 4)), exact: typed(Float32Array, take(nx * 4)),
  };
}

export interface ClustersSummary {
  documents: number;
  bad_lines: number;
  input_bytes: number;
  duplicates: number;
  /** Documents dropped: the duplicates, and with dropAll their kept documents too (absent in older files: the duplicates). */
  dropped?: number;
  clusters: number;
  candidate_pairs: number;
  reported_pairs: number;
  spilled_bytes: number;
  runs: number;
}

// ---- clusters ----

/** `neardup exact`'s clusters stage: every shard's hashes in corpus order through one ExactDedup. */
async function runExactClusters(lp: LoadedPlan): Promise<StageReport> {
  const start = Date.now();
  const { plan, work } = lp;
  let n = 0, bad = 0, bytes = 0, read = 0;
  const ex = new ExactDedup({ memory: plan.options.memory ?? 0, tmp: plan.options.tmp });
  let res;
  try {
    for (let i = 0; i < plan.shards; i++) {
      const m = readMeta(lp, i);
      const file = sigName(work, i, 'hash');
      const f = readStageFile(file, 'SGXH', lp.id, `signatures shard ${i}/${plan.shards}`);
      if (f.params[0] !== m.docs || f.payload.length !== 17 * m.docs)
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `signatures shard ${i}/${plan.shards}: '${file}' does not match its meta (${m.docs} documents)`, { file });
      await ex.addHashes(typed(BigUint64Array, f.payload.subarray(0, 16 * m.docs)), f.payload.subarray(16 * m.docs));
      read += f.payload.length + HEADER;
      n += m.docs;
      bad += m.bad;
      bytes += m.bytes;
    }
    res = await ex.finish();
  } finally {
    ex.close();
  }
  const written = await finishClusters(lp, res.representative, { documents: n, bad_lines: bad, input_bytes: bytes, candidate_pairs: 0, reported_pairs: 0, spilled_bytes: res.spilledBytes, runs: res.runs });
  return { stage: 'clusters', shard: '0/1', readBytes: read + written.read, writtenBytes: written.written, seconds: (Date.now() - start) / 1000 };
}

export async function runClusters(lp: LoadedPlan): Promise<StageReport> {
  if (lp.plan.exact) return runExactClusters(lp);
  const start = Date.now();
  const { plan, work } = lp;
  const o = planOptions(plan);
  const res = resolveDedupOptions(o);
  const { clustering } = res.settings;
  let n = 0, bad = 0, bytes = 0, read = 0;
  for (let i = 0; i < plan.shards; i++) {
    const m = readMeta(lp, i);
    n += m.docs;
    bad += m.bad;
    bytes += m.bytes;
  }
  const shards: BucketGroups[] = [];
  for (let k = 0; k < plan.bandShards; k++) {
    shards.push(readBuckets(lp, k));
    read += fs.statSync(bktName(work, k)).size;
  }
  // the reported pairs, each once, sorted by (a, b): the verify shards hold ascending ranges of a
  const verified: VerifiedPairs[] = [];
  for (let i = 0; i < plan.shards; i++) {
    verified.push(readVerified(lp, i));
    read += fs.statSync(vfyName(work, i)).size;
  }
  const candidates = verified.reduce((s, v) => s + v.candidates, 0);
  const np = verified.reduce((s, v) => s + v.pairA.length, 0);
  const pa = new Uint32Array(np), pb = new Uint32Array(np);
  // estimates and exact similarities: there for every pair or for none (decided by the plan, not by a shard's
  // pairs: a verify shard without pairs, e.g. of an input-file shard without files, has neither)
  const withEst = needsEstimates({ ...o, verify: res.settings.verify }, plan), withExact = res.settings.verify === 'exact';
  const est = new Float32Array(withEst ? np : 0), exact = new Float32Array(withExact ? np : 0);
  let at = 0;
  for (const [i, v] of verified.entries()) {
    const k = v.pairA.length;
    if (k > 0 && (v.est.length !== (withEst ? k : 0) || v.exact.length !== (withExact ? k : 0))) {
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `verify shard ${i}/${plan.shards}: '${vfyName(work, i)}' holds ${v.est.length} estimates and ` +
        `${v.exact.length} exact similarities for ${k} pairs; the plan needs ${withEst ? k : 0} and ${withExact ? k : 0} (rerun that stage)`, { file: vfyName(work, i) });
    }
    pa.set(v.pairA, at);
    pb.set(v.pairB, at);
    if (est.length) est.set(v.est, at);
    if (exact.length) exact.set(v.exact, at);
    at += v.pairA.length;
  }
  const rep = new Uint32Array(n);
  for (let d = 0; d < n; d++) rep[d] = d;
  if (clustering === 'components') {
    // union-find whose root is the smallest member (native/core/minhash/union_find.h)
    const find = (x: number) => {
      while (rep[x] !== x) {
        rep[x] = rep[rep[x]];
        x = rep[x];
      }
      return x;
    };
    for (let x = 0; x < np; x++) {
      const a = find(pa[x]), b = find(pb[x]);
      if (a < b) rep[b] = a; else if (b < a) rep[a] = b;
    }
    for (let d = 0; d < n; d++) rep[d] = find(d);
  } else {
    // doubri's rule: in document order, d is dropped for the smallest kept document it is paired with or
    // shares a large bucket with (unverified runs: a bucket of over 100 documents is one group, as in dedup).
    const byB = new Uint32Array(n + 1);  // pairs by b (counting sort; a ascending within b)
    for (let x = 0; x < np; x++) byB[pb[x] + 1]++;
    for (let d = 0; d < n; d++) byB[d + 1] += byB[d];
    const fill = byB.slice(0, n), partner = new Uint32Array(np);
    for (let x = 0; x < np; x++) partner[fill[pb[x]]++] = pa[x];
    const ngroups = shards.reduce((s, sh) => s + sh.groupEnds.length, 0);
    const holder = new Int32Array(ngroups).fill(-1);
    const memberCount = new Uint32Array(n + 1);
    const groupList: { docs: Uint32Array; lo: number; hi: number }[] = [];
    for (const sh of shards) {
      let lo = 0;
      for (const e of sh.groupEnds) {
        const hi = Number(e);
        groupList.push({ docs: sh.groupDocs, lo, hi });
        for (let z = lo; z < hi; z++) memberCount[sh.groupDocs[z] + 1]++;
        lo = hi;
      }
    }
    for (let d = 0; d < n; d++) memberCount[d + 1] += memberCount[d];
    const mfill = memberCount.slice(0, n), groupsOf = new Uint32Array(memberCount[n]);
    groupList.forEach((g, gi) => { for (let z = g.lo; z < g.hi; z++) groupsOf[mfill[g.docs[z]]++] = gi; });
    for (let d = 0; d < n; d++) {
      let by = -1;
      for (let x = byB[d]; x < byB[d + 1]; x++) {
        const a = partner[x];
        if (rep[a] === a && (by < 0 || a < by)) by = a;
      }
      for (let x = memberCount[d]; x < memberCount[d + 1]; x++) {
        const h = holder[groupsOf[x]];
        if (h >= 0 && (by < 0 || h < by)) by = h;
      }
      if (by >= 0) {
        rep[d] = by;
      } else {
        for (let x = memberCount[d]; x < memberCount[d + 1]; x++) if (holder[groupsOf[x]] < 0) holder[groupsOf[x]] = d;
      }
    }
  }
  const out = await finishClusters(lp, rep, {
    documents: n, bad_lines: bad, input_bytes: bytes, candidate_pairs: candidates, reported_pairs: np,
    spilled_bytes: shards.reduce((s, sh) => s + sh.spilled, 0), runs: shards.reduce((s, sh) => s + sh.runs, 0),
  }, (idOf, writeLines) => writeLines(plan.outputs.pairs!, np, (x) => {
    const ex = exact.length ? `, "exact": ${+exact[x].toFixed(6)}` : '';
    const ids = idOf === undefined ? '' : `, "a_id": ${idOf.id(pa[x])}, "b_id": ${idOf.id(pb[x])}`;
    return `{"a": ${pa[x]}, "b": ${pb[x]}${ids}, "estimate": ${+est[x].toFixed(6)}${ex}}\n`;
  }));
  return { stage: 'clusters', shard: '0/1', readBytes: read + out.read, writtenBytes: out.written, seconds: (Date.now() - start) / 1000 };
}

/**
 * The clusters stage's end, for dedup's and exact's plans: the counts from the representatives, the run's
 * --flags, --clusters, --pairs (writePairs) and --removed-ids, and clusters.rep with the summary.
 */
async function finishClusters(lp: LoadedPlan, rep: Uint32Array, counts: Omit<ClustersSummary, 'duplicates' | 'dropped' | 'clusters'>,
  writePairs?: (idOf: { id: (d: number) => string } | undefined, writeLines: (file: string, count: number, line: (i: number) => string) => Promise<void>) => Promise<void>): Promise<{ read: number; written: number }> {
  const { plan, work } = lp;
  const n = rep.length;
  let read = 0;
  const { duplicates, clusters } = clusterCounts(rep);
  const dropped = droppedDocuments(rep, plan.dropAll === true);
  let droppedCount = 0;
  for (let d = 0; d < n; d++) droppedCount += dropped[d];
  const summary: ClustersSummary = { ...counts, duplicates, dropped: droppedCount, clusters };
  // the final outputs of the whole run, as dedup writes them
  const writeLines = async (file: string, count: number, line: (i: number) => string) => {
    const f = OutputFile.open(file);
    try {
      await writeLinesTo(f, count, line);
    } finally {
      f.abort();
    }
  };
  const idOf = plan.input.idField !== undefined && (plan.outputs.clusters !== undefined || plan.outputs.pairs !== undefined || plan.outputs.removedIds !== undefined)
    ? readIds(lp, n) : undefined;
  if (idOf) read += idOf.bytes;
  if (plan.outputs.flags !== undefined) await writeLines(plan.outputs.flags, n, (i) => (dropped[i] ? '0\n' : '1\n'));
  if (plan.outputs.clusters !== undefined) {
    await writeLines(plan.outputs.clusters, n, idOf === undefined ? (i) => `${rep[i]}\n`
      : (i) => `{"id": ${idOf.id(i)}, "kept": ${rep[i]}, "kept_id": ${idOf.id(rep[i])}}\n`);
  }
  if (plan.outputs.pairs !== undefined && writePairs) await writePairs(idOf, writeLines);
  if (plan.outputs.removedIds !== undefined) {
    if (idOf === undefined) throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${planPath(work)}': --removed-ids needs the ids (--id-field)`, { file: planPath(work) });
    const removed: number[] = [];
    for (let d = 0; d < n; d++) if (dropped[d]) removed.push(d);
    await writeLines(plan.outputs.removedIds, removed.length, (k) => `${idOf.id(removed[k])}\n`);
  }
  const written = await writeStageFile(repName(work), 'CLRP', lp.id, [n, 0], [rep, Buffer.from(JSON.stringify(summary))]);
  return { read, written };
}

/** Every signatures shard's ids (sig-I.ids, one JSON value a line): document d's id, and the bytes read. */
function readIds(lp: LoadedPlan, n: number): { id: (d: number) => string; bytes: number } {
  const parts: Buffer[] = [];
  const starts: Float64Array[] = [];
  let docs = 0, bytes = 0;
  for (let i = 0; i < lp.plan.shards; i++) {
    const what = `signatures shard ${i}/${lp.plan.shards}`;
    const file = sigName(lp.work, i, 'ids');
    const f = readStageFile(file, 'SGID', lp.id, what);
    const m = readMeta(lp, i).docs;
    const corrupt = (why: string) => new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' is corrupt: ${why}`, { file });
    if (f.params[0] !== m || f.params[1] !== f.payload.length) throw corrupt(`it holds ${f.params[0]} ids in ${f.params[1]} bytes; its meta says ${m} documents`);
    // line starts (n + 1: the last is the end)
    const st = new Float64Array(m + 1);
    let k = 0;
    for (let at = 0; k < m; k++) {
      st[k] = at;
      const nl = f.payload.indexOf(0x0a, at);
      if (nl < 0) throw corrupt(`${k} of its ${m} ids end with a newline`);
      at = nl + 1;
    }
    st[m] = f.payload.length;
    if (m > 0 && f.payload[f.payload.length - 1] !== 0x0a) throw corrupt('bytes after its last id');
    parts.push(f.payload);
    starts.push(st);
    docs += m;
    bytes += f.payload.length + HEADER;
  }
  if (docs !== n) throw new NeardupError('ERR_NEARDUP_CORRUPT', `the signatures shards hold ${docs} ids for ${n} documents (rerun the signatures stage)`);
  const firsts: number[] = [];
  for (let i = 0, d = 0; i < starts.length; i++) {
    firsts.push(d);
    d += starts[i].length - 1;
  }
  let last = 0;  // the shard of the last look-up (most look-ups are near each other)
  const id = (d: number): string => {
    let s = last;
    if (!(firsts[s] <= d && d < firsts[s] + starts[s].length - 1)) {
      let lo = 0, hi = firsts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (firsts[mid] <= d) lo = mid; else hi = mid - 1;
      }
      s = last = lo;
    }
    const x = d - firsts[s];
    return parts[s].toString('utf8', starts[s][x], starts[s][x + 1] - 1);
  };
  return { id, bytes };
}

export function readClusters(lp: LoadedPlan): { rep: Uint32Array; summary: ClustersSummary } {
  const f = readStageFile(repName(lp.work), 'CLRP', lp.id, 'clusters');
  const n = f.params[0];
  if (f.payload.length < n * 4) throw new NeardupError('ERR_NEARDUP_CORRUPT', `clusters: '${repName(lp.work)}' is corrupt: shorter than its ${n} representatives`);
  return { rep: typed(Uint32Array, f.payload.subarray(0, n * 4)), summary: JSON.parse(f.payload.subarray(n * 4).toString('utf8')) as ClustersSummary };
}

// ---- filter and kept ----

export async function runFilter(lp: LoadedPlan, i: number): Promise<StageReport> {
  const start = Date.now();
  const { plan, work } = lp;
  const { rep } = readClusters(lp);
  let first = 0;
  for (let s = 0; s < i; s++) first += readMeta(lp, s).docs;
  const meta = readMeta(lp, i);
  const what = `signatures shard ${i}/${plan.shards}`;
  const { valid } = readDocsFile(lp, i, meta.docs);
  checkInputsUnchanged(meta.files, `filter shard ${i}/${plan.shards}`);
  if (first + meta.docs > rep.length) throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: its documents do not fit the clusters (${rep.length} documents)`);
  const inputs: KeptInput[] = [];
  let d = first;
  for (const f of meta.files) {
    inputs.push({ file: f.file, format: f.format, compression: f.compression, first: d, count: f.count });
    d += f.count;
  }
  let written = 0;
  const wantKept = plan.outputs.kept !== undefined || plan.outputs.keptDir !== undefined, wantRemoved = plan.outputs.removed !== undefined;
  if (wantKept || wantRemoved) {
    const keptDir = plan.outputs.keptDir;
    if (keptDir !== undefined) fs.mkdirSync(keptDir, { recursive: true });
    const dropped = droppedDocuments(rep, plan.dropAll === true);
    const pq = await planParquetOutputs(plan.outputs, plan.files);
    // --annotate: each document's cluster (the whole run's representatives), its size and the kept one's id
    const ids = plan.annotate && plan.input.idField !== undefined ? readIds(lp, rep.length) : undefined;
    const annotate = plan.annotate ? annotations(rep, { cluster: (d) => String(rep[d]), ...(ids ? { keptId: (d: number) => ids.id(rep[d]) } : {}) }) : undefined;
    const annotateOutput = plan.annotate ? { idField: plan.input.idField } : undefined;
    const outs = new Map<string, DocumentOutput>();
    const named = (name: string, compression: InputCompression, schema: ParquetSchema | undefined) => {
      let out = outs.get(name);
      if (!out) {
        out = openDocumentOutput(name, compression, schema, annotateOutput);
        outs.set(name, out);
      }
      return out;
    };
    // --kept and --removed: this shard's part of each (joined by the kept stage; Parquet parts for a Parquet
    // output); --kept-dir: the files themselves
    const kept = (inp: KeptInput) => (keptDir === undefined ? named(keptPartName(work, i), 'none', pq.kept)
      : named(keptDirName(keptDir, inp.file, inp.format), keptCompression(inp.format, inp.compression), pq.keptDir.get(inp.file)));
    const removed = () => named(removedPartName(work, i), 'none', pq.removed);
    try {
      // a shard without files has empty parts
      if (wantKept && keptDir === undefined) kept({ file: '', format: 'jsonl', compression: 'none', first, count: 0 });
      if (wantRemoved) removed();
      await copyDocuments(inputs, (doc) => (valid[doc - first] !== 1 ? 0 : dropped[doc] ? 2 : 1), { ...(wantKept ? { kept } : {}), ...(wantRemoved ? { removed } : {}) }, annotate);
      for (const out of outs.values()) await out.commit();
    } finally {
      for (const out of outs.values()) out.abort();
    }
    for (const name of outs.keys()) written += fs.statSync(name).size;
  }
  return { stage: 'filter', shard: `${i}/${plan.shards}`, readBytes: meta.bytes, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
}

export async function runKept(lp: LoadedPlan): Promise<StageReport> {
  const start = Date.now();
  const { plan, work } = lp;
  let read = 0, written = 0;
  // --kept and --removed: the filter shards' parts, back to back, compressed as the name says (Parquet parts:
  // their row groups, one after another, into one Parquet file)
  const pq = await planParquetOutputs({ kept: plan.outputs.kept, removed: plan.outputs.removed }, plan.files);  // --kept-dir is the filter stage's
  const join = async (target: string, partName: (work: string, i: number) => string, schema: ParquetSchema | undefined) => {
    // Parquet: the parts' own schema (the inputs', and --annotate's columns), every column copied
    const partSchema = schema && fs.existsSync(partName(work, 0)) ? await parquetFileSchema(partName(work, 0)) : schema;
    const out = openDocumentOutput(target, compressionOfName(target), partSchema);
    try {
      for (let i = 0; i < plan.shards; i++) {
        const part = partName(work, i);
        if (!fs.existsSync(part))
          throw new NeardupError('ERR_NEARDUP_IO', `filter shard ${i}/${plan.shards}: '${part}' is missing (run that stage first)`, { file: part });
        if (out instanceof ParquetOutput) {
          read += fs.statSync(part).size;
          for await (const g of parquetRowGroups(part, Number.MAX_SAFE_INTEGER, 'write')) await out.writeRows(g.columns, Array.from({ length: g.rows }, (_, r) => r));
          continue;
        }
        const fd = fs.openSync(part, 'r');
        try {
          const buf = Buffer.allocUnsafe(1 << 20);
          for (;;) {
            const got = fs.readSync(fd, buf, 0, buf.length, null);
            if (got === 0) break;
            read += got;
            await out.write(Buffer.from(buf.subarray(0, got)));
          }
        } finally {
          fs.closeSync(fd);
        }
      }
      await out.commit();
    } finally {
      out.abort();
    }
    written += fs.statSync(target).size;
  };
  if (plan.outputs.kept !== undefined) await join(plan.outputs.kept, keptPartName, pq.kept);
  if (plan.outputs.removed !== undefined) await join(plan.outputs.removed, removedPartName, pq.removed);
  return { stage: 'kept', shard: '0/1', readBytes: read, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
}

/** Runs one stage task. */
export async function runStage(work: string, stage: StageName, shard: number): Promise<StageReport> {
  const lp = loadPlan(work);
  const count = stageShards(lp.plan, stage);
  if (!(shard >= 0 && shard < count))
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `stage ${stage}: shard ${shard} is out of range (the plan has ${count})`);
  const cpu0 = process.cpuUsage();
  const task = (): Promise<StageReport> => {
    switch (stage) {
      case 'signatures': return runSignatures(lp, shard);
      case 'buckets': return runBuckets(lp, shard);
      case 'verify': return runVerify(lp, shard);
      case 'clusters': return runClusters(lp);
      case 'filter': return runFilter(lp, shard);
      case 'kept': return runKept(lp);
    }
  };
  const r = await task();
  const cpu = process.cpuUsage(cpu0);
  return { ...r, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/** The stage graph in order: stage, shard count. */
export function stageGraph(plan: StagePlan): { stage: StageName; shards: number }[] {
  return STAGES.map((stage) => ({ stage, shards: stageShards(plan, stage) }));
}

export { version };
