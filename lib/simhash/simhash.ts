// lib/simhash/ - SimHash (mirror of native/core/simhash): this file. Imports text/, native/, util/ only.
//
// SimHash: 64-bit fingerprints of documents, an online k-bit Hamming index (SimhashIndex) and batch
// all-pairs within k bits. 64-bit values (fingerprints, ids) are bigint / BigUint64Array.
import { invalidArgument, nativeCall, nativeSync } from '../util/errors';
import { capOption, expectU64, optionsObject, toU64Array } from '../util/validate';
import { native, type NativeSimhashIndex, type TextInput } from '../native/addon';
import type { ShingleOptions } from '../text/shingles';
import { SavedFiles, fileIdentity } from '../io/locks';

export interface SimhashOptions extends ShingleOptions {
  /**
   * 'default' (word 3-grams of lower-cased text split at Unicode word boundaries, each letter a word in scripts
   * without spaces: split 'unicode', cjk 'chars', docs/languages.md; fast64) or 'seomoz' (seomoz simhash-py: word
   * 4-grams, none for texts under 4 words, MD5 64-bit feature hash). Other options override the profile.
   */
  profile?: 'default' | 'seomoz';
  /** 64-bit shingle hash: 'fast64', 'murmur3_64' or 'md5_64'. */
  hash?: 'fast64' | 'murmur3_64' | 'md5_64';
  seed?: number | bigint;
  /**
   * 'binary' (each distinct shingle votes once; the default profile's) or 'count' (every occurrence votes, as
   * seomoz; the seomoz profile's). With counts one repeated shingle can decide every bit (docs/simhash.md).
   */
  weighting?: 'count' | 'binary';
}

export type U64Input = BigUint64Array | ReadonlyArray<bigint>;
const toU64 = (v: U64Input, what = 'fingerprints'): BigUint64Array => toU64Array(v, what);

/** One fingerprint per document, on the native thread pool. */
export function simhashFingerprints(texts: TextInput, options?: SimhashOptions): Promise<BigUint64Array> {
  return nativeCall(native.simhashFingerprints(texts, options));
}

/** The same, synchronously on the calling thread: for small inputs. */
export function simhashFingerprintsSync(texts: TextInput, options?: SimhashOptions): BigUint64Array {
  return nativeSync(() => native.simhashFingerprintsSync(texts, options));
}

/**
 * The fingerprint of a list of 64-bit features: each votes +1 (or +weight) on its 1 bits and -1 (-weight)
 * on its 0 bits; a bit is set iff its total is > 0 (seomoz simhash's compute()).
 */
export function simhashCompute(features: U64Input, weights?: Float64Array | ReadonlyArray<number>): bigint {
  const w = weights === undefined ? undefined : weights instanceof Float64Array ? weights : Float64Array.from(weights);
  return nativeSync(() => native.simhashCompute(toU64(features), w));
}

/** Number of differing bits of two 64-bit values. */
export function hammingDistance(a: bigint, b: bigint): number {
  let x = expectU64(a, 'a') ^ expectU64(b, 'b');
  let n = 0;
  while (x) {
    x &= x - 1n;
    n++;
  }
  return n;
}

/** The number of blocks m that makes queries cheapest for about n fingerprints and distance k (k <= 8). */
export function pickSimhashBlocks(n: number, distance: number): number {
  return nativeSync(() => native.simhashPickBlocks(n, distance));
}

export interface SimhashFindAllOptions {
  /** Number of blocks m (m > distance). Default: pickSimhashBlocks(n, distance). */
  blocks?: number;
  /** Maximum Hamming distance k, 0..8. Default 3. */
  distance?: number;
  /** Document ids, one per fingerprint (default: the index 0..n-1). */
  ids?: U64Input;
  /** Also return connected components (clusters of two or more ids). */
  clusters?: boolean;
  /**
   * Return the pairs (default true). With `pairs: false` and `clusters`, the clusters are found without
   * holding the pairs (memory: 4 bytes per fingerprint per thread), however many there are.
   */
  pairs?: boolean;
  /**
   * The cap on pairs (default DEFAULT_MAX_RESULTS, 2^25 pairs = 512 MiB of result): beyond it the call
   * rejects with ERR_NEARDUP_TOO_MANY_RESULTS, checked while the pairs are found (memory stays about the cap).
   * n identical fingerprints make n(n-1)/2 pairs. Pairs are counted before ids that repeat are merged. For
   * more, read them with simhashFindAllStream, or ask for clusters only.
   */
  maxPairs?: number;
}

export interface SimhashFindAllResult {
  /** Pairs of ids (a < b) within the distance, sorted: a0, b0, a1, b1, ... Identical fingerprints are pairs. */
  pairs: BigUint64Array;
  /** With `clusters`: cluster i is ids[offsets[i] .. offsets[i+1]), each ascending, clusters by smallest id. */
  clusters?: { offsets: Uint32Array; ids: BigUint64Array };
}

