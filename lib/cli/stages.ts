// `neardup dedup` as independent, idempotent, shardable stages over a work folder (docs/scale.md):
//
//   plan        the run's options, inputs and outputs            -> plan.json
//   signatures  input files of shard i/N -> band keys per band shard, validity and texts (--verify exact),
//               signatures (estimates)                          -> sig-I.{meta,docs,sigs,keys-K}
//   buckets     band shard k/M, from every signature shard -> candidate pairs, verified      -> bkt-K.pairs
//   clusters    every band shard's pairs -> each document's representative, --flags/--clusters/--pairs
//                                                                -> clusters.rep
//   filter      input files of shard i/N -> their kept lines (--kept-dir files, or a part of --kept)
//   kept        the parts -> --kept
//
// Each stage reads only finished files of the stages before it and writes its own outputs atomically
// (temporary name + rename), so a stage can run anywhere, any number of times. The native engine does the
// work: signing and band keys (LshDedup.sign), buckets, candidate pairs and their verification
// (LshDedup.addKeys + finish over a range of bands); the clustering rule is the one dedup applies to the
// same pairs (lsh_dedup.cc: KeptFromPairs, the bucket holder rule, union-find), so the outputs are those of
// one `neardup dedup` run, byte for byte (tested).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError, nativeCall, nativeSync } from '../errors';
import { native, type NativeLshDedup } from '../native';
import { resolveDedupOptions, dedupLimits, documentTooLarge, type DedupOptions } from '../dedup';
import { readDocuments, type ReadDocumentsOptions } from '../input';
import { version } from '../version';
import { CompressedOutput, compressionOfName, copyKept, keptCompression, keptDirName, type KeptInput } from './kept';
import { OutputFile, writeLinesTo } from './files';

export const STAGES = ['signatures', 'buckets', 'clusters', 'filter', 'kept'] as const;
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
  input: Pick<ReadDocumentsOptions, 'field' | 'onBadLine'>;
  outputs: { flags?: string; clusters?: string; pairs?: string; kept?: string; keptDir?: string };
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

