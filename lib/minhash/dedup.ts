// Near-duplicate removal with MinHash LSH: signatures -> band keys -> buckets (in memory, or spilled to
// sorted runs under a memory budget) -> candidate pairs (verified exactly by default, from the shingle sets of
// the candidates' texts) -> kept documents (doubri's rule by default). The native engine
// (native/core/minhash/lsh_dedup.h) does all of it; this file resolves options and feeds batches.
// docs/lsh.md describes the pipeline, its defaults and its guarantees.
import * as os from 'node:os';
import { NeardupError, formatBytes, nativeCall, nativeSync, invalidArgument } from '../util/errors';
import { capOption, expectInt, optionsObject } from '../util/validate';
import { native, type NativeDedupOptions, type NativeLshDedup, type LshProfile, type PackedTexts } from '../native/addon';
import { LshIndex as LshIndexClass, recallParam, resolveParams, type LshIndex } from './lsh';
import { IndexRun } from './dedup-index';
import { lockIndexFile } from '../io/locks';
import { NEARDUP_CJK, NEARDUP_SPLIT, type ShingleOptions } from '../text/shingles';
import { testPairBuffer } from '../util/test-hooks';
import {
  checkSignal, encodeBatch, encodedBatches, isPacked, knownTotal, raceAbort, throwIfAborted,
  type DocumentInput, type DocumentSource, type EncodedBatch, type LongCallOptions,
} from '../io/batching';

import type { DedupClustering, DedupOptions, DedupProfile, DedupSettings, DedupVerify } from './dedup-index';

export type { DedupClustering, DedupOptions, DedupProfile, DedupSettings, DedupVerify };

/**
 * The outcome of a dedup run. Documents are numbered 0..N-1 in the order they were given (null slots
 * included). With the default clustering 'kept' (doubri's rule), a document is dropped only for an earlier
 * kept document it matches (at or above the threshold with `verify: 'exact'`), and that document is its
 * representative. With clustering 'components', a cluster is a connected component of the reported pairs
 * and its representative is its first document, the one kept.
 */
export interface DedupResult {
  /**
   * Per document: the kept document it is a duplicate of (itself when it is kept: a unique document, the
   * first of a cluster, or a null slot). Keep document i iff representative[i] === i.
   */
  representative: Uint32Array;
  /** Per document: 1 when it is a near-duplicate of an earlier document (to be removed), else 0. */
  duplicate: Uint8Array;
  /** With `pairs`: the first document of each reported pair (pairA[i] < pairB[i]), in no particular order; empty otherwise. */
  pairA: Uint32Array;
  /** With `pairs`: the second document of each reported pair. */
  pairB: Uint32Array;
  /** With `pairs`: each pair's MinHash estimate of Jaccard similarity (fraction of equal signature values). */
  pairEstimate: Float32Array;
  /** With `pairs` and verify 'exact': each pair's exact Jaccard similarity of shingle sets. Empty otherwise. */
  pairExact: Float32Array;
  /**
   * Pairs sharing a band (0 unless pairs are enumerated: with `pairs`, or with `verify` 'estimate' or
   * clustering 'components'; the default, verify 'exact' with the keep rule, checks each document against kept
   * documents only, in order, and lists no pairs).
   */
  candidatePairs: number;
  /**
   * Pairs kept after verification (all candidates without `verify`; 0 unless pairs are enumerated; verify
   * 'exact' with the keep rule and no `pairs`: only each dropped document with its representative).
   */
  keptPairs: number;
  /** Documents that are not their cluster's representative (the sum of duplicate). */
  duplicates: number;
  /** Clusters of two or more documents. */
  clusters: number;
  /** Every byte written to temporary files in `tmp`: band runs, signatures and the texts kept for exact verification. */
  spilledBytes: number;
  /** Sorted runs written under the `memory` budget. */
  runs: number;
  /** Sorted runs of candidate pairs spilled to `tmp` (more candidate pairs than fit a quarter of `memory`). */
  pairRuns: number;
  /** With `pairsFile`: the file of the reported pairs (pairA etc. are then empty); removed by close(). */
  pairsFile?: string;
  /** The banding used: number of bands (see DedupOptions.banding). */
  b: number;
  /** Values per band (rows). */
  r: number;
  /** Values per signature. */
  numPerm: number;
  /** Every effective setting of the run, defaults filled in (what the CLI's JSON summary reports). */
  settings: DedupSettings;
  /**
   * With `index`: the documents dropped for an indexed document, ascending (their representative[] is
   * INDEX_REPRESENTATIVE), and that document's key (the earliest indexed document they match).
   */
  indexMatches?: { docs: Uint32Array; keys: BigUint64Array | string[] };
  /** With `index` and `pairs`: the reported pairs of a document and an indexed one, by document, then index order. */
  indexPairs?: { docs: Uint32Array; keys: BigUint64Array | string[]; estimate: Float32Array; exact: Float32Array };
}

