// TEMPORARY stand-in for `minhash()` of lib/minhash.ts (branch `minhash`, not merged yet): the same call
// shape, so lib/dedup.ts switches to the real API by changing one import. NOT byte-compatible with any
// profile and slow (JS loops); it exists only so the dedup pipeline can be built and tested before the merge.
// Delete this file once lib/minhash.ts is on this branch.
import { shingleHashes, type ShingleOptions } from './shingles';

export interface StandInMinHashOptions extends ShingleOptions {
  profile?: 'fast' | 'doubri-v1' | 'datasketch';
  numPerm?: number;
  seed?: number | bigint;
}

export async function minhash(texts: string[], options: StandInMinHashOptions = {}): Promise<{ signatures: Uint32Array; numPerm: number; count: number }> {
  const k = options.numPerm ?? (options.profile === 'doubri-v1' ? 800 : 128);
  const { profile: _p, numPerm: _n, seed: _s, ...shingle } = options;
  const r = await shingleHashes(texts, { ...shingle, hash: 'murmur3_32', dedupe: true });
  const h = r.hashes as Uint32Array;
  const seeds = new Uint32Array(k);
  for (let i = 0; i < k; i++) seeds[i] = Math.imul(i + 1, 0x9e3779b1) >>> 0;
  const out = new Uint32Array(texts.length * k).fill(0xffffffff);
  for (let d = 0; d < texts.length; d++) {
    const base = d * k;
    for (let s = r.offsets[d]; s < r.offsets[d + 1]; s++) {
      const x = h[s];
      for (let i = 0; i < k; i++) {
        let v = (x ^ seeds[i]) >>> 0;
        v = Math.imul(v ^ (v >>> 16), 0x85ebca6b);
        v = Math.imul(v ^ (v >>> 13), 0xc2b2ae35);
        v = (v ^ (v >>> 16)) >>> 0;
        if (v < out[base + i]) out[base + i] = v;
      }
    }
  }
  return { signatures: out, numPerm: k, count: texts.length };
}
