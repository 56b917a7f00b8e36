// MinHash LSH: an index of signatures split into b bands of r values; two signatures are candidates when
// they agree on every value of at least one band (probability 1-(1-s^r)^b for Jaccard s).
import { NeardupError, nativeCall, nativeSync, invalidArgument } from './errors';
import { native, type LshProfile, type NativeLshIndex } from './native';
import { capOption, expectInt, expectNumber, expectString, expectU64, optionsObject } from './validate';

export type { LshProfile } from './native';

export interface LshParams {
  /** Band key bytes: 'fast' (u64 values), 'datasketch' (u32 values, 8-byte big-endian keys), 'doubri' (u32, raw). */
  profile?: LshProfile;
  /** Values per signature. Default 128. */
  numPerm?: number;
  /** Jaccard threshold; (b, r) are then chosen as datasketch's MinHashLSH does. Default 0.8 unless b and r are given. */
  threshold?: number;
  /** Weights of false positives and false negatives in that choice (datasketch's `weights`). Default [0.5, 0.5]. */
  weights?: [number, number];
  /** Bytes per value: 4 (Uint32Array signatures, default) or 8 (BigUint64Array; fast profile only). */
  valueBytes?: 4 | 8;
  /** Bands and rows per band, instead of a threshold (b * r <= numPerm). */
  b?: number;
  r?: number;
}

/**
 * (b, r) minimising the weighted false positive and negative areas, exactly as datasketch 1.x chooses them.
 * The areas are computed in closed form (incomplete beta function) and pairs that cannot win are skipped:
 * numPerm 65536 takes about 10 ms (datasketch's scan takes minutes). `optimalParamAsync` runs it on a
 * native thread.
 */
export function optimalParam(threshold: number, numPerm: number, weights: [number, number] = [0.5, 0.5]): { b: number; r: number } {
  checkWeights(weights);
  return nativeSync(() => native.lshOptimalParam(threshold, numPerm, weights[0], weights[1]));
}

/** optimalParam on a native thread. */
export function optimalParamAsync(threshold: number, numPerm: number, weights: [number, number] = [0.5, 0.5]): Promise<{ b: number; r: number }> {
  try {
    checkWeights(weights);
    return nativeCall(native.lshOptimalParamAsync(threshold, numPerm, weights[0], weights[1]));
  } catch (e) {
    return Promise.reject(e);
  }
}

function checkWeights(weights: unknown): asserts weights is [number, number] {
  if (!Array.isArray(weights) || weights.length !== 2) throw invalidArgument(TypeError, 'Expected weights to be an array [fpWeight, fnWeight]');
}

/**
 * (b, r) picked for recall, for pipelines that verify candidates afterwards (dedup --verify): among all
 * (b, r) with b*r <= numPerm whose collision probability at the threshold is at least `minRecall`, the one
 * with the smallest false-positive area (integral of 1-(1-s^r)^b over 0..threshold: the fewest candidates
 * to verify; ties go to the smaller r). If no (b, r) reaches minRecall, the one with
 * the highest collision probability at the threshold. Every pair with Jaccard >= threshold is then a candidate
 * with probability >= minRecall.
 */
export function recallParam(threshold: number, numPerm: number, minRecall = 0.99): { b: number; r: number } {
  if (!(threshold > 0 && threshold <= 1)) throw invalidArgument(RangeError, 'threshold must be in (0, 1]');
  if (!Number.isInteger(numPerm) || numPerm < 1) throw invalidArgument(RangeError, 'numPerm must be a positive integer');
  if (!(minRecall > 0 && minRecall < 1)) throw invalidArgument(RangeError, 'minRecall must be in (0, 1)');
  // Gauss-Legendre (8 points) on 64 sub-intervals of [0, threshold]: exact enough to rank candidates
  const X = [0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363];
  const W = [0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763];
  const fpArea = (b: number, r: number) => {
    const m = 64, h = threshold / m;
    let sum = 0;
    for (let i = 0; i < m; i++) {
      const c = (i + 0.5) * h;
      for (let j = 0; j < 4; j++) {
        sum += W[j] * (collisionProbability(c + (X[j] * h) / 2, b, r) + collisionProbability(c - (X[j] * h) / 2, b, r));
      }
    }
    return (sum * h) / 2;
  };
  let best: { b: number; r: number; fp: number } | undefined;
  let fallback = { b: numPerm, r: 1, p: -1 };
  for (let r = 1; r <= numPerm; r++) {
    const tr = Math.pow(threshold, r);
    // the fewest bands reaching minRecall (more bands only add false positives)
    const b = tr >= 1 ? 1 : tr <= 0 ? Infinity : Math.max(1, Math.ceil(Math.log(1 - minRecall) / Math.log1p(-tr) - 1e-9));
    if (b * r > numPerm) {
      const bb = Math.floor(numPerm / r);
      const p = bb >= 1 ? collisionProbability(threshold, bb, r) : -1;
      if (p > fallback.p) fallback = { b: bb, r, p };
      continue;
    }
    const fp = fpArea(b, r);
    if (!best || fp < best.fp - 1e-12) best = { b, r, fp };
  }
  return best ? { b: best.b, r: best.r } : { b: fallback.b, r: fallback.r };
}

