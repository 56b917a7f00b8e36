// MinHash LSH: an index of signatures split into b bands of r values; two signatures are candidates when
// they agree on every value of at least one band (probability 1-(1-s^r)^b for Jaccard s).
import { NeardupError, nativeCall, nativeSync, invalidArgument } from '../util/errors';
import { native, type LshProfile, type NativeLshIndex, type NativeLshParams } from '../native/addon';
import { capOption, expectInt, expectNumber, expectString, expectU64, optionsObject } from '../util/validate';
import { SavedFiles, fileIdentity } from '../io/locks';


export type { LshProfile } from '../native/addon';

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
  /** Keys: 'int' (u64: bigint or safe integer numbers in, bigint out; default) or 'string' (UTF-8). */
  keyType?: LshKeyType;
}

/** The kinds of keys an index holds: one kind per index. */
export type LshKeyType = 'int' | 'string';
/** A key: a bigint (integer keys) or a string. */
export type LshKey = bigint | string;
/** Keys in results: a BigUint64Array for integer keys, an array of strings for string keys. */
export type LshKeys<K extends LshKey> = K extends string ? string[] : BigUint64Array;

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
  if (p.keyType !== undefined && p.keyType !== 'int' && p.keyType !== 'string') throw invalidArgument(RangeError, "keyType must be 'int' or 'string'");
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

export { DEFAULT_MAX_RESULTS } from '../util/validate';

// A lone surrogate has no UTF-8 form: two different strings would become the same key.
const LONE_SURROGATE = /\p{Cs}/u;

/** A string key: well-formed UTF-16 (no lone surrogate). */
export function checkStringKey(k: unknown, what: string): string {
  if (typeof k !== 'string') throw invalidArgument(TypeError, `Expected ${what} to be a string (this index has string keys)`);
  if (LONE_SURROGATE.test(k)) throw invalidArgument(RangeError, `${what} holds a lone surrogate (no UTF-8 form)`);
  return k;
}

function toKeys(keys: unknown, keyType: LshKeyType): BigUint64Array | string[] {
  if (keyType === 'string') {
    if (!Array.isArray(keys)) throw invalidArgument(TypeError, 'Expected keys to be an array of strings (this index has string keys)');
    keys.forEach((k, i) => checkStringKey(k, `keys[${i}]`));
    return keys as string[];
  }
  if (keys instanceof BigUint64Array) return keys;
  if (!Array.isArray(keys) && !(ArrayBuffer.isView(keys) && !(keys instanceof DataView)))
    throw invalidArgument(TypeError, 'Expected keys to be a BigUint64Array or an array of integers (this index has integer keys)');
  const list = keys as ArrayLike<unknown>;
  const out = new BigUint64Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = expectU64(list[i] as number | bigint, `keys[${i}]`, true);
  return out;
}

/** What an index holds: its live entries, those of the file it was loaded from, and the changes since. */
export interface LshIndexInfo {
  /** Live entries (the same as `size`). */
  size: number;
  /** Entries of the file the index was loaded from (0 for a new index). */
  mapped: number;
  /** Of those, entries removed since loading. */
  removed: number;
  /** Entries inserted since loading (or creation), not removed. */
  added: number;
  /** Format version of the file it was loaded from (1 or 2; 0 for a new index). */
  fileVersion: number;
  /** Whether it keeps each entry's signature / per-entry data (indexes written by dedup). */
  storesSignatures: boolean;
  storesData: boolean;
}

/**
 * A MinHash LSH index with datasketch MinHashLSH's semantics: `insert(keys, signatures)` refuses a key already
 * present (ERR_NEARDUP_DUPLICATE_KEY, datasketch's ValueError), `query(signature)` returns the keys sharing at
 * least one band, `remove(key)` refuses an absent key (ERR_NEARDUP_KEY_NOT_FOUND, datasketch's KeyError),
 * `has(key)` is `key in lsh`, and (b, r) are fixed when the index is made. Keys are 64-bit integers (the
 * default: bigint, or safe integer numbers when inserting) or strings (`keyType: 'string'`), one kind per
 * index; write `new LshIndex<string>({ keyType: 'string' })` for typed string results. Signatures are flat
 * arrays (N x numPerm): Uint32Array, or BigUint64Array with valueBytes 8 (fast profile).
 *
 * Results list entries in insertion order (for a loaded index: the file's entries first, in their original
 * order). `LshIndex.load(path)` maps a saved index; it stays appendable: inserts go to memory on top of the
 * mapped file, removals of saved entries are remembered, and `save()` writes everything as one file.
 */