/** Writes a stage file atomically: header (kind, flags = plan id, params) + the payload parts. */
async function writeStageFile(file: string, kind: string, planId: number, params: [number, number], parts: ArrayBufferView[]): Promise<number> {
  const bufs = parts.map(bytesOf);
  const size = bufs.reduce((s, b) => s + b.length, 0);
  const out = OutputFile.open(file);
  try {
    await out.write(header(kind, 1, planId, params, size, crc(bufs)));
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

/** `what` names the stage output in errors ("signatures shard 2/3"). */
function readStageFile(file: string, kind: string, planId: number, what: string): StageFile {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new NeardupError('ERR_NEARDUP_IO',
      `${what}: '${file}' ${code === 'ENOENT' ? 'is missing (run that stage first)' : `cannot be read: ${(e as Error).message}`}`, { file });
  }
  const bad = (why: string, offset: number) =>
    new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' is corrupt: ${why}`, { file, offset });
  if (data.length < HEADER) throw bad(`${data.length} bytes, shorter than the 64-byte header`, 0);
  if (!data.subarray(0, 8).equals(MAGIC)) throw bad('not a neardup file (magic)', 0);
  if (data.toString('latin1', 8, 12) !== kind) throw bad(`kind '${data.toString('latin1', 8, 12)}', expected '${kind}'`, 8);
  if (data.readUInt32LE(16) !== 0x01020304) throw bad('byte order mark', 16);
  if ((native.crc32c(data.subarray(0, 60)) >>> 0) !== data.readUInt32LE(60)) throw bad('header checksum mismatch', 60);
  if (data.readUInt32LE(12) !== 1) throw bad(`version ${data.readUInt32LE(12)}, this build reads 1`, 12);
  if (data.readUInt32LE(20) !== HEADER) throw bad('header size', 20);
  const size = Number(data.readBigUInt64LE(24));
  if (size !== data.length - HEADER) throw bad(`payload of ${data.length - HEADER} bytes, the header says ${size}`, 24);
  const payload = data.subarray(HEADER);
  if ((native.crc32c(payload) >>> 0) !== data.readUInt32LE(32)) throw bad('payload checksum mismatch', 32);
  if (data.readUInt32LE(36) !== planId)
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' was written for another plan (plan.json changed; rerun that stage)`, { file });
  return { params: [Number(data.readBigUInt64LE(40)), Number(data.readBigUInt64LE(48))], payload };
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
  if (plan.version !== 1 || !Array.isArray(plan.files) || !(plan.shards >= 1) || !(plan.bandShards >= 1))
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is not a dedup stage plan of version 1`, { file });
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
const repName = (work: string) => path.join(work, 'clusters.rep');
export const keptPartName = (work: string, i: number) => path.join(work, `kept-${i}.part`);

function needsEstimates(o: DedupOptions, plan: StagePlan): boolean {
  return o.verify === 'estimate' || plan.outputs.pairs !== undefined;
}

interface ShardMeta {
  docs: number;
  bad: number;
  bytes: number;
  files: { file: string; format: KeptInput['format']; compression: KeptInput['compression']; count: number }[];
}

function readMeta(lp: LoadedPlan, i: number): ShardMeta {
  const f = readStageFile(sigName(lp.work, i, 'meta'), 'SGMT', lp.id, `signatures shard ${i}/${lp.plan.shards}`);
  return JSON.parse(f.payload.toString('utf8')) as ShardMeta;
}

/** What a stage did: bytes read and written (stage files; inputs and final outputs not counted). */
export interface StageReport {
  stage: StageName;
  shard: string;
  readBytes: number;
  writtenBytes: number;
  seconds: number;
}

// ---- signatures ----

export async function runSignatures(lp: LoadedPlan, i: number): Promise<StageReport> {
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
  const sigParts: Uint32Array[] = [], valid: Uint8Array[] = [], lens: Uint32Array[] = [], texts: Uint8Array[] = [];
  const meta: ShardMeta = { docs: 0, bad: 0, bytes: 0, files: files.map((file) => ({ file, format: 'jsonl', compression: 'none', count: 0 })) };
  const limits = dedupLimits({ profile: res.settings.profile, verify: res.settings.verify, memory: o.memory });
  try {
    if (files.length) {
      for await (const batch of readDocuments(files, { ...plan.input, onProgress: (n) => { meta.bytes = n; } })) {
        const off = batch.packed.offsets;
        const len = new Uint32Array(batch.count);
        for (let d = 0; d < batch.count; d++) {
          len[d] = off[d + 1] - off[d];
          if (len[d] > limits.documentBytes) throw documentTooLarge(`${batch.file}:${batch.firstLine + d}: `, len[d], { profile: res.settings.profile, verify: res.settings.verify, memory: o.memory });
        }
        const v = batch.valid ? Uint8Array.from(batch.valid) : new Uint8Array(batch.count).fill(1);
        const r = await nativeCall(handle.sign(batch.packed, batch.valid));
        for (let k = 0; k < m; k++) {
          const [b0, b1] = shardBands(b, k, m);
          const part = new BigUint64Array(batch.count * (b1 - b0));
          for (let d = 0, at = 0; d < batch.count; d++) for (let j = b0; j < b1; j++) part[at++] = r.keys[d * b + j];
          keyParts[k].push(part);
        }
        if (withSigs) sigParts.push(r.signatures);
        valid.push(v);
        if (exact) {
          lens.push(len);
          texts.push(batch.packed.data.slice(off[0], off[batch.count]));  // a copy: batches may share buffers
        }
        meta.files[batch.fileIndex].format = batch.format;
        meta.files[batch.fileIndex].compression = batch.compression;
        meta.files[batch.fileIndex].count += batch.count;
        meta.docs += batch.count;
        meta.bad += batch.bad.size;
      }
    }
  } finally {
    handle.close();
  }
  let written = 0;
  for (let k = 0; k < m; k++) {
    const [b0, b1] = shardBands(b, k, m);
    written += await writeStageFile(sigName(work, i, `keys-${k}`), 'SGKY', lp.id, [meta.docs, b1 - b0], keyParts[k]);
  }
  const textBytes = texts.reduce((s, t) => s + t.length, 0);
  written += await writeStageFile(sigName(work, i, 'docs'), 'SGDC', lp.id, [meta.docs, exact ? textBytes : 0], [...valid, ...(exact ? [...lens, ...texts] : [])]);
  if (withSigs) written += await writeStageFile(sigName(work, i, 'sigs'), 'SGSG', lp.id, [meta.docs, res.numPerm], sigParts);
  // the meta last: it names what the shard holds
  written += await writeStageFile(sigName(work, i, 'meta'), 'SGMT', lp.id, [meta.docs, 0], [Buffer.from(JSON.stringify(meta))]);
  return { stage: 'signatures', shard: `${i}/${plan.shards}`, readBytes: meta.bytes, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
}

// ---- buckets ----

/** Chunks of documents fed to the native session at once. */
const CHUNK = 1 << 14;

export async function runBuckets(lp: LoadedPlan, k: number): Promise<StageReport> {
  const start = Date.now();
  const { plan, work } = lp;
  const o = planOptions(plan);
  const res = resolveDedupOptions(o);
  const verify = res.settings.verify;
  const withSigs = needsEstimates({ ...o, verify }, plan);
  const [b0, b1] = shardBands(res.b, k, plan.bandShards);
  const bk = b1 - b0;
  let read = 0;
  const handle: NativeLshDedup = nativeSync(() => new native.LshDedup({
    ...res.native, b: bk, pairs: true, estimates: withSigs, candidates: true, maxPairs: Number.MAX_SAFE_INTEGER,
    groups: verify === 'none' && res.settings.clustering === 'kept',
  }));
  let r;
  try {
    for (let i = 0; i < plan.shards; i++) {
      const what = `signatures shard ${i}/${plan.shards}`;
      const meta = readMeta(lp, i);
      const n = meta.docs;
      const kf = readStageFile(sigName(work, i, `keys-${k}`), 'SGKY', lp.id, what);
      if (kf.params[0] !== n || kf.params[1] !== bk || kf.payload.length !== n * bk * 8)
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${sigName(work, i, `keys-${k}`)}' holds ${kf.params[0]} x ${kf.params[1]} keys, expected ${n} x ${bk}`);
      const keys = typed(BigUint64Array, kf.payload);
      const df = readStageFile(sigName(work, i, 'docs'), 'SGDC', lp.id, what);
      const textBytes = df.params[1];
      if (df.params[0] !== n || df.payload.length !== n + (verify === 'exact' ? n * 4 + textBytes : 0))
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${sigName(work, i, 'docs')}' does not match its meta (${n} documents)`);
      const valid = df.payload.subarray(0, n);
      const lens = verify === 'exact' ? typed(Uint32Array, df.payload.subarray(n, n + 4 * n)) : undefined;
      const textData = df.payload.subarray(n + 4 * n);
      let sigs: Uint32Array | undefined;
      read += kf.payload.length + df.payload.length + 2 * HEADER;
      if (withSigs) {
        const sf = readStageFile(sigName(work, i, 'sigs'), 'SGSG', lp.id, what);
        if (sf.params[0] !== n || sf.params[1] !== res.numPerm || sf.payload.length !== n * res.numPerm * 4)
          throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${sigName(work, i, 'sigs')}' does not match its meta`);
        sigs = typed(Uint32Array, sf.payload);
        read += sf.payload.length + HEADER;
      }
      let textAt = 0;
      for (let d0 = 0; d0 < n; d0 += CHUNK) {
        const d1 = Math.min(n, d0 + CHUNK);
        let packed = null;
        if (lens) {
          const offsets = new Uint32Array(d1 - d0 + 1);
          for (let d = d0; d < d1; d++) offsets[d - d0 + 1] = offsets[d - d0] + lens[d];
          packed = { data: textData.subarray(textAt, textAt + offsets[d1 - d0]), offsets };
          textAt += offsets[d1 - d0];
        }
        await nativeCall(handle.addKeys(keys.subarray(d0 * bk, d1 * bk), valid.subarray(d0, d1), packed,
          sigs ? sigs.subarray(d0 * res.numPerm, d1 * res.numPerm) : null));
      }
    }
    r = await nativeCall(handle.finish());
  } finally {
    handle.close();
  }
  const nk = r.pairA.length;
  const table = new Float64Array([r.candidates.length, nk, r.pairEstimate.length, r.pairExact.length, r.groupEnds.length, r.groupDocs.length, r.spilledBytes, r.runs]);
  const written = await writeStageFile(bktName(work, k), 'BKPR', lp.id, [r.candidates.length, nk],
    [table, r.candidates, r.pairA, r.pairB, r.pairEstimate, r.pairExact, r.groupEnds, r.groupDocs]);
  return { stage: 'buckets', shard: `${k}/${plan.bandShards}`, readBytes: read, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
}