/** Probability that two signatures with Jaccard s share a band. */
export function collisionProbability(s: number, b: number, r: number): number {
  expectNumber(s, 's', 0, 1);
  expectInt(b, 'b', 1, Number.MAX_SAFE_INTEGER);
  expectInt(r, 'r', 1, Number.MAX_SAFE_INTEGER);
  return 1 - Math.pow(1 - Math.pow(s, r), b);
}

export function resolveParams(p: LshParams): { profile: LshProfile; numPerm: number; b: number; r: number; valueBytes: 4 | 8 } {
  optionsObject(p, 'params');
  const profile = p.profile ?? 'fast';
  const valueBytes = p.valueBytes ?? 4;
  const numPerm = p.numPerm ?? (profile === 'doubri' ? 800 : 128);
  if ((p.b === undefined) !== (p.r === undefined)) throw invalidArgument(RangeError, 'give both b and r, or neither');
  if (p.b !== undefined && p.r !== undefined) {
    if (p.threshold !== undefined) throw invalidArgument(RangeError, 'give either threshold or (b, r), not both');
    return { profile, numPerm, b: p.b, r: p.r, valueBytes };
  }
  if (profile === 'doubri' && p.threshold === undefined) return { profile, numPerm, b: 40, r: 20, valueBytes };
  return { profile, numPerm, valueBytes, ...optimalParam(p.threshold ?? 0.8, numPerm, p.weights) };
}

type Sig = Uint32Array | BigUint64Array;

export { DEFAULT_MAX_RESULTS } from './validate';

function toIds(ids: BigUint64Array | ArrayLike<number | bigint>): BigUint64Array {
  if (ids instanceof BigUint64Array) return ids;
  if (!Array.isArray(ids) && !(ArrayBuffer.isView(ids) && !(ids instanceof DataView)))
    throw invalidArgument(TypeError, 'Expected ids to be a BigUint64Array or an array of ids');
  const out = new BigUint64Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = expectU64(ids[i], `ids[${i}]`, true);
  return out;
}

/**
 * A MinHash LSH index. Signatures are flat arrays (N x numPerm). Ids are 64-bit (bigint). `LshIndex.load(path)` opens a saved index
 * memory-mapped and read-only; queries on it may run concurrently. Signatures are Uint32Array unless
 * valueBytes is 8 (fast profile, BigUint64Array).
 */
export class LshIndex {
  private readonly handle: NativeLshIndex;
  private closed = false;

  constructor(params: LshParams = {}, handle?: NativeLshIndex) {
    this.handle = handle ?? nativeSync(() => new native.LshIndex(resolveParams(params)));
  }

  /** Opens a saved index (memory-mapped, read-only). `verify` (default true) checks the payload checksum before use (reads it all); `verify: false` skips it for huge trusted files. */
  static load(path: string, options: { verify?: boolean } = {}): LshIndex {
    expectString(path, 'path');
    optionsObject(options);
    return new LshIndex({}, nativeSync(() => new native.LshIndex({ path, verify: options.verify ?? true })));
  }

  get params(): { profile: LshProfile; numPerm: number; b: number; r: number; readOnly: boolean } {
    return this.call(() => this.handle.params());
  }
  get size(): number {
    return this.call(() => this.handle.size());
  }