export class LshIndex<K extends LshKey = bigint> {
  private readonly handle: NativeLshIndex;
  private closed = false;
  /** The files this index was loaded from or saved to: save() checks them. */
  private readonly files = new SavedFiles();
  private loadedFrom?: string;
  /** The kind of keys, fixed when the index is made (or by the file it was loaded from). */
  readonly keyType: LshKeyType;

  constructor(params: LshParams = {}, handle?: NativeLshIndex) {
    this.handle = handle ?? nativeSync(() => new native.LshIndex({ ...resolveParams(params), keyType: params.keyType ?? 'int' }));
    this.keyType = nativeSync(() => this.handle.params().keyType);
  }

  /**
   * Opens a saved index (version 2, or version 1 files of earlier releases, converted in memory as they load),
   * memory-mapped, on the calling thread: `loadAsync` does it on the thread pool. `verify` (default true) reads
   * the whole file and checks its checksum and structure; `verify: false` checks only its size and layout
   * (for huge trusted files: a damaged byte may then give wrong answers). The result is appendable.
   */
  static load<K extends LshKey = bigint>(path: string, options: { verify?: boolean } = {}): LshIndex<K> {
    expectString(path, 'path');
    optionsObject(options);
    const identity = fileIdentity(path);  // before: a file replaced meanwhile then counts as changed (refused, never lost)
    const ix = new LshIndex<K>({}, nativeSync(() => new native.LshIndex({ path, verify: options.verify ?? true })));
    ix.files.track(path, identity);
    ix.loadedFrom = path;
    return ix;
  }

  /** load() on the thread pool (the event loop keeps running while a large file is verified). */
  static async loadAsync<K extends LshKey = bigint>(path: string, options: { verify?: boolean } = {}): Promise<LshIndex<K>> {
    expectString(path, 'path');
    optionsObject(options);
    const identity = fileIdentity(path);
    const h = await nativeCall(native.LshIndex.loadAsync(path, { verify: options.verify ?? true }));
    const ix = new LshIndex<K>({}, h);
    ix.files.track(path, identity);
    ix.loadedFrom = path;
    return ix;
  }

  get params(): NativeLshParams {
    return this.call(() => this.handle.params());
  }
  /** Live entries. */
  get size(): number {
    return this.call(() => this.handle.size());
  }
  get info(): LshIndexInfo {
    return this.call(() => this.handle.info());
  }
  /** A string saved with the index ('' when none); dedup keeps its settings here (JSON). */
  get metadata(): string {
    return this.call(() => this.handle.metadata());
  }
  set metadata(value: string) {
    expectString(value, 'metadata');
    this.call(() => this.handle.setMetadata(value));
  }

