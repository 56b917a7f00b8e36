// Reference hashes (tests only). MurmurHash3 is written from Austin Appleby's published algorithm; fast64
// from its specification in docs/FORMAT.md, section 2; SHA-1 and MD5 come from node:crypto.
import { createHash } from 'node:crypto';

const M64 = (1n << 64n) - 1n;

// ---------------------------------------------------------------- MurmurHash3_x86_32
const rotl32 = (x: number, r: number): number => ((x << r) | (x >>> (32 - r))) >>> 0;

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function murmur3_32(key: Uint8Array, seed: number): number {
  const c1 = 0xcc9e2d51, c2 = 0x1b873593;
  const len = key.length;
  const nblocks = len >>> 2;
  let h = seed >>> 0;
  for (let i = 0; i < nblocks; i++) {
    const o = i * 4;
    let k = key[o] | (key[o + 1] << 8) | (key[o + 2] << 16) | (key[o + 3] << 24);
    k = Math.imul(k, c1);
    k = rotl32(k, 15);
    k = Math.imul(k, c2);
    h ^= k;
    h = rotl32(h, 13);
    h = (Math.imul(h, 5) + 0xe6546b64) >>> 0;
  }
  const t = nblocks * 4;
  let k = 0;
  switch (len & 3) {
    case 3: k ^= key[t + 2] << 16; // falls through
    case 2: k ^= key[t + 1] << 8; // falls through
    case 1:
      k ^= key[t];
      k = Math.imul(k, c1);
      k = rotl32(k, 15);
      k = Math.imul(k, c2);
      h ^= k;
  }
  h ^= len;
  return fmix32(h);
}

// ---------------------------------------------------------------- MurmurHash3_x64_128
const rotl64 = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M64;
const mul64 = (a: bigint, b: bigint): bigint => (a * b) & M64;

function fmix64(k: bigint): bigint {
  k ^= k >> 33n;
  k = mul64(k, 0xff51afd7ed558ccdn);
  k ^= k >> 33n;
  k = mul64(k, 0xc4ceb9fe1a85ec53n);
  k ^= k >> 33n;
  return k;
}

function le64(b: Uint8Array, o: number, n = 8): bigint {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[o + i]);
  return v;
}

/** [h1, h2] as the reference writes them (the 16 output bytes are h1 then h2, each little-endian). */
export function murmur3_128(key: Uint8Array, seed: number): [bigint, bigint] {
  const c1 = 0x87c37b91114253d5n, c2 = 0x4cf5ad432745937fn;
  const len = key.length;
  const nblocks = Math.floor(len / 16);
  let h1 = BigInt(seed >>> 0), h2 = h1;
  for (let i = 0; i < nblocks; i++) {
    let k1 = le64(key, i * 16), k2 = le64(key, i * 16 + 8);
    k1 = mul64(k1, c1); k1 = rotl64(k1, 31n); k1 = mul64(k1, c2); h1 ^= k1;
    h1 = rotl64(h1, 27n); h1 = (h1 + h2) & M64; h1 = (h1 * 5n + 0x52dce729n) & M64;
    k2 = mul64(k2, c2); k2 = rotl64(k2, 33n); k2 = mul64(k2, c1); h2 ^= k2;
    h2 = rotl64(h2, 31n); h2 = (h2 + h1) & M64; h2 = (h2 * 5n + 0x38495ab5n) & M64;
  }
  const t = nblocks * 16;
  const rem = len & 15;
  if (rem > 8) {
    let k2 = le64(key, t + 8, rem - 8);
    k2 = mul64(k2, c2); k2 = rotl64(k2, 33n); k2 = mul64(k2, c1); h2 ^= k2;
  }
  if (rem > 0) {
    let k1 = le64(key, t, Math.min(rem, 8));
    k1 = mul64(k1, c1); k1 = rotl64(k1, 31n); k1 = mul64(k1, c2); h1 ^= k1;
  }
  h1 ^= BigInt(len); h2 ^= BigInt(len);
  h1 = (h1 + h2) & M64; h2 = (h2 + h1) & M64;
  h1 = fmix64(h1); h2 = fmix64(h2);
  h1 = (h1 + h2) & M64; h2 = (h2 + h1) & M64;
  return [h1, h2];
}

