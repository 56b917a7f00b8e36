// A small, slow, obviously-correct SimHash reference (tests only): seomoz's pipeline and brute force.
import { createHash } from 'node:crypto';

const MASK = (1n << 64n) - 1n;

/** re.split(r'\W+', text.lower()) without empty tokens (per-code-point lower-casing). */
export function tokenize(text: string): string[] {
  const lower = Array.from(text, (c) => c.toLowerCase()).join('');
  return lower.split(/[^\p{L}\p{N}_]+/u).filter((t) => t.length > 0);
}

export function shingles(tokens: string[], n = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i + n <= tokens.length; i++) out.push(tokens.slice(i, i + n).join(' '));
  return out;
}

/** First 8 bytes of MD5, big-endian. */
export function unsignedHash(s: string): bigint {
  return createHash('md5').update(Buffer.from(s, 'utf8')).digest().readBigUInt64BE(0);
}

export function compute(features: readonly bigint[], weights?: readonly number[]): bigint {
  const v = new Array<number>(64).fill(0);
  features.forEach((f, i) => {
    const w = weights ? weights[i] : 1;
    for (let b = 0; b < 64; b++) v[b] += (f >> BigInt(b)) & 1n ? w : -w;
  });
  let out = 0n;
  for (let b = 0; b < 64; b++) if (v[b] > 0) out |= 1n << BigInt(b);
  return out;
}

export function seomozFingerprint(text: string): bigint {
  return compute(shingles(tokenize(text)).map(unsignedHash));
}

export function distance(a: bigint, b: bigint): number {
  let x = (a ^ b) & MASK;
  let n = 0;
  while (x) {
    x &= x - 1n;
    n++;
  }
  return n;
}

/** Index pairs (i < j) within k bits, in order. */
export function bruteForcePairs(fps: readonly bigint[], k: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < fps.length; i++)
    for (let j = i + 1; j < fps.length; j++) if (distance(fps[i], fps[j]) <= k) out.push([i, j]);
  return out;
}

/** splitmix64: a seeded 64-bit generator. */
export function rng(seed: bigint): () => bigint {
  let s = seed & MASK;
  return () => {
    s = (s + 0x9e3779b97f4a7c15n) & MASK;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  };
}

/** n random fingerprints, each followed by 0..2 copies with 0..k+1 flipped bits. */
export function plantedSet(n: number, k: number, seed: bigint): bigint[] {
  const next = rng(seed);
  const out: bigint[] = [];
  for (let i = 0; i < n; i++) {
    const x = next();
    out.push(x);
    const copies = Number(next() % 3n);
    for (let c = 0; c < copies; c++) {
      let y = x;
      const flips = Number(next() % BigInt(k + 2));
      for (let f = 0; f < flips; f++) y ^= 1n << (next() % 64n);
      out.push(y);
    }
  }
  return out;
}
