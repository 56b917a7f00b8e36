// Near-duplicate removal with MinHash LSH: signatures -> band keys -> buckets (in memory, or spilled to
// sorted runs under a memory budget) -> candidate pairs (optionally verified) -> clusters. The kept
// document of a cluster is its first occurrence. docs/lsh.md describes the pipeline and its guarantees.
import { NeardupError, nativeCall, nativeSync } from './errors';
import { native, type NativeDedupResult, type NativeLshDedup, type LshProfile } from './native';
import { recallParam, resolveParams } from './lsh';
import { shingleHashes, type ShingleOptions } from './shingles';
import { minhash } from './minhash';

export type DedupProfile = 'fast' | 'doubri-v1' | 'datasketch';
export type DedupVerify = 'none' | 'estimate' | 'exact';

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
  /** Re-check candidate pairs: 'estimate' (fraction of equal signature values) or 'exact' (Jaccard of shingle sets). */
  verify?: DedupVerify;
  /** Collect the reported pairs. */
  pairs?: boolean;
  /** Memory budget for band keys in bytes (spills sorted runs to `tmp` beyond it). 0 or absent: all in memory. */
  memory?: number;
  /**
   * Folder for spilled files (default '.'): they go to a sub-folder `neardup-spill-PID-XXXXXX`, removed when
   * the session ends; such folders of dead processes are removed when a session starts.
   */
  tmp?: string;
}

export interface DedupResult extends NativeDedupResult {
  b: number;
  r: number;
  numPerm: number;
}

const LSH_PROFILE: Record<DedupProfile, LshProfile> = { fast: 'fast', 'doubri-v1': 'doubri', datasketch: 'datasketch' };

/** A dedup run fed in batches (documents numbered in the order they are added). */
export class DedupSession {
  readonly b: number;
  readonly r: number;
  readonly numPerm: number;
  private readonly handle: NativeLshDedup;
  private readonly mh: { profile: DedupProfile; numPerm: number; seed?: number | bigint } & ShingleOptions;
  private readonly shingle: ShingleOptions;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(readonly options: DedupOptions = {}) {
    const profile = options.profile ?? 'fast';
    const threshold = options.threshold ?? 0.8;
    const verify = options.verify ?? 'none';
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
      minRecall: _mr, ...shingle
    } = options;
    // the shingles of --verify exact are the profile's own (datasketch: lowercased word 5-grams)
    this.shingle = profile === 'datasketch' ? { unit: 'word', lowercase: true, ...shingle } : shingle;
    this.mh = { ...shingle, profile, numPerm: lp.numPerm, ...(seed !== undefined ? { seed } : {}) };
    this.handle = nativeSync(() => new native.LshDedup({
      profile: lp.profile, numPerm: lp.numPerm, b: lp.b, r: lp.r, threshold, verify,
      pairs: options.pairs ?? false, memory: options.memory ?? 0, tmp: options.tmp ?? '.',
    }));
  }

  /**
   * Adds documents in order; null = a skipped line (keeps its number, never matches). The signatures are
   * computed on the thread pool at once; the documents enter the index in the order of the add() calls, so
   * a caller may start the next add() (and parse its input) before this one resolves.
   */
  add(texts: (string | null)[]): Promise<void> {
    this.open();
    const strs = texts.map((t) => t ?? '');
    const valid = Uint8Array.from(texts, (t) => (t === null ? 0 : 1));
    const sigP = minhash(strs, this.mh);
    const shP = this.options.verify === 'exact' ? shingleHashes(strs, { ...this.shingle, hash: 'fast64', dedupe: true }) : undefined;
    // observed below, in order; these only keep an early rejection from being reported as unhandled
    sigP.catch(() => undefined);
    shP?.catch(() => undefined);
    const done = this.tail.then(async () => {
      const sig = await sigP;
      this.open();
      if (shP) {
        const sh = await shP;
        this.open();
        await nativeCall(this.handle.add(sig.signatures, valid, sh.hashes as BigUint64Array, sh.offsets));
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
    return { ...r, b: this.b, r: this.r, numPerm: this.numPerm };
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

/** Deduplicates an array of texts in one call. */
export async function dedup(texts: (string | null)[], options: DedupOptions = {}): Promise<DedupResult> {
  const s = new DedupSession(options);
  try {
    const step = 4096;
    const pending: Promise<void>[] = [];
    for (let i = 0; i < texts.length; i += step) {
      const p = s.add(texts.slice(i, i + step));
      p.catch(() => undefined);
      pending.push(p);
      if (pending.length >= 2) await pending.shift();
    }
    await Promise.all(pending);
    return await s.finish();
  } finally {
    s.close();
  }
}
