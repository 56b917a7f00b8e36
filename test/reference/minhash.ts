// Small, slow, obviously-written reference implementations of the MinHash profiles, used only by tests to
// check the native code on random inputs. Nothing here is shared with the native sources.
import { createHash } from 'node:crypto';
import { fast64 } from './hash';

export { fast64 };

const M64 = (1n << 64n) - 1n;
const P61 = (1n << 61n) - 1n;

// ---- MurmurHash3_x86_32 ----
function imul(a: number, b: number): number {
  return Math.imul(a, b) >>> 0;
}
function rotl(x: number, r: number): number {
  return ((x << r) | (x >>> (32 - r))) >>> 0;
}
export function murmur3x86_32(key: Uint8Array, seed: number): number {
  let h = seed >>> 0;
  const n = key.length;
  const blocks = n >> 2;
  const c1 = 0xcc9e2d51, c2 = 0x1b873593;
  for (let i = 0; i < blocks; i++) {
    let k = (key[4 * i] | (key[4 * i + 1] << 8) | (key[4 * i + 2] << 16) | (key[4 * i + 3] << 24)) >>> 0;
    k = imul(rotl(imul(k, c1), 15), c2);
    h = (imul(rotl((h ^ k) >>> 0, 13), 5) + 0xe6546b64) >>> 0;
  }
  let k = 0;
  const t = blocks * 4;
  switch (n & 3) {
    case 3: k ^= key[t + 2] << 16; // falls through
    case 2: k ^= key[t + 1] << 8; // falls through
    case 1:
      k ^= key[t];
      k = imul(rotl(imul(k >>> 0, c1), 15), c2);
      h = (h ^ k) >>> 0;
  }
  h = (h ^ n) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  h = imul(h, 0x85ebca6b);
  h = (h ^ (h >>> 13)) >>> 0;
  h = imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

// ---- fast64: the shared reference (test/reference/hash.ts) ----
export function mix64(x: bigint): bigint {
  x &= M64;
  x ^= x >> 32n; x = (x * 0xd6e8feb86659fd93n) & M64;
  x ^= x >> 32n; x = (x * 0xd6e8feb86659fd93n) & M64;
  return x ^ (x >> 32n);
}

// ---- numpy RandomState(seed) = MT19937 + masked bounded 64-bit draws ----
export class MT19937 {
  private mt = new Uint32Array(624);
  private i = 624;
  constructor(seed: number) {
    this.mt[0] = seed >>> 0;
    for (let i = 1; i < 624; i++) {
      const p = this.mt[i - 1] ^ (this.mt[i - 1] >>> 30);
      this.mt[i] = (Math.imul(1812433253, p) + i) >>> 0;
    }
  }
  next(): number {
    if (this.i >= 624) {
      for (let k = 0; k < 624; k++) {
        const y = (this.mt[k] & 0x80000000) | (this.mt[(k + 1) % 624] & 0x7fffffff);
        this.mt[k] = this.mt[(k + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.i = 0;
    }
    let y = this.mt[this.i++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }
}
function randint(rng: MT19937, low: bigint, high: bigint): bigint {
  const range = high - 1n - low;
  let mask = 1n;
  while (mask < range) mask = (mask << 1n) | 1n;
  for (;;) {
    const hi = BigInt(rng.next());
    const v = ((hi << 32n) | BigInt(rng.next())) & mask;
    if (v <= range) return low + v;
  }
}
export function datasketchPerms(seed: number, k: number): { a: bigint[]; b: bigint[] } {
  const rng = new MT19937(seed);
  const a: bigint[] = [], b: bigint[] = [];
  for (let i = 0; i < k; i++) {
    a.push(randint(rng, 1n, P61));
    b.push(randint(rng, 0n, P61));
  }
  return { a, b };
}

// ---- Tokenizers (Python rules for the simple cases the tests generate: no final sigma etc.) ----
const PY_SPACE = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;
export function pyShingles(text: string, unit: 'word' | 'char', n: number, lower: boolean): string[] {
  const t = lower ? text.toLowerCase() : text;
  const units = unit === 'word' ? t.split(PY_SPACE).filter((w) => w.length > 0) : Array.from(t);
  const sep = unit === 'word' ? ' ' : '';
  if (units.length === 0) return [];
  if (units.length < n) return [units.join(sep)];
  const out: string[] = [];
  for (let i = 0; i + n <= units.length; i++) out.push(units.slice(i, i + n).join(sep));
  return out;
}

// ---- Profiles ----
export function doubriRef(text: string, k = 800, n = 5): Uint32Array {
  const cps = Array.from(text);
  const grams = cps.length < n ? ['EMPTY'] : pyShingles(text, 'char', n, false);
  const out = new Uint32Array(k).fill(0xffffffff);
  for (const g of new Set(grams)) {
    const bytes = Buffer.from(g, 'utf8');
    for (let i = 0; i < k; i++) {
      const h = murmur3x86_32(bytes, i);
      if (h < out[i]) out[i] = h;
    }
  }
  return out;
}

export function sha1Le32(s: string): number {
  return createHash('sha1').update(Buffer.from(s, 'utf8')).digest().readUInt32LE(0);
}

export function datasketchRef(shingles: string[], k: number, seed: number): Uint32Array {
  const { a, b } = datasketchPerms(seed, k);
  const out = new Uint32Array(k).fill(0xffffffff);
  for (const s of new Set(shingles)) {
    const h = BigInt(sha1Le32(s));
    for (let i = 0; i < k; i++) {
      const v = Number((((a[i] * h + b[i]) & M64) % P61) & 0xffffffffn);
      if (v < out[i]) out[i] = v;
    }
  }
  return out;
}

/** fast profile: one-permutation hashing of fast64 values with optimal densification. */
export function fastRef(shingles: string[], k: number, seed: bigint): Uint32Array {
  const bins: (number | null)[] = new Array(k).fill(null);
  for (const s of shingles) {
    const h = fast64(Buffer.from(s, 'utf8'), seed);
    const bin = Number(((h >> 32n) * BigInt(k)) >> 32n);
    const v = Number(h & 0xffffffffn);
    if (bins[bin] === null || v < (bins[bin] as number)) bins[bin] = v;
  }
  const out = new Uint32Array(k).fill(0xffffffff);
  if (bins.every((x) => x === null)) return out;
  const probeSeed = mix64(seed ^ 0x6a09e667f3bcc908n);
  for (let i = 0; i < k; i++) {
    if (bins[i] !== null) { out[i] = bins[i] as number; continue; }
    let x = probeSeed ^ (BigInt(i) << 32n);
    for (;;) {
      x = (x + 0x9e3779b97f4a7c15n) & M64;
      const j = Number(((mix64(x) >> 32n) * BigInt(k)) >> 32n);
      if (bins[j] !== null) { out[i] = bins[j] as number; break; }
    }
  }
  return out;
}
