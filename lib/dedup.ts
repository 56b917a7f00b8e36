// Near-duplicate removal with MinHash LSH: signatures -> band keys -> buckets (in memory, or spilled to
// sorted runs under a memory budget) -> candidate pairs (verified exactly by default) -> kept documents
// (doubri's rule by default). docs/lsh.md describes the pipeline, its defaults and its guarantees.
import * as os from 'node:os';
import { NeardupError, nativeCall, nativeSync } from './errors';
import { native, type NativeLshDedup, type LshProfile, type PackedTexts } from './native';
import { recallParam, resolveParams } from './lsh';
import { shingleHashes, type ShingleOptions } from './shingles';
import { minhash } from './minhash';
import {
  checkSignal, encodeBatch, encodedBatches, isPacked, knownTotal, raceAbort, throwIfAborted,
  type DocumentInput, type DocumentSource, type EncodedBatch, type LongCallOptions,
} from './batching';

export type DedupProfile = 'fast' | 'doubri-v1' | 'datasketch';
export type DedupVerify = 'none' | 'estimate' | 'exact';
export type DedupClustering = 'kept' | 'components';

/**
 * Options of dedup(). The defaults are the verified answer at the threshold: char 5-grams of the lower-cased
 * text, recall banding, exact verification of candidate pairs (shingle sets in a temporary file), doubri's
 * keep rule. Profile 'doubri-v1' instead defaults to doubri 1.0 exactly: the text as is, 40 x 20 bands, no
 * verification. Every effective value is in `DedupSession.settings`.
 */
export interface DedupOptions extends ShingleOptions {
  /** MinHash profile. Default 'fast'. */
  profile?: DedupProfile;
  /** Values per signature (default: 128; doubri-v1: 800). */
  numPerm?: number;
  /** MinHash seed (see minhash()). */
  seed?: number | bigint;
  /** Jaccard threshold: picks (b, r) as datasketch does (unless b and r are given) and is the verification bar. Default 0.8. */
  threshold?: number;
  b?: number;
  r?: number;
  /**
   * How (b, r) follow from the threshold when they are not given: 'datasketch' (datasketch's balanced
   * choice, optimalParam), 'recall' (recallParam: every pair at or above the threshold is a candidate with
   * probability >= minRecall, fewest false candidates), or 'auto' (default): 'recall' when verifying, else
   * 'datasketch'. doubri-v1 without a threshold keeps doubri's 40 bands of 20 values either way.
   */
  banding?: 'auto' | 'datasketch' | 'recall';
  /** Target collision probability at the threshold for banding 'recall'. Default 0.99. */
  minRecall?: number;
  /**
   * Re-check candidate pairs: 'exact' (Jaccard of the shingle sets; default, except doubri-v1), 'estimate'
   * (fraction of equal signature values) or 'none' (every candidate counts: fastest).
   */
  verify?: DedupVerify;
  /**
   * 'kept' (default): documents are decided in order and one is dropped only for an earlier kept document
   * it matches (doubri's rule; its representative is that document); 'components': connected components of
   * the matches, the first member kept (chains may join documents below the threshold).
   */
  clustering?: DedupClustering;
  /** Collect the reported pairs. */
  pairs?: boolean;
  /** Memory budget for band keys in bytes (spills sorted runs to `tmp` beyond it). 0 or absent: all in memory. */
  memory?: number;
  /**
   * Folder for spilled files, exact-verification shingle sets included (default: the system temp folder): they
   * go to a sub-folder `neardup-spill-PID-XXXXXX`, removed when the session ends; such folders of dead
   * processes are removed when a session starts.
   */
  tmp?: string;
}