/** representative[i] of a document dropped for an indexed document (DedupResult.indexMatches names it). */
export const INDEX_REPRESENTATIVE = 0xffffffff;

/**
 * @internal The documents a run drops (1) from its representatives: those kept for another document, and
 * with `dropAll` every member of a cluster of two or more, its kept document included (dedup --drop-all).
 */
export function droppedDocuments(rep: Uint32Array, dropAll: boolean): Uint8Array {
  const n = rep.length;
  const dropped = new Uint8Array(n);
  for (let d = 0; d < n; d++) if (rep[d] !== d) dropped[d] = 1;
  if (dropAll) {
    for (let d = 0; d < n; d++) if (rep[d] !== d && rep[d] < n) dropped[rep[d]] = 1;
  }
  return dropped;
}

/** From each document's representative: the documents that are not their own (duplicates), and the clusters of two or more. */
export function clusterCounts(rep: Uint32Array): { duplicates: number; clusters: number } {
  const n = rep.length;
  const many = new Uint8Array(n);
  let duplicates = 0, clusters = 0;
  for (let d = 0; d < n; d++) {
    if (rep[d] === d) continue;
    duplicates++;
    if (rep[d] < n && !many[rep[d]]) {
      many[rep[d]] = 1;
      clusters++;
    }
  }
  return { duplicates, clusters };
}

/** The shingling of a profile when not given: lower-cased char 5-grams; doubri-v1: the text as is. */
export function dedupShingleDefaults(profile: DedupProfile): Required<ShingleOptions> {
  // fast: neardup's word rule (docs/languages.md); the drop-in profiles keep str.split()
  const own = profile === 'fast';
  return {
    unit: 'char', n: 5, split: own ? NEARDUP_SPLIT : 'whitespace', cjk: own ? NEARDUP_CJK : 'chars', lowercase: profile !== 'doubri-v1',
    stripPunctuation: false, foldWhitespace: false, short: 'whole', normalize: 'none',
  };
}

const LSH_PROFILE: Record<DedupProfile, LshProfile> = { fast: 'fast', 'doubri-v1': 'doubri', datasketch: 'datasketch' };

/**
 * Working memory of one document, in bytes per byte of its UTF-8 text (peak RSS growth measured on one
 * 20-60 MB line of words, plus margin; bench notes in docs/lsh.md): shingling and signing hold the text, its
 * shingle offsets and hashes at once, and --verify exact also its sorted shingle set (built from its text when
 * it is in a candidate pair).
 */
export function bytesPerDocumentByte(profile: DedupProfile = 'fast', verify: DedupVerify = 'exact'): number {
  if (verify === 'exact') return 64;
  return profile === 'doubri-v1' ? 60 : profile === 'datasketch' ? 20 : 6;
}

/** Bytes of result per reported pair (`pairs`: two u32 documents, the estimate and the exact similarity). */
export const BYTES_PER_PAIR = 16;

/** Bytes each document costs outside the `memory` budget (its cluster representative, flags and offsets). */
export const BYTES_PER_DOCUMENT = 16;

/** Budgets under 64 MiB count as 64 MiB for the per-document limits (tiny budgets that force spilling still work). */
export const MIN_LIMIT_BUDGET = 64 * 2 ** 20;
const limitBudget = (memory: number) => Math.max(memory, MIN_LIMIT_BUDGET);

/**
 * With a `memory` budget, the largest document (UTF-8 bytes) whose working memory fits it, the most
 * documents whose fixed cost fits it, and the most reported pairs whose result fits it; Infinity without a
 * budget.
 */
