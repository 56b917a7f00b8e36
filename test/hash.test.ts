// The hash functions: SMHasher's published verification values (reference and native), native vs
// reference for every length, the multi-seed Murmur3 kernel (AVX2 and portable), and doubri 1.0's stored
// MinHash values recomputed from neardup's shingle stream.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shingleHashesSync } from '../lib/index';
import { native } from '../lib/native/addon';
import { fast64, md5_64, murmur3_128, murmur3_32, sha1_32, smhasherVerification, x64_128Bytes, x86_32Bytes } from './reference/hash';
import { refShingles } from './reference/text';
import { TSX_FLAGS } from './support/tsx';
import { int, rng } from './reference/random';
import { BATTERY_COUNTS, BATTERY_SEEDS, battery, batteryKeys } from './helpers/battery';

const test = suite('hash');
const root = path.join(__dirname, '..');
const DOUBRI = path.join(root, 'test', 'fixtures', 'vectors', 'doubri-v1');

test('SMHasher verification values through the reference', () => {
  assert.is(smhasherVerification(x86_32Bytes, 4), 0xb0f57ee3);
  assert.is(smhasherVerification(x64_128Bytes, 16), 0x6384ba69);
});

test('SMHasher verification values through the native API', () => {
  assert.is(smhasherVerification((k, s) => native.hashBytes('murmur3_32', k, s), 4), 0xb0f57ee3);
  assert.is(smhasherVerification((k, s) => native.hashBytes('murmur3_128', k, s), 16), 0x6384ba69);
  // The same keys through the shingle API where they are valid UTF-8 (lengths 1..127: bytes 0..126), one
  // shingle of the whole key, seed 256 - len as in SMHasher.
  const key = Buffer.from(Array.from({ length: 128 }, (_, i) => i));
  for (let len = 1; len < 128; len++) {
    const k = key.subarray(0, len);
    const r32 = shingleHashesSync([k], { n: 4096, hash: 'murmur3_32', seed: 256 - len });
    assert.is(r32.hashes[0], murmur3_32(k, 256 - len), `x86_32 len ${len}`);
    const r64 = shingleHashesSync([k], { n: 4096, hash: 'murmur3_64', seed: 256 - len });
    assert.is(r64.hashes[0], murmur3_128(k, 256 - len)[0], `x64_128 len ${len}`);
  }
});

test('known values (published test vectors)', () => {
  assert.is(murmur3_32(Buffer.from(''), 1), 0x514e28b7);
  assert.is(murmur3_32(Buffer.from('The quick brown fox jumps over the lazy dog'), 0), 0x2e4ff723);
  assert.is(sha1_32(Buffer.from('abc')), 0x363e99a9); // SHA-1("abc") = a9993e36...
  assert.is(md5_64(Buffer.from('')), 0xd41d8cd98f00b204n);
});

test('native = reference for every key length 0..300 and random seeds (all kinds)', () => {
  const r = rng(5);
  const key = Buffer.alloc(300);
  for (let i = 0; i < key.length; i++) key[i] = int(r, 0, 255);
  for (let len = 0; len <= 300; len++) {
    const k = key.subarray(0, len);
    const seed64 = (BigInt(int(r, 0, 0xffffffff)) << 32n) | BigInt(int(r, 0, 0xffffffff));
    const seed32 = int(r, 0, 0xffffffff);
    assert.is(native.hashBytes('fast64', k, seed64).readBigUInt64LE(0), fast64(k, seed64), `fast64 len ${len}`);
    assert.is(native.hashBytes('fast64', k).readBigUInt64LE(0), fast64(k, 0n), `fast64 seed 0 len ${len}`);
    assert.is(native.hashBytes('murmur3_32', k, seed32).readUInt32LE(0), murmur3_32(k, seed32), `x86_32 len ${len}`);
    const m = native.hashBytes('murmur3_128', k, seed32);
    assert.equal([m.readBigUInt64LE(0), m.readBigUInt64LE(8)], murmur3_128(k, seed32), `x64_128 len ${len}`);
    assert.equal(native.hashBytes('sha1', k), createHash('sha1').update(k).digest(), `sha1 len ${len}`);
    assert.equal(native.hashBytes('md5', k), createHash('md5').update(k).digest(), `md5 len ${len}`);
  }
});