function findAllArgs(fingerprints: U64Input, options: SimhashFindAllOptions = {}) {
  optionsObject(options);
  const fps = toU64(fingerprints);
  const ids = options.ids !== undefined ? toU64(options.ids, 'ids') : undefined; // undefined: the native side uses 0..n-1
  const distance = options.distance ?? 3;
  const blocks = options.blocks ?? (Number.isInteger(distance) && distance >= 0 && distance <= 8 ? pickSimhashBlocks(fps.length, distance) : 6);
  return { fps, ids, opts: { blocks, distance, clusters: Boolean(options.clusters), pairs: options.pairs ?? true } };
}

function findAllResult(r: { pairs: BigUint64Array; clusterOffsets?: Uint32Array; clusterIds?: BigUint64Array }): SimhashFindAllResult {
  const out: SimhashFindAllResult = { pairs: r.pairs };
  if (r.clusterOffsets && r.clusterIds) out.clusters = { offsets: r.clusterOffsets, ids: r.clusterIds };
  return out;
}

/** All pairs within `distance` bits (and optionally clusters), on the native thread pool. */
export async function simhashFindAll(fingerprints: U64Input, options?: SimhashFindAllOptions): Promise<SimhashFindAllResult> {
  const { fps, ids, opts } = findAllArgs(fingerprints, options);
  const max = capOption(options ?? {}, 'maxPairs');
  return findAllResult(await nativeCall(native.simhashFindAll(ids, fps, opts, max)));
}

export function simhashFindAllSync(fingerprints: U64Input, options?: SimhashFindAllOptions): SimhashFindAllResult {
  const { fps, ids, opts } = findAllArgs(fingerprints, options);
  const max = capOption(options ?? {}, 'maxPairs');
  return findAllResult(nativeSync(() => native.simhashFindAllSync(ids, fps, opts, max)));
}

export interface SimhashFindAllStreamOptions extends Omit<SimhashFindAllOptions, 'clusters' | 'pairs' | 'maxPairs'> {
  /** Pairs per chunk, about (a chunk holds whole first ids; default 1,048,576; 1 .. 2^28). */
  chunkPairs?: number;
}

/**
 * The pairs of simhashFindAll, in the same order (sorted, distinct, a < b), as chunks of about `chunkPairs`
 * pairs computed on the thread pool, one at a time: no cap, and memory stays the fingerprints and ids
 * (16 bytes each), 4 bytes per fingerprint per thread and one chunk. Each chunk is one search restricted
 * to a range of first ids (plus one counting search when the pairs do not fit in the first chunk).
 */
export async function* simhashFindAllStream(
  fingerprints: U64Input, options: SimhashFindAllStreamOptions = {},
): AsyncGenerator<{ a: BigUint64Array; b: BigUint64Array }> {
  const { fps, ids, opts } = findAllArgs(fingerprints, options);
  const chunk = options.chunkPairs ?? 1 << 20;
  if (!Number.isInteger(chunk) || chunk < 1 || chunk > 2 ** 28) throw invalidArgument(RangeError, 'chunkPairs must be an integer from 1 to 2^28');
  const stream = nativeSync(() => native.simhashPairStream(ids, fps, opts));
  for (;;) {
    const { a, b, done } = await nativeCall(stream.next(chunk));
    if (a.length > 0) yield { a, b };
    if (done) return;
  }
}

export interface SimhashIndexOptions {
  /** Number of blocks m, distance < m <= 64, C(m, distance) <= 4096 tables. Default 6. */
  blocks?: number;
  /** Maximum Hamming distance k, 0..8. Default 3. */
  distance?: number;
}

export interface SimhashIndexStats {
  blocks: number;
  distance: number;
  tables: number;
  /** Live entries. */
  size: number;
  /** Entries including removed ones not yet compacted away. */
  slots: number;
  tombstones: number;
  /** Newest entries not yet merged into a table run (scanned directly by queries). */
  buffered: number;
  /** Bytes of all tables (sorted entries and directories). */
  tableBytes: number;
  /** Bytes of the fingerprint and id arrays. */
  entryBytes: number;
  /** True while answering from a memory-mapped file. */
  mapped: boolean;
}

export interface SimhashFirstMatches {
  /** ids[i] is a match of query i when found[i] is 1. */
  ids: BigUint64Array;
  found: Uint8Array;
}

export interface SimhashAllMatches {
  /** Query i's matches are ids[offsets[i] .. offsets[i+1]), ascending. */
  offsets: Uint32Array;
  ids: BigUint64Array;
}

function overwriteOption(options: { overwrite?: boolean }): boolean {
  optionsObject(options);
  if (options.overwrite !== undefined && typeof options.overwrite !== 'boolean') throw invalidArgument(TypeError, 'Expected overwrite to be a boolean');
  return options.overwrite === true;
}

/**
 * An online index of (id, fingerprint) entries answering "which entries are within k bits of q".
 * Ids are unique u64 values; many ids may share a fingerprint; identical fingerprints match.
 */