  /**
   * Inserts signatures under keys (on the thread pool). All or nothing: a key already in the index, or given
   * twice, is ERR_NEARDUP_DUPLICATE_KEY (naming it) and nothing is inserted.
   */
  insert(keys: K extends string ? ReadonlyArray<string> : BigUint64Array | ArrayLike<number | bigint>, signatures: Sig): Promise<void> {
    const h = this.open();
    return nativeCall(h.insert(toKeys(keys, this.keyType), signatures));
  }
  insertSync(keys: K extends string ? ReadonlyArray<string> : BigUint64Array | ArrayLike<number | bigint>, signatures: Sig): void {
    const k = toKeys(keys, this.keyType);
    this.call(() => this.handle.insertSync(k, signatures));
  }
  /** Keys of the live entries sharing at least one band with the signature, in insertion order. */
  query(signature: Sig): LshKeys<K> {
    return this.call(() => this.handle.query(signature)) as LshKeys<K>;
  }
  /**
   * Many queries on the thread pool: result i is ids[offsets[i] .. offsets[i+1]). The total number of keys is
   * capped by `maxResults` (default DEFAULT_MAX_RESULTS, 2^25 = 33,554,432: 256 MiB of integer keys): beyond it
   * the call rejects with ERR_NEARDUP_TOO_MANY_RESULTS (near-identical documents make results quadratic).
   */
  queryBatch(signatures: Sig, options: { maxResults?: number } = {}): Promise<{ ids: LshKeys<K>; offsets: Uint32Array }> {
    const h = this.open();
    return nativeCall(h.queryBatch(signatures, capOption(options, 'maxResults'))) as Promise<{ ids: LshKeys<K>; offsets: Uint32Array }>;
  }
  /** Removes an entry; ERR_NEARDUP_KEY_NOT_FOUND when the key is not in the index (datasketch's KeyError). */
  remove(key: K | (K extends bigint ? number : never)): void {
    const k = this.checkKey(key, 'key');
    this.call(() => this.handle.remove(k));
  }
  /** Whether the key is in the index (datasketch's `key in lsh`). */
  has(key: K | (K extends bigint ? number : never)): boolean {
    const k = this.checkKey(key, 'key');
    return this.call(() => this.handle.has(k));
  }
  /**
   * Every pair of keys (a inserted before b) sharing a band, in insertion order of a, then b. At most `maxPairs`
   * (default DEFAULT_MAX_RESULTS, 2^25 pairs = 512 MiB), else ERR_NEARDUP_TOO_MANY_RESULTS; memory stays about the
   * pairs returned. Runs on the calling thread: for large indexes use candidatePairsStream (or clusters()).
   */
  candidatePairs(options: { maxPairs?: number } = {}): { a: LshKeys<K>; b: LshKeys<K> } {
    const max = capOption(options, 'maxPairs');
    return this.call(() => this.handle.candidatePairs(max)) as { a: LshKeys<K>; b: LshKeys<K> };
  }
  /**
   * The same pairs, in the same order, as chunks of at most `chunkPairs` (default 65536) computed on the
   * thread pool; no cap, and memory stays one chunk (plus 8 bytes per band for each entry of a loaded file).
   * The index must not change while the pairs are read (a later chunk then rejects).
   */
  async *candidatePairsStream(options: { chunkPairs?: number } = {}): AsyncGenerator<{ a: LshKeys<K>; b: LshKeys<K> }> {
    if (options === null || typeof options !== 'object') throw invalidArgument(TypeError, 'Expected options to be an object');
    const chunk = options.chunkPairs ?? 65536;
    if (!Number.isInteger(chunk) || chunk < 1 || chunk > 2 ** 28) throw invalidArgument(RangeError, 'chunkPairs must be an integer from 1 to 2^28');
    const stream = this.call(() => this.handle.pairStream());
    for (;;) {
      if (this.closed) throw new NeardupError('ERR_NEARDUP_CLOSED', 'the index is closed');
      const { a, b, done } = await nativeCall(stream.next(chunk));
      if (a.length > 0) yield { a, b } as { a: LshKeys<K>; b: LshKeys<K> };
      if (done) return;
    }
  }
  /** Keys in insertion order and, for each, its cluster's first inserted key (connected components of candidate pairs). */
  clusters(): { ids: LshKeys<K>; representatives: LshKeys<K> } {
    return this.call(() => this.handle.clusters()) as { ids: LshKeys<K>; representatives: LshKeys<K> };
  }
  /**
   * Writes the whole index (the loaded file's live entries, then the inserted ones) as one file, atomically
   * (docs/FORMAT.md section 6). Saving over the file the index was loaded from is safe: the new file is written
   * under a temporary name and renamed over it while the old one stays mapped (on Windows, which cannot replace
   * a mapped file, save to another path instead).
   *
   * Two writers cannot lose each other's changes: save takes the file's writer lock (`.NAME.neardup-lock`
   * beside it; another process writing it, or a save of this process in progress, is ERR_NEARDUP_IO), and
   * onto a file this index was loaded from or saved to, it refuses with ERR_NEARDUP_CONFLICT (naming the file,
   * nothing written) when that file has changed since (another device, inode, size or modification time:
   * another process saved there): load it again and redo the changes, or pass `overwrite: true` to replace it
   * anyway. Other files (a new index, another path) are replaced as they are.
   */
  save(path: string, options: { overwrite?: boolean } = {}): Promise<void> {
    expectString(path, 'path');
    optionsObject(options);
    if (options.overwrite !== undefined && typeof options.overwrite !== 'boolean') throw invalidArgument(TypeError, 'Expected overwrite to be a boolean');
    const h = this.open();
    return this.files.save(path, options.overwrite === true, () => nativeCall(h.save(path)));
  }
  /**
   * @internal ERR_NEARDUP_CONFLICT when `path` is a file this index was loaded from or saved to and it has
   * changed since (call it holding the file's lock).
   */
  checkUnchanged(path: string): void {
    expectString(path, 'path');
    this.files.check(path);
  }
  /**
   * Releases the index and returns at once. Calls already handed to the thread pool settle: a running one
   * completes (with its result), one still queued rejects with ERR_NEARDUP_CANCELLED; the memory (and the map)
   * goes when the last of them is done. Later calls throw ERR_NEARDUP_CLOSED.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.handle.close();
  }

  /** @internal the path the index was loaded from (undefined for a new index): named in errors. */
  get path(): string | undefined {
    return this.loadedFrom;
  }

  /** @internal the native object (for dedup sessions that read the index). */
  get nativeHandle(): NativeLshIndex {
    return this.open();
  }

  private checkKey(key: unknown, what: string): bigint | string {
    return this.keyType === 'string' ? checkStringKey(key, what) : expectU64(key as number | bigint, what, true);
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