// ---------------------------------------------------------------- digests
export function sha1_32(key: Uint8Array): number {
  return createHash('sha1').update(key).digest().readUInt32LE(0);
}
export function md5_64(key: Uint8Array): bigint {
  return createHash('md5').update(key).digest().readBigUInt64BE(0);
}

// ---------------------------------------------------------------- fast64 (docs/FORMAT.md, section 2)
const P0 = 0x9e3779b97f4a7c15n, P1 = 0xd6e8feb86659fd93n, P2 = 0xc2b2ae3d27d4eb4fn, P3 = 0x165667b19e3779f9n;

/** The 128-bit product split as [low 64, high 64]. */
function mul128(a: bigint, b: bigint): [bigint, bigint] {
  const r = a * b;
  return [r & M64, r >> 64n];
}
function fold(a: bigint, b: bigint): bigint {
  const [lo, hi] = mul128(a, b);
  return lo ^ hi;
}

export function fast64Prepare(seed: bigint): bigint {
  seed &= M64;
  return fold(seed ^ P0, P1) ^ seed;
}

export function fast64(key: Uint8Array, seed: bigint = 0n): bigint {
  let s = fast64Prepare(seed);
  const len = key.length;
  let a: bigint, b: bigint;
  if (len <= 8) {
    // Short keys: the bytes as one little-endian integer, zero-extended.
    const v = len === 0 ? 0n : le64(key, 0, len);
    return fold(fold(v ^ s ^ P0, P1 ^ BigInt(len)) ^ P2, P3);
  }
  if (len <= 16) {
    a = le64(key, 0);
    b = le64(key, len - 8);
  } else {
    let pos = 0;
    let left = len;
    if (left > 48) {
      let s1 = s, s2 = s;
      while (left > 48) {
        s = fold(le64(key, pos) ^ P1, le64(key, pos + 8) ^ s);
        s1 = fold(le64(key, pos + 16) ^ P2, le64(key, pos + 24) ^ s1);
        s2 = fold(le64(key, pos + 32) ^ P3, le64(key, pos + 40) ^ s2);
        pos += 48;
        left -= 48;
      }
      s ^= s1 ^ s2;
    }
    while (left > 16) {
      s = fold(le64(key, pos) ^ P1, le64(key, pos + 8) ^ s);
      pos += 16;
      left -= 16;
    }
    // The last 16 bytes of the key (they may overlap bytes already consumed).
    a = le64(key, len - 16);
    b = le64(key, len - 8);
  }
  const [lo, hi] = mul128(a ^ P1, b ^ s);
  return fold(lo ^ P0 ^ BigInt(len), hi ^ P1);
}

// ---------------------------------------------------------------- SMHasher's verification value
/**
 * SMHasher's VerificationTest: hash keys {0}, {0,1}, ... of lengths 0..255 (key[i] = i) with seed 256-len,
 * concatenate the results, hash that with seed 0 and read the first 4 bytes little-endian.
 * `hash` returns the full little-endian output bytes of the function under test.
 */
export function smhasherVerification(hash: (key: Uint8Array, seed: number) => Uint8Array, width: number): number {
  const all = new Uint8Array(256 * width);
  const key = new Uint8Array(256);
  for (let i = 0; i < 256; i++) {
    key[i] = i;
    all.set(hash(key.subarray(0, i), 256 - i), i * width);
  }
  const fin = hash(all, 0);
  return (fin[0] | (fin[1] << 8) | (fin[2] << 16) | (fin[3] << 24)) >>> 0;
}

export const x86_32Bytes = (k: Uint8Array, seed: number): Uint8Array => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(murmur3_32(k, seed));
  return b;
};
export const x64_128Bytes = (k: Uint8Array, seed: number): Uint8Array => {
  const [h1, h2] = murmur3_128(k, seed);
  const b = Buffer.alloc(16);
  b.writeBigUInt64LE(h1, 0);
  b.writeBigUInt64LE(h2, 8);
  return b;
};