test('fast64 through the shingle API: 64-bit seeds, long ASCII keys', () => {
  const r = rng(6);
  for (const len of [1, 3, 4, 7, 8, 15, 16, 17, 47, 48, 49, 64, 95, 96, 97, 200, 1000, 4096]) {
    const k = Buffer.alloc(len);
    for (let i = 0; i < len; i++) k[i] = int(r, 0x20, 0x7e);
    for (const seed of [0n, 1n, 0xffffffffn, 1n << 32n, (1n << 64n) - 1n]) {
      const got = shingleHashesSync([k], { n: 4096, hash: 'fast64', seed }).hashes[0];
      assert.is(got, fast64(k, seed), `len ${len} seed ${seed}`);
    }
  }
});

test('multi-seed Murmur3 kernel (MinSeq) = min of the reference over seeds, incl. seed wrap-around', () => {
  const keys = batteryKeys();
  for (const count of BATTERY_COUNTS)
    for (const first of BATTERY_SEEDS) {
      const got = native.murmur3MinSeq(keys, first, count);
      const want = new Uint32Array(count).fill(0xffffffff);
      for (const k of keys)
        for (let i = 0; i < count; i++) want[i] = Math.min(want[i], murmur3_32(k, (first + i) >>> 0));
      assert.equal(Array.from(got), Array.from(want), `count ${count} first ${first}`);
    }
});

test('portable kernels (NEARDUP_DISABLE_SIMD=1, child process) give the same results as this process', () => {
  const here = battery();
  const child = JSON.parse(execFileSync(process.execPath, [...TSX_FLAGS, path.join(__dirname, 'helpers', 'battery.ts')], {
    cwd: root, env: { ...process.env, NEARDUP_DISABLE_SIMD: '1' }, encoding: 'utf8',
  })) as { simd: string; digest: string };
  assert.is(child.simd, 'portable');
  assert.is(child.digest, here.digest);
});

// ------------------------------------------------------------------ doubri 1.0
function readDoubriHash(file: string): { n: number; k: number; values: Uint32Array } {
  const b = fs.readFileSync(file);
  assert.is(b.subarray(0, 7).toString('latin1'), 'MinHash');
  assert.is(b[7], 4);
  const n = Number(b.readBigUInt64LE(8)), k = Number(b.readBigUInt64LE(16));
  assert.is(b.length, 24 + 4 * n * k);
  const values = new Uint32Array(n * k);
  for (let i = 0; i < n * k; i++) values[i] = b.readUInt32LE(24 + 4 * i);
  return { n, k, values };
}

const doubriText = (t: string) => ([...t].length < 5 ? 'EMPTY' : t);
const jsonlTexts = (file: string) =>
  fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { text: string }).text);

for (const [group, sample] of [['edge', null], ['groupA', [0, 1, 17, 59, 119]], ['groupB', [0, 40, 79]]] as const) {
  test(`doubri-v1 ${group}.hash: all 800 values of ${sample ? sample.length : 'all'} documents from shingleHashes(murmur3_32, seed i)`, () => {
    const { n, k, values } = readDoubriHash(path.join(DOUBRI, `${group}.hash`));
    const texts = jsonlTexts(path.join(DOUBRI, `${group}.jsonl`));
    assert.is(texts.length, n);
    assert.is(k, 800);
    const docs = (sample ?? texts.map((_, i) => i)) as number[];
    const batch = docs.map((d) => doubriText(texts[d]));
    const mins = docs.map(() => new Uint32Array(k));
    for (let seed = 0; seed < k; seed++) {
      const r = shingleHashesSync(batch, { unit: 'char', n: 5, hash: 'murmur3_32', seed });
      docs.forEach((_, j) => {
        let m = 0xffffffff;
        for (let x = r.offsets[j]; x < r.offsets[j + 1]; x++) if (r.hashes[x] < m) m = r.hashes[x];
        mins[j][seed] = m;
      });
    }
    docs.forEach((d, j) => assert.equal(Array.from(mins[j]), Array.from(values.subarray(d * k, (d + 1) * k)), `${group} document ${d}`));
    // The same through the multi-seed kernel, fed the reference's shingles.
    docs.forEach((d, j) => {
      const shingles = refShingles(Buffer.from(batch[j]), { n: 5 }).shingles;
      assert.equal(Array.from(native.murmur3MinSeq(shingles, 0, k)), Array.from(mins[j]), `${group} document ${d} (MinSeq)`);
    });
  });
}

test.run();