/** Every setting a dedup run uses, defaults filled in. */
export interface DedupSettings {
  profile: DedupProfile;
  threshold: number;
  numPerm: number;
  b: number;
  r: number;
  /** The seed given, or the profile's default (fast 0, doubri-v1 0, datasketch 1). */
  seed: string;
  banding: 'explicit' | 'recall' | 'datasketch' | 'doubri';
  shingle: Required<ShingleOptions>;
  verify: DedupVerify;
  clustering: DedupClustering;
}

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
  /** Pairs sharing a band (0 unless pairs are enumerated: with `verify` or `pairs`). */
  candidatePairs: number;
  /** Pairs kept after verification (all candidates without `verify`; 0 unless pairs are enumerated). */
  keptPairs: number;
  /** Documents that are not their cluster's representative (the sum of duplicate). */
  duplicates: number;
  /** Clusters of two or more documents. */
  clusters: number;
  /** Every byte written to temporary files in `tmp`: band runs, signatures and exact-verification shingle sets. */
  spilledBytes: number;
  /** Sorted runs written under the `memory` budget. */
  runs: number;
  /** The banding used: number of bands (see DedupOptions.banding). */
  b: number;
  /** Values per band (rows). */
  r: number;
  /** Values per signature. */
  numPerm: number;
  /** Every effective setting of the run, defaults filled in (what the CLI's JSON summary reports). */
  settings: DedupSettings;
}

/** The shingling of a profile when not given: lower-cased char 5-grams; doubri-v1: the text as is. */
export function dedupShingleDefaults(profile: DedupProfile): Required<ShingleOptions> {
  return { unit: 'char', n: 5, split: 'whitespace', lowercase: profile !== 'doubri-v1', stripPunctuation: false, foldWhitespace: false, short: 'whole' };
}

const LSH_PROFILE: Record<DedupProfile, LshProfile> = { fast: 'fast', 'doubri-v1': 'doubri', datasketch: 'datasketch' };

/** A dedup run fed in batches (documents numbered in the order they are added). */
export class DedupSession {
  readonly b: number;
  readonly r: number;
  readonly numPerm: number;
  readonly settings: DedupSettings;
  private readonly handle: NativeLshDedup;
  private readonly mh: { profile: DedupProfile; numPerm: number; seed?: number | bigint } & ShingleOptions;
  private readonly shingle: ShingleOptions;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(readonly options: DedupOptions = {}) {
    const profile = options.profile ?? 'fast';
    const threshold = options.threshold ?? 0.8;
    const verify = options.verify ?? (profile === 'doubri-v1' ? 'none' : 'exact');
    const clustering = options.clustering ?? 'kept';
    if (!['kept', 'components'].includes(clustering)) throw new RangeError("clustering must be 'kept' or 'components'");
    const banding = options.banding ?? 'auto';
    if (!['auto', 'datasketch', 'recall'].includes(banding)) throw new RangeError("banding must be 'auto', 'datasketch' or 'recall'");
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
    this.b = lp.b;
    this.r = lp.r;
    this.numPerm = lp.numPerm;
    const {
      profile: _p, numPerm: _n, seed, threshold: _t, b: _b, r: _r, verify: _v, pairs: _q, memory: _m, tmp: _d, banding: _g,
      minRecall: _mr, clustering: _c, ...given
    } = options;
    // the same shingles for the signatures and for exact verification; undefined options take the defaults
    const shingle: Required<ShingleOptions> = { ...dedupShingleDefaults(profile) };
    for (const [k, v] of Object.entries(given)) if (v !== undefined) (shingle as unknown as Record<string, unknown>)[k] = v;
    this.shingle = shingle;
    this.mh = { ...shingle, profile, numPerm: lp.numPerm, ...(seed !== undefined ? { seed } : {}) };
    this.settings = {
      profile, threshold, numPerm: lp.numPerm, b: lp.b, r: lp.r,
      seed: String(seed ?? (profile === 'datasketch' ? 1 : 0)),
      banding: explicit ? 'explicit' : forRecall ? 'recall' : doubriDefault ? 'doubri' : 'datasketch',
      shingle, verify, clustering,
    };
    this.handle = nativeSync(() => new native.LshDedup({
      profile: lp.profile, numPerm: lp.numPerm, b: lp.b, r: lp.r, threshold, verify, clustering,
      pairs: options.pairs ?? false, memory: options.memory ?? 0, tmp: options.tmp ?? os.tmpdir(),
    }));
  }