export function dedupLimits(options: Pick<DedupOptions, 'profile' | 'verify' | 'memory'>): { documentBytes: number; documents: number; pairs: number } {
  if (!options.memory) return { documentBytes: Infinity, documents: Infinity, pairs: Infinity };
  const m = limitBudget(options.memory);
  return {
    documentBytes: Math.floor(m / bytesPerDocumentByte(options.profile, options.verify)), documents: Math.floor(m / BYTES_PER_DOCUMENT),
    pairs: Math.floor(m / BYTES_PER_PAIR),
  };
}

/** The error for a document over dedupLimits().documentBytes (`where`: "file:line: " or "document i: "). */
export function documentTooLarge(where: string, bytes: number, options: Pick<DedupOptions, 'profile' | 'verify' | 'memory'>): NeardupError {
  const f = bytesPerDocumentByte(options.profile, options.verify);
  return new NeardupError('ERR_NEARDUP_INVALID_INPUT',
    `${where}a document of ${formatBytes(bytes)} needs about ${f} bytes of working memory per byte with these options, ` +
    `more than the memory budget of ${formatBytes(limitBudget(options.memory!))} allows (documents up to ${formatBytes(Math.floor(limitBudget(options.memory!) / f))}); ` +
    'raise the budget (--memory) or split the document');
}

/** The CLI's error for more reported pairs than dedupLimits().pairs. */
export function tooManyPairs(options: Pick<DedupOptions, 'memory'>): NeardupError {
  const m = limitBudget(options.memory!);
  return new NeardupError('ERR_NEARDUP_TOO_MANY_RESULTS',
    `--pairs: more than ${Math.floor(m / BYTES_PER_PAIR)} reported pairs (${BYTES_PER_PAIR} bytes each) do not fit the memory ` +
    `budget of ${formatBytes(m)}; raise the budget (--memory)`);
}

/** The error for more documents than dedupLimits().documents. */
export function tooManyDocuments(count: number, options: Pick<DedupOptions, 'memory'>): NeardupError {
  return new NeardupError('ERR_NEARDUP_INVALID_INPUT',
    `${count} documents cost about ${BYTES_PER_DOCUMENT} bytes each outside the spilled data (their cluster representatives ` +
    `and flags), more than the memory budget of ${formatBytes(limitBudget(options.memory!))} allows (up to ` +
    `${Math.floor(limitBudget(options.memory!) / BYTES_PER_DOCUMENT)} documents); raise the budget (--memory)`);
}

/**
 * @internal A run's options resolved: the banding, every effective setting and the native session's options
 * (DedupSession; the sharded stages, lib/scale/stages.ts, build their sessions from the same).
 */