  /** Inserts signatures under ids (on the thread pool). An id already present is an error; nothing is inserted then. */
  insert(ids: BigUint64Array | ArrayLike<number | bigint>, signatures: Sig): Promise<void> {
    const h = this.open();
    return nativeCall(h.insert(toIds(ids), signatures));
  }
  insertSync(ids: BigUint64Array | ArrayLike<number | bigint>, signatures: Sig): void {
    this.call(() => this.handle.insertSync(toIds(ids), signatures));
  }
  /** Ids sharing at least one band with the signature, ascending. */
  query(signature: Sig): BigUint64Array {
    return this.call(() => this.handle.query(signature));
  }
  /**
   * Many queries on the thread pool: result i is ids[offsets[i] .. offsets[i+1]). The total number of ids is
   * capped by `maxResults` (default DEFAULT_MAX_RESULTS, 2^25 = 33,554,432: 256 MiB of ids): beyond it the
   * call rejects with ERR_NEARDUP_TOO_MANY_RESULTS (near-identical documents make results quadratic).
   */
  queryBatch(signatures: Sig, options: { maxResults?: number } = {}): Promise<{ ids: BigUint64Array; offsets: Uint32Array }> {
    const h = this.open();
    return nativeCall(h.queryBatch(signatures, capOption(options, 'maxResults')));
  }
  remove(id: bigint | number): boolean {
    const v = expectU64(id, 'id', true);
    return this.call(() => this.handle.remove(v));
  }
  /**
   * Every pair of ids (a < b) sharing a band, sorted. At most `maxPairs` (default DEFAULT_MAX_RESULTS,
   * 2^25 pairs = 512 MiB), else ERR_NEARDUP_TOO_MANY_RESULTS; memory stays about the pairs returned. Runs on
   * the calling thread: for large indexes use candidatePairsStream (or clusters()).
   */
  candidatePairs(options: { maxPairs?: number } = {}): { a: BigUint64Array; b: BigUint64Array } {
    const max = capOption(options, 'maxPairs');
    return this.call(() => this.handle.candidatePairs(max));
  }
  /**
   * The same pairs, in the same order, as chunks of at most `chunkPairs` (default 65536) computed on the
   * thread pool; no cap, and memory stays one chunk (plus 8 bytes per id per band for a loaded index).
   * The index must not change while the pairs are read (a later chunk then rejects).
   */
  async *candidatePairsStream(options: { chunkPairs?: number } = {}): AsyncGenerator<{ a: BigUint64Array; b: BigUint64Array }> {
    if (options === null || typeof options !== 'object') throw invalidArgument(TypeError, 'Expected options to be an object');
    const chunk = options.chunkPairs ?? 65536;
    if (!Number.isInteger(chunk) || chunk < 1 || chunk > 2 ** 28) throw invalidArgument(RangeError, 'chunkPairs must be an integer from 1 to 2^28');
    const stream = this.call(() => this.handle.pairStream());
    for (;;) {
      if (this.closed) throw new NeardupError('ERR_NEARDUP_CLOSED', 'the index is closed');
      const { a, b, done } = await nativeCall(stream.next(chunk));
      if (a.length > 0) yield { a, b };
      if (done) return;
    }
  }
  /** Ids in insertion order and, for each, its cluster's first inserted id (connected components of candidate pairs). */
  clusters(): { ids: BigUint64Array; representatives: BigUint64Array } {
    return this.call(() => this.handle.clusters());
  }
  /** Writes the index atomically (docs/FORMAT.md section 6). */
  save(path: string): Promise<void> {
    return nativeCall(this.open().save(path));
  }
  /**
   * Releases the index and returns at once. Calls already handed to the thread pool settle: a running one
   * completes (with its result), one still queued rejects with ERR_NEARDUP_CANCELLED; the memory goes when
   * the last of them is done. Later calls throw ERR_NEARDUP_CLOSED.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.handle.close();
  }

  private open(): NativeLshIndex {
    if (this.closed) throw new NeardupError('ERR_NEARDUP_CLOSED', 'the index is closed');
    return this.handle;
  }
  private call<T>(f: () => T): T {
    this.open();
    return nativeSync(f);
  }
}