  /**
   * Adds documents in order; null = a skipped line (keeps its number, never matches). Strings are encoded to
   * UTF-8 once, in slices that yield to the event loop; packed input (packTexts) is used as it is. The
   * signatures (and, with verify 'exact', the shingle sets) are computed on the thread pool from that one
   * encoding; the documents enter the index in the order of the add() calls, so a caller may start the next
   * add() (and parse its input) before this one resolves. Bytes given must not change until it resolves.
   */
  add(texts: ReadonlyArray<DocumentInput> | PackedTexts): Promise<void> {
    this.open();
    return this.addEncoded(isPacked(texts) ? Promise.resolve(packedBatch(texts)) : encodeBatch(texts));
  }

  /** @internal add() of a batch being encoded. */
  addEncoded(batch: Promise<EncodedBatch>): Promise<void> {
    this.open();
    const sigP = batch.then((b) => minhash(b.packed, this.mh));
    const shP = this.settings.verify === 'exact'
      ? batch.then((b) => shingleHashes(b.packed, { ...this.shingle, hash: 'fast64', dedupe: true }))
      : undefined;
    // observed below, in order; these only keep an early rejection from being reported as unhandled
    sigP.catch(() => undefined);
    shP?.catch(() => undefined);
    const done = this.tail.then(async () => {
      const { valid } = await batch;
      const sig = await sigP;
      this.open();
      if (shP) {
        const sh = await shP;
        this.open();
        await nativeCall(this.handle.add(sig.signatures, valid, sh.hashes, sh.offsets));
      } else {
        await nativeCall(this.handle.add(sig.signatures, valid));
      }
    });
    this.tail = done.catch(() => undefined);
    return done;
  }

  /** Waits for every add() so far, then clusters. */
  async finish(): Promise<DedupResult> {
    this.open();
    await this.tail;
    this.open();
    const r = await nativeCall(this.handle.finish());
    const rep = r.representative;
    const duplicate = new Uint8Array(rep.length);
    for (let i = 0; i < rep.length; i++) duplicate[i] = rep[i] === i ? 0 : 1;
    return { ...r, duplicate, b: this.b, r: this.r, numPerm: this.numPerm, settings: this.settings };
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
}

function packedBatch(p: PackedTexts): EncodedBatch {
  const n = p.offsets.length - 1;
  return { packed: p, count: Math.max(n, 0), bytes: n > 0 ? Number(p.offsets[n]) - Number(p.offsets[0]) : 0 };
}

/** Options of dedup(): the run's options, plus an AbortSignal and a progress callback. */
export interface DedupCallOptions extends DedupOptions, LongCallOptions {}

/**
 * Deduplicates documents in one call: an array (strings, UTF-8 bytes, null for a skipped slot), packed input
 * (packTexts), or an iterable / async iterable of documents, read once in order (e.g. a generator over a
 * file). Documents are encoded once, in slices that yield to the event loop, and signed and indexed on the
 * native thread pool in batches of at most 4096 documents or about 4 MiB of text, two batches in flight.
 * `signal` stops the run (ERR_NEARDUP_ABORTED; temporary files are removed); `onProgress` is called after
 * each batch is indexed.
 */
export async function dedup(documents: DocumentSource, options: DedupCallOptions = {}): Promise<DedupResult> {
  const { signal: sig, onProgress, ...runOptions } = options;
  const signal = checkSignal(sig);
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw Object.assign(new TypeError('onProgress must be a function'), { code: 'ERR_NEARDUP_INVALID_ARGUMENT' });
  throwIfAborted(signal);
  const s = new DedupSession(runOptions);
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
    return await raceAbort(s.finish(), signal);
  } finally {
    s.close();
  }
}