interface BucketPairs {
  /** candidates as (a, b) u32 pairs, sorted */
  candA: Uint32Array;
  candB: Uint32Array;
  pairA: Uint32Array;
  pairB: Uint32Array;
  est: Float32Array;
  exact: Float32Array;
  groupEnds: BigUint64Array;
  groupDocs: Uint32Array;
  spilled: number;
  runs: number;
}

function readBuckets(lp: LoadedPlan, k: number): BucketPairs {
  const file = bktName(lp.work, k);
  const what = `buckets shard ${k}/${lp.plan.bandShards}`;
  const f = readStageFile(file, 'BKPR', lp.id, what);
  const p = f.payload;
  const corrupt = () => new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${file}' is corrupt: section sizes do not add up`, { file });
  if (p.length < 64) throw corrupt();
  const t = typed(Float64Array, p.subarray(0, 64));
  const [nc, nk, ne, nx, ng, ngd] = Array.from(t.subarray(0, 6));
  if (nk !== f.params[1] || nc !== f.params[0] || (ne !== 0 && ne !== nk) || (nx !== 0 && nx !== nk) || p.length !== 64 + nc * 8 + nk * 8 + ne * 4 + nx * 4 + ng * 8 + ngd * 4) throw corrupt();
  let at = 64;
  const take = (bytes: number) => p.subarray(at, (at += bytes));
  const cand = typed(Uint32Array, take(nc * 8));  // little-endian u64: b (low word), a (high word)
  const candA = new Uint32Array(nc), candB = new Uint32Array(nc);
  for (let i = 0; i < nc; i++) {
    candB[i] = cand[2 * i];
    candA[i] = cand[2 * i + 1];
  }
  return {
    candA, candB, pairA: typed(Uint32Array, take(nk * 4)), pairB: typed(Uint32Array, take(nk * 4)), est: typed(Float32Array, take(ne * 4)),
    exact: typed(Float32Array, take(nx * 4)), groupEnds: typed(BigUint64Array, take(ng * 8)), groupDocs: typed(Uint32Array, take(ngd * 4)),
    spilled: t[6], runs: t[7],
  };
}

