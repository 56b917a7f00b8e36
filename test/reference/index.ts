// The reference shingle-hash pipeline (tests only): the same contract as shingleHashes(), computed by the
// simple code in this folder.
import { refShingles, type RefTextOptions } from './text';
import { fast64, md5_64, murmur3_128, murmur3_32, sha1_32 } from './hash';

export type HashKind = 'fast64' | 'murmur3_32' | 'murmur3_64' | 'sha1_32' | 'md5_64';
export interface RefOptions extends RefTextOptions {
  hash?: HashKind;
  seed?: number | bigint;
  dedupe?: boolean;
}
export interface RefResult {
  hashes: bigint[] | number[];
  offsets: number[];
  invalidUtf8Docs: number;
}

export const is64 = (h: HashKind): boolean => h === 'fast64' || h === 'murmur3_64' || h === 'md5_64';

export function hashShingle(s: Uint8Array, kind: HashKind, seed: bigint): bigint | number {
  const seed32 = Number(seed & 0xffffffffn);
  switch (kind) {
    case 'fast64': return fast64(s, seed);
    case 'murmur3_32': return murmur3_32(s, seed32);
    case 'murmur3_64': return murmur3_128(s, seed32)[0];
    case 'sha1_32': return sha1_32(s);
    case 'md5_64': return md5_64(s);
  }
}

export function toBytes(t: string | Uint8Array): Uint8Array {
  return typeof t === 'string' ? Buffer.from(t, 'utf8') : t;
}

export function refShingleHashes(texts: ReadonlyArray<string | Uint8Array>, o: RefOptions = {}): RefResult {
  const kind = o.hash ?? 'fast64';
  const seed = BigInt(o.seed ?? 0);
  const hashes: Array<bigint | number> = [];
  const offsets = [0];
  let invalidUtf8Docs = 0;
  for (const t of texts) {
    const { shingles, invalid } = refShingles(toBytes(t), o);
    if (invalid) invalidUtf8Docs++;
    let hs = shingles.map((s) => hashShingle(s, kind, seed));
    if (o.dedupe) {
      const seen = new Set<bigint | number>();
      hs = hs.filter((h) => (seen.has(h) ? false : (seen.add(h), true)));
    }
    hashes.push(...hs);
    offsets.push(hashes.length);
  }
  return { hashes: hashes as bigint[] | number[], offsets, invalidUtf8Docs };
}