export class SimhashIndex {
  #native: NativeSimhashIndex;
  /** The files this index was opened from or saved to: save() checks them. */
  #files = new SavedFiles();

  constructor(options?: SimhashIndexOptions);
  /** @internal */
  constructor(options: SimhashIndexOptions | undefined, handle: NativeSimhashIndex);
  constructor(options?: SimhashIndexOptions, handle?: NativeSimhashIndex) {
    this.#native = handle ?? nativeSync(() => new native.SimhashIndex(options));
  }

  /** Opens a file written by save(), memory-mapped (verify: check its checksum first, default true). */
  static open(path: string, options?: { verify?: boolean }): SimhashIndex {
    const identity = typeof path === 'string' ? fileIdentity(path) : null;  // before: a file replaced meanwhile counts as changed
    const h = nativeSync(() => native.SimhashIndex.open(path, options));
    const ix = new SimhashIndex(undefined, h);
    ix.#files.track(path, identity);
    return ix;
  }

  /**
   * open() on the thread pool: the mapping and, with verify (default true), the checksum pass over the whole
   * file happen off the JS thread. Rejects with ERR_NEARDUP_IO / ERR_NEARDUP_CORRUPT / ERR_NEARDUP_UNSUPPORTED.
   */
  static openAsync(path: string, options?: { verify?: boolean }): Promise<SimhashIndex> {
    // argument mistakes throw here, as every other call does; run-time failures reject
    const identity = typeof path === 'string' ? fileIdentity(path) : null;
    const p = nativeCall(native.SimhashIndex.openAsync(path, options));
    return p.then((h) => {
      const ix = new SimhashIndex(undefined, h);
      ix.#files.track(path, identity);
      return ix;
    });
  }

  /** Adds entries; fails without changing anything when an id is already present or repeated. */
  insert(ids: U64Input, fingerprints: U64Input): void {
    nativeSync(() => this.#native.insert(toU64(ids, 'ids'), toU64(fingerprints)));
  }
  insertAsync(ids: U64Input, fingerprints: U64Input): Promise<void> {
    return nativeCall(this.#native.insertAsync(toU64(ids, 'ids'), toU64(fingerprints)));
  }
  /** Removes the ids that are present; returns how many were. */
  remove(ids: U64Input): number {
    return nativeSync(() => this.#native.remove(toU64(ids, 'ids')));
  }
  removeAsync(ids: U64Input): Promise<number> {
    return nativeCall(this.#native.removeAsync(toU64(ids, 'ids')));
  }
  has(id: bigint): boolean {
    return nativeSync(() => this.#native.has(expectU64(id, 'id')));
  }
  /** One id within the distance of `fingerprint`, or null. */
  findFirst(fingerprint: bigint): bigint | null {
    return nativeSync(() => this.#native.findFirst(expectU64(fingerprint, 'fingerprint')));
  }
  /** Every id within the distance, ascending. */
  findAll(fingerprint: bigint): BigUint64Array {
    return nativeSync(() => this.#native.findAll(expectU64(fingerprint, 'fingerprint')));
  }
  findFirstMany(fingerprints: U64Input): Promise<SimhashFirstMatches> {
    return nativeCall(this.#native.findFirstMany(toU64(fingerprints)));
  }
  findFirstManySync(fingerprints: U64Input): SimhashFirstMatches {
    return nativeSync(() => this.#native.findFirstManySync(toU64(fingerprints)));
  }
  findAllMany(fingerprints: U64Input): Promise<SimhashAllMatches> {
    return nativeCall(this.#native.findAllMany(toU64(fingerprints)));
  }
  findAllManySync(fingerprints: U64Input): SimhashAllMatches {
    return nativeSync(() => this.#native.findAllManySync(toU64(fingerprints)));
  }
  /** Drops removed entries and merges everything into one run. */
  compact(): void {
    nativeSync(() => this.#native.compact());
  }
  /**
   * Compacts, then writes the index to `path` atomically. As LshIndex.save: under the file's writer lock
   * (another process saving it: ERR_NEARDUP_IO), and onto a file this index was opened from or saved to, refused
   * with ERR_NEARDUP_CONFLICT when that file changed since (another process saved there), unless `overwrite`.
   */
  save(path: string, options: { overwrite?: boolean } = {}): Promise<void> {
    const overwrite = overwriteOption(options);
    const p = () => nativeCall(this.#native.save(path));
    if (typeof path !== 'string') return p();  // the binding's TypeError
    return this.#files.save(path, overwrite, p);
  }
  saveSync(path: string, options: { overwrite?: boolean } = {}): void {
    const overwrite = overwriteOption(options);
    const w = () => nativeSync(() => this.#native.saveSync(path));
    if (typeof path !== 'string') return w();
    this.#files.saveSync(path, overwrite, w);
  }
  stats(): SimhashIndexStats {
    return nativeSync(() => this.#native.stats());
  }
  /** Releases the index; operations still queued are rejected, running ones finish. */
  close(): void {
    this.#native.close();
  }
}