/**
 * Merges sorted (a, b) lists, each pair once: calls emit(list, index) for the first occurrence of each
 * pair in (a, b) order.
 */
function mergePairs(lists: { a: Uint32Array; b: Uint32Array }[], emit: (list: number, index: number) => void): void {
  const at = lists.map(() => 0);
  let lastA = -1, lastB = -1;
  for (;;) {
    let best = -1;
    for (let l = 0; l < lists.length; l++) {
      if (at[l] >= lists[l].a.length) continue;
      if (best < 0) { best = l; continue; }
      const a = lists[l].a[at[l]], ba = lists[best].a[at[best]];
      if (a < ba || (a === ba && lists[l].b[at[l]] < lists[best].b[at[best]])) best = l;
    }
    if (best < 0) return;
    const a = lists[best].a[at[best]], b = lists[best].b[at[best]];
    if (a !== lastA || b !== lastB) emit(best, at[best]);
    lastA = a;
    lastB = b;
    at[best]++;
  }
}

export interface ClustersSummary {
  documents: number;
  bad_lines: number;
  input_bytes: number;
  duplicates: number;
  clusters: number;
  candidate_pairs: number;
  reported_pairs: number;
  spilled_bytes: number;
  runs: number;
}

// ---- clusters ----

export async function runClusters(lp: LoadedPlan): Promise<StageReport> {
  const start = Date.now();
  const { plan, work } = lp;
  const o = planOptions(plan);
  const res = resolveDedupOptions(o);
  const { verify, clustering } = res.settings;
  let n = 0, bad = 0, bytes = 0, read = 0;
  for (let i = 0; i < plan.shards; i++) {
    const m = readMeta(lp, i);
    n += m.docs;
    bad += m.bad;
    bytes += m.bytes;
  }
  const shards: BucketPairs[] = [];
  for (let k = 0; k < plan.bandShards; k++) {
    shards.push(readBuckets(lp, k));
    read += fs.statSync(bktName(work, k)).size;
  }
  let candidates = 0;
  mergePairs(shards.map((s) => ({ a: s.candA, b: s.candB })), () => { candidates++; });
  // the reported pairs, each once, sorted by (a, b)
  const keptIdx: [number, number][] = [];
  mergePairs(shards.map((s) => ({ a: s.pairA, b: s.pairB })), (l, i) => { keptIdx.push([l, i]); });
  const np = keptIdx.length;
  const pa = new Uint32Array(np), pb = new Uint32Array(np);
  for (let x = 0; x < np; x++) {
    const [l, i] = keptIdx[x];
    pa[x] = shards[l].pairA[i];
    pb[x] = shards[l].pairB[i];
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
  let duplicates = 0, clusters = 0;
  const many = new Uint8Array(n);
  for (let d = 0; d < n; d++) {
    if (rep[d] !== d) {
      duplicates++;
      if (!many[rep[d]]) {
        many[rep[d]] = 1;
        clusters++;
      }
    }
  }
  const summary: ClustersSummary = {
    documents: n, bad_lines: bad, input_bytes: bytes, duplicates, clusters, candidate_pairs: candidates, reported_pairs: np,
    spilled_bytes: shards.reduce((s, sh) => s + sh.spilled, 0), runs: shards.reduce((s, sh) => s + sh.runs, 0),
  };
  // the final outputs of the whole run, as dedup writes them
  const writeLines = async (file: string, count: number, line: (i: number) => string) => {
    const f = OutputFile.open(file);
    try {
      await writeLinesTo(f, count, line);
    } finally {
      f.abort();
    }
  };
  if (plan.outputs.flags !== undefined) await writeLines(plan.outputs.flags, n, (i) => (rep[i] === i ? '1\n' : '0\n'));
  if (plan.outputs.clusters !== undefined) await writeLines(plan.outputs.clusters, n, (i) => `${rep[i]}\n`);
  if (plan.outputs.pairs !== undefined) {
    await writeLines(plan.outputs.pairs, np, (x) => {
      const [l, i] = keptIdx[x];
      const sh = shards[l];
      const exact = sh.exact.length ? `, "exact": ${+sh.exact[i].toFixed(6)}` : '';
      return `{"a": ${pa[x]}, "b": ${pb[x]}, "estimate": ${+sh.est[i].toFixed(6)}${exact}}\n`;
    });
  }
  const written = await writeStageFile(repName(work), 'CLRP', lp.id, [n, 0], [rep, Buffer.from(JSON.stringify(summary))]);
  return { stage: 'clusters', shard: '0/1', readBytes: read, writtenBytes: written, seconds: (Date.now() - start) / 1000 };
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
  const df = readStageFile(sigName(work, i, 'docs'), 'SGDC', lp.id, what);
  const valid = df.payload.subarray(0, meta.docs);
  if (first + meta.docs > rep.length) throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: its documents do not fit the clusters (${rep.length} documents)`);
  const inputs: KeptInput[] = [];
  let d = first;
  for (const f of meta.files) {
    inputs.push({ file: f.file, format: f.format, compression: f.compression, first: d, count: f.count });
    d += f.count;
  }
  let written = 0;
  if (plan.outputs.kept !== undefined || plan.outputs.keptDir !== undefined) {
    const keptDir = plan.outputs.keptDir;
    if (keptDir !== undefined) fs.mkdirSync(keptDir, { recursive: true });
    const outs = new Map<string, CompressedOutput>();
    const outputFor = (inp: KeptInput) => {
      const name = keptDir === undefined ? keptPartName(work, i) : keptDirName(keptDir, inp.file, inp.format);
      let out = outs.get(name);
      if (!out) {
        out = CompressedOutput.open(name, keptDir === undefined ? 'none' : keptCompression(inp.format, inp.compression));
        outs.set(name, out);
      }
      return out;
    };
    try {
      if (keptDir === undefined) outputFor({ file: '', format: 'jsonl', compression: 'none', first, count: 0 });  // a shard without files has an empty part
      await copyKept(inputs, (doc) => rep[doc] === doc && valid[doc - first] === 1, outputFor);
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
  let read = 0;
  if (plan.outputs.kept !== undefined) {
    const out = CompressedOutput.open(plan.outputs.kept, compressionOfName(plan.outputs.kept));
    try {
      for (let i = 0; i < plan.shards; i++) {
        const part = keptPartName(work, i);
        if (!fs.existsSync(part))
          throw new NeardupError('ERR_NEARDUP_IO', `filter shard ${i}/${plan.shards}: '${part}' is missing (run that stage first)`, { file: part });
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
  }
  return { stage: 'kept', shard: '0/1', readBytes: read, writtenBytes: plan.outputs.kept !== undefined ? fs.statSync(plan.outputs.kept).size : 0, seconds: (Date.now() - start) / 1000 };
}

/** Runs one stage task. */
export async function runStage(work: string, stage: StageName, shard: number): Promise<StageReport> {
  const lp = loadPlan(work);
  const count = stage === 'buckets' ? lp.plan.bandShards : stage === 'signatures' || stage === 'filter' ? lp.plan.shards : 1;
  if (!(shard >= 0 && shard < count))
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `stage ${stage}: shard ${shard} is out of range (the plan has ${count})`);
  switch (stage) {
    case 'signatures': return runSignatures(lp, shard);
    case 'buckets': return runBuckets(lp, shard);
    case 'clusters': return runClusters(lp);
    case 'filter': return runFilter(lp, shard);
    case 'kept': return runKept(lp);
  }
}

/** The stage graph in order: stage, shard count. */
export function stageGraph(plan: StagePlan): { stage: StageName; shards: number }[] {
  return [
    { stage: 'signatures', shards: plan.shards },
    { stage: 'buckets', shards: plan.bandShards },
    { stage: 'clusters', shards: 1 },
    { stage: 'filter', shards: plan.shards },
    { stage: 'kept', shards: 1 },
  ];
}

export { version };