export function resolveDedupOptions(options: DedupOptions): { b: number; r: number; numPerm: number; settings: DedupSettings; native: NativeDedupOptions } {
  optionsObject(options);
  const profile = options.profile ?? 'fast';
  if (!(profile in LSH_PROFILE)) throw invalidArgument(RangeError, "profile must be 'fast', 'doubri-v1' or 'datasketch'");
  if (options.memory !== undefined) expectInt(options.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
  const threshold = options.threshold ?? 0.8;
  const verify = options.verify ?? (profile === 'doubri-v1' ? 'none' : 'exact');
  const clustering = options.clustering ?? 'kept';
  if (!['kept', 'components'].includes(clustering)) throw new RangeError("clustering must be 'kept' or 'components'");
  const banding = options.banding ?? 'auto';
  if (!['auto', 'datasketch', 'recall'].includes(banding)) throw invalidArgument(RangeError, "banding must be 'auto', 'datasketch' or 'recall'");
  const explicit = options.b !== undefined || options.r !== undefined;
  const doubriDefault = profile === 'doubri-v1' && options.threshold === undefined;
  const forRecall = !explicit && !doubriDefault && (banding === 'recall' || (banding === 'auto' && verify !== 'none'));
  const numPerm = options.numPerm ?? (profile === 'doubri-v1' ? 800 : 128);
  const lp = resolveParams({
    profile: LSH_PROFILE[profile], numPerm,
    ...(explicit ? { b: options.b, r: options.r }
      : forRecall ? recallParam(threshold, numPerm, options.minRecall ?? 0.99)
        : doubriDefault ? {} : { threshold }),
  });
  const {
    profile: _p, numPerm: _n, seed, threshold: _t, b: _b, r: _r, verify: _v, pairs: _q, maxPairs: _x, pairsFile: _pf, memory: _m, tmp: _d, banding: _g,
    minRecall: _mr, clustering: _c, index: _ix, indexOut: _io, indexKeys: _ik, indexIdText: _it, ...given
  } = options;
  // the same shingles for the signatures and for exact verification; undefined options take the defaults
  const shingle: Required<ShingleOptions> = { ...dedupShingleDefaults(profile) };
  for (const [k, v] of Object.entries(given)) if (v !== undefined) (shingle as unknown as Record<string, unknown>)[k] = v;
  const settings: DedupSettings = {
    profile, threshold, numPerm: lp.numPerm, b: lp.b, r: lp.r,
    seed: String(seed ?? (profile === 'datasketch' ? 1 : 0)),
    banding: explicit ? 'explicit' : forRecall ? 'recall' : doubriDefault ? 'doubri' : 'datasketch',
    shingle, verify, clustering,
  };
  return {
    b: lp.b, r: lp.r, numPerm: lp.numPerm, settings,
    native: {
      ...shingle, profile: lp.profile, numPerm: lp.numPerm, ...(seed !== undefined ? { seed } : {}), b: lp.b, r: lp.r,
      threshold, verify, clustering, pairs: options.pairs ?? false, maxPairs: capOption(options, 'maxPairs'),
      pairsFile: options.pairsFile ?? false, pairBuffer: testPairBuffer(),
      memory: options.memory ?? 0, tmp: options.tmp ?? os.tmpdir(),
    },
  };
}

/** A dedup run fed in batches (documents numbered in the order they are added). */
export class DedupSession {
  readonly b: number;
  readonly r: number;
  readonly numPerm: number;
  readonly settings: DedupSettings;
  private readonly handle: NativeLshDedup;
  private tail: Promise<unknown> = Promise.resolve();
  private issued: Promise<unknown> = Promise.resolve();
  private inFlight: Promise<unknown>[] = [];
  private failure: unknown;
  private added = 0;
  private closed = false;
  private readonly index?: IndexRun;
  private documents?: number;  // after finish()

  constructor(readonly options: DedupOptions = {}) {
    optionsObject(options);
    // with an index: its settings where none is given (checked against it below)
    this.index = IndexRun.of(options);
    if (this.index) options = this.index.options(options);
    const resolved = resolveDedupOptions(options);
    this.b = resolved.b;
    this.r = resolved.r;
    this.numPerm = resolved.numPerm;
    this.settings = resolved.settings;
    this.index?.check(this.settings);
    const explicit = options.b !== undefined || options.r !== undefined;
    if (this.index?.meta && explicit && this.settings.b === this.index.meta.settings.b && this.settings.r === this.index.meta.settings.r)
      this.settings.banding = this.index.meta.settings.banding as DedupSettings['banding'];  // (b, r) taken from the index
    const index = this.index?.native();
    this.handle = nativeSync(() => new native.LshDedup({ ...resolved.native, ...(index ? { index } : {}) }));
  }

  /**
   * Adds documents in order; null = a skipped line (keeps its number, never matches). Strings are encoded to
   * UTF-8 once, in slices that yield to the event loop; packed input (packTexts) is used as it is. Each text is
   * shingled and signed once on the thread pool (with verify 'exact' it is also kept in a temporary file, for
   * the candidate pairs' shingle sets in finish()); the documents enter the index in the order of the add()
   * calls, so a caller may start the next add() (and parse its input) before this one resolves. Bytes given
   * must not change until it resolves. When an add() fails, later add() and finish() calls fail too.
   * `ids`: the keys of the documents in the index written, with indexKeys 'id' (a string per document).
   */
  add(texts: ReadonlyArray<DocumentInput> | PackedTexts, ids?: ReadonlyArray<string>): Promise<void> {
    this.open();
    if (ids !== undefined && this.index?.keys !== 'id') throw invalidArgument(TypeError, "ids are taken only for an index with ids as keys (indexKeys: 'id')");
    return this.addEncoded(isPacked(texts) ? Promise.resolve(packedBatch(texts)) : encodeBatch(texts), ids);
  }

  /** @internal add() of a batch being encoded; `ids`: the documents' keys in the index written (indexKeys 'id'). */
  addEncoded(batch: Promise<EncodedBatch>, ids?: ReadonlyArray<string>): Promise<void> {
    this.open();
    batch.catch(() => undefined);  // observed below, in order; this only keeps an early rejection from being reported as unhandled
    // One native call per batch signs it on the pool (each text shingled once) and enters it into the index.
    // The calls are issued in the order of the add() calls as soon as each batch is encoded, and the native
    // side runs them one at a time in that order, so the pool does not wait for this thread between batches.
    // At most two are in flight natively (a waiting one holds a libuv thread). A batch that cannot be issued
    // (bad input, over the memory budget) fails the session: the documents after it would be misnumbered.
    const issue = this.issued.then(() => this.inFlight.length >= 2 ? this.inFlight.shift() : undefined).then(() => batch).then((b) => {
      if (this.failure) throw this.failure;
      this.open();
      // the budget bounds per-document work too: refuse what cannot fit it (dedupLimits)
      if (this.options.memory) this.checkLimits(b);
      const keys = this.index?.batchKeys(ids, b.count);  // the index's string keys (indexKeys 'id')
      const added = nativeCall(this.handle.add(b.packed, b.valid, keys));
      this.inFlight.push(added.catch(() => undefined));
      return { added };  // wrapped: not waited for here
    });
    issue.then(({ added }) => added.catch(() => undefined), (e: unknown) => { this.failure ??= e; });
    this.issued = issue.then(() => undefined, () => undefined);
    const done = this.tail.then(async () => {
      this.open();
      await (await issue).added;
    });
    this.tail = done.catch(() => undefined);
    return done;
  }

  /** Waits for every add() so far, then clusters. */
  async finish(): Promise<DedupResult> {
    this.open();
    await this.tail;
    this.open();
    if (this.failure) throw this.failure;  // an add() failed: the documents after it would be misnumbered
    const r = await nativeCall(this.handle.finish());
    const rep = r.representative;
    const duplicate = new Uint8Array(rep.length);
    for (let i = 0; i < rep.length; i++) duplicate[i] = rep[i] === i ? 0 : 1;
    this.documents = rep.length;
    return { ...r, duplicate, b: this.b, r: this.r, numPerm: this.numPerm, settings: this.settings };
  }

  /**
   * After finish() (made with `indexOut`): writes the index, atomically: the documents of `index` (if any) and
   * this run's kept documents, with the run's settings, its keys and the count of documents read so far.
   * A kept document whose key is already in the index, or is the key of another kept document (ids), is an
   * ERR_NEARDUP_DUPLICATE_KEY naming both (`describe(i)` names document i, e.g. "file:line"); nothing is
   * written then. Once per session; the session's temporary files go when it is done. Resolves to the number
   * of documents in the index written.
   *
   * Like LshIndex.save, it takes the file's writer lock (another process writing it is ERR_NEARDUP_IO) and
   * refuses with ERR_NEARDUP_CONFLICT (nothing written) when `path` is the file `index` was loaded from and that
   * file has changed since (another run extended it: this run's documents were not checked against its new
   * entries). `locked` (internal): the caller already holds that lock (the CLI takes it before loading the index).
   */
  async saveIndex(path: string, options: { describe?: (doc: number) => string; /** @internal */ locked?: boolean } = {}): Promise<{ entries: number }> {
    this.open();
    if (typeof path !== 'string') throw invalidArgument(TypeError, 'Expected path to be a string');
    optionsObject(options);
    if (!this.index?.write) throw invalidArgument(TypeError, 'saveIndex: this session was made without indexOut');
    if (this.documents === undefined) throw new NeardupError('ERR_NEARDUP_CANCELLED', 'saveIndex: call finish() first');
    const describe = options.describe ?? ((d: number) => `document ${d}`);
    const conflicts = await nativeCall(this.handle.keyConflicts(10));
    if (conflicts.length > 0) {
      const c = conflicts[0];
      throw new NeardupError('ERR_NEARDUP_DUPLICATE_KEY', `${describe(c.doc)}: kept, but its key ${c.key} is ` +
        (c.other < 0 ? 'already in the index' : `also the key of ${describe(c.other)}, kept too`) +
        (conflicts.length > 1 ? ` (and ${conflicts.length - 1}${conflicts.length === 10 ? ' or more' : ''} other kept documents)` : '') +
        '; the keys of kept documents must be unique: nothing was written');
    }
    const lock = options.locked === true ? null : lockIndexFile(path);
    try {
      this.index.prior?.checkUnchanged(path);
      return await nativeCall(this.handle.saveIndex(path, JSON.stringify(this.index.metaAfter(this.settings, this.documents))));
    } finally {
      lock?.release();
    }
  }

  /**
   * Ends the session and returns at once (also while finish() runs: that finish() still resolves with its
   * result, and the session's memory and temporary files go when it returns). Work handed to the thread pool
   * but not started rejects with ERR_NEARDUP_CANCELLED, add()s still waiting in this object with
   * ERR_NEARDUP_CLOSED; later calls throw ERR_NEARDUP_CLOSED.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.handle.close();
  }

  private open(): void {
    if (this.closed) throw new NeardupError('ERR_NEARDUP_CLOSED', 'the dedup session is closed');
  }

  private checkLimits(b: EncodedBatch): EncodedBatch {
    // the run's own profile and verify (their defaults resolved), not just what was given
    const o = { profile: this.settings.profile, verify: this.settings.verify, memory: this.options.memory };
    const lim = dedupLimits(o);
    if (this.added + b.count > lim.documents) throw tooManyDocuments(this.added + b.count, o);
    const off = b.packed.offsets;
    for (let i = 0; i < b.count; i++) {
      const bytes = Number(off[i + 1]) - Number(off[i]);
      if (bytes > lim.documentBytes) throw documentTooLarge(`document ${this.added + i}: `, bytes, o);
    }
    this.added += b.count;
    return b;
  }
}

function packedBatch(p: PackedTexts): EncodedBatch {
  const n = p.offsets.length - 1;
  return { packed: p, count: Math.max(n, 0), bytes: n > 0 ? Number(p.offsets[n]) - Number(p.offsets[0]) : 0 };
}

/**
 * Options of dedup(): the run's options, plus an AbortSignal and a progress callback; `index` may also be the
 * path of a saved index (loaded, and closed at the end), and `saveIndex` a path where the index is written after
 * the run (the documents of `index` and the kept documents of this one: DedupSession.saveIndex).
 */
export interface DedupCallOptions extends Omit<DedupOptions, 'index' | 'indexOut'>, LongCallOptions {
  index?: DedupOptions['index'] | string;
  saveIndex?: string;
}

/**
 * Deduplicates documents in one call: an array (strings, UTF-8 bytes, null for a skipped slot), packed input
 * (packTexts), or an iterable / async iterable of documents, read once in order (e.g. a generator over a
 * file). Documents are encoded once, in slices that yield to the event loop, and signed and indexed on the
 * native thread pool in batches of at most 4096 documents or about 4 MiB of text, two batches in flight.
 * `signal` stops the run (ERR_NEARDUP_ABORTED; temporary files are removed); `onProgress` is called after
 * each batch is indexed.
 */
export async function dedup(documents: DocumentSource, options: DedupCallOptions = {}): Promise<DedupResult> {
  const { signal: sig, onProgress, index: indexOption, saveIndex, ...runOptions } = options;
  const signal = checkSignal(sig);
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw Object.assign(new TypeError('onProgress must be a function'), { code: 'ERR_NEARDUP_INVALID_ARGUMENT' });
  if (saveIndex !== undefined && typeof saveIndex !== 'string') throw invalidArgument(TypeError, 'Expected saveIndex to be a path (string)');
  throwIfAborted(signal);
  const loaded = typeof indexOption === 'string' ? await LshIndexClass.loadAsync<bigint | string>(indexOption) : undefined;
  let s: DedupSession;
  try {
    s = new DedupSession({ ...runOptions, index: (loaded ?? indexOption) as DedupOptions['index'], ...(saveIndex !== undefined ? { indexOut: true } : {}) });
  } catch (e) {
    loaded?.close();
    throw e;
  }
  const total = knownTotal(documents);
  let done = 0, bytes = 0;
  try {
    const pending: Promise<void>[] = [];
    for await (const batch of encodedBatches(documents, signal)) {
      const p = s.addEncoded(Promise.resolve(batch)).then(() => {
        done += batch.count;
        bytes += batch.bytes;
        if (!signal?.aborted) onProgress?.({ documents: done, total, bytes });
      });
      p.catch(() => undefined);
      pending.push(p);
      if (pending.length >= 2) await raceAbort(pending.shift()!, signal);
    }
    await raceAbort(Promise.all(pending), signal);
    const result = await raceAbort(s.finish(), signal);
    if (saveIndex !== undefined) await raceAbort(s.saveIndex(saveIndex), signal);
    return result;
  } finally {
    s.close();
    loaded?.close();
  }
}
