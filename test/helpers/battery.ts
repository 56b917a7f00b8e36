// A deterministic battery of native results (shingle hashes of every kind and the multi-seed Murmur3
// kernel). test/hash.test.ts runs it in-process and in a child with NEARDUP_DISABLE_SIMD=1, so the
// portable and the AVX2 kernels are compared (each side is also checked against the reference there).
// Run directly, it prints {simd, digest} as JSON.
import { createHash } from 'node:crypto';
import { runtimeInfo, shingleHashesSync } from '../../lib/index';
import { native } from '../../lib/native/addon';
import { int, randomBytes, randomText, rng } from '../reference/random';

export function batteryKeys(): Buffer[] {
  const r = rng(77);
  const keys: Buffer[] = [];
  for (let len = 0; len <= 70; len++) keys.push(randomBytes(r, len, 0).subarray(0, len));
  for (let i = 0; i < 30; i++) keys.push(Buffer.from(randomText(r, int(r, 0, 300))));
  return keys;
}

export const BATTERY_COUNTS = [0, 1, 7, 8, 9, 15, 16, 17, 800];
export const BATTERY_SEEDS = [0, 1, 123456, 0xfffffffa];

export function battery(): { simd: string; digest: string } {
  const h = createHash('sha256');
  const keys = batteryKeys();
  for (const count of BATTERY_COUNTS)
    for (const first of BATTERY_SEEDS) {
      for (const k of keys.slice(0, 40)) h.update(native.murmur3MinSeq([k], first, count));
      h.update(native.murmur3MinSeq(keys, first, count));
    }
  for (const hash of ['fast64', 'murmur3_32', 'murmur3_64', 'sha1_32', 'md5_64'] as const)
    for (const unit of ['char', 'word'] as const) {
      const res = shingleHashesSync(keys, { hash, unit, n: unit === 'char' ? 5 : 2, seed: 99, lowercase: true });
      h.update(new Uint8Array(res.hashes.buffer, res.hashes.byteOffset, res.hashes.byteLength));
      h.update(new Uint8Array(res.offsets.buffer));
    }
  return { simd: runtimeInfo().simd, digest: h.digest('hex') };
}

if (require.main === module) process.stdout.write(JSON.stringify(battery()) + '\n');
