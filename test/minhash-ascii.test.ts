// MinHash on all-ASCII texts, where the signers take their fixed-width paths (the fast profile's
// 8-shingles-per-vector hashing, the distinct-shingle filters of doubri-v1 and datasketch char shingles):
// native = the pure-TS reference, also without SIMD (NEARDUP_DISABLE_SIMD=1 in a child process).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { minhashSync, signatureAt } from '../lib/index';
import { datasketchRef, doubriRef, fastRef, pyShingles } from './reference/minhash';
import { TSX_FLAGS } from './support/tsx';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    s ^= s + Math.imul(s ^ (s >>> 7), 61);
    return ((s ^ (s >>> 14)) >>> 0) / 4294967296;
  };
}

// A small alphabet, so that shingles repeat within a text (the distinct filters have work to do), and texts
// whose length crosses the kernels' block edges (8 and 16 shingles, 16 and 24 readable bytes).
const ALPHABET = 'abcAB .\nxyz';
function asciiText(r: () => number, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)];
  return s;
}
const LENGTHS = [0, 1, 4, 5, 6, 8, 11, 12, 15, 16, 17, 20, 23, 24, 25, 27, 28, 31, 32, 33, 39, 40, 41, 100, 257, 600];
function texts(seed: number): string[] {
  const r = rng(seed);
  const t = LENGTHS.map((n) => asciiText(r, n));
  t.push('abcde'.repeat(120), 'The quick brown fox. '.repeat(15) + asciiText(r, 30));
  return t;
}

function check(): void {
  const ts = texts(5);
  for (const [k, seed] of [[128, 0n], [64, 7n], [256, 99n], [100, 3n], [1, 0n], [2, 5n]] as const) {
    for (const lowercase of [false, true]) {
      const got = minhashSync(ts, { numPerm: k, seed, lowercase });
      ts.forEach((t, i) =>
        assert.equal(Array.from(signatureAt(got, i)), Array.from(fastRef(pyShingles(t, 'char', 5, lowercase), k, seed)),
          `fast k ${k} lower ${lowercase} text ${i}`));
    }
  }
  for (const n of [3, 7, 8]) {  // other widths: 7 is the widest with the lossy filter, 8 the widest fixed one
    const got = minhashSync(ts, { numPerm: 64, n, profile: 'fast' });
    ts.forEach((t, i) => assert.equal(Array.from(signatureAt(got, i)), Array.from(fastRef(pyShingles(t, 'char', n, false), 64, 0n)), `fast n ${n} text ${i}`));
    const ds = minhashSync(ts, { profile: 'datasketch', unit: 'char', n, numPerm: 24, seed: 3 });
    ts.forEach((t, i) => assert.equal(Array.from(signatureAt(ds, i)), Array.from(datasketchRef(pyShingles(t, 'char', n, true), 24, 3)), `datasketch n ${n} text ${i}`));
  }
  const ds = minhashSync(ts, { profile: 'datasketch', unit: 'char', numPerm: 128, seed: 1 });
  ts.forEach((t, i) => assert.equal(Array.from(signatureAt(ds, i)), Array.from(datasketchRef(pyShingles(t, 'char', 5, true), 128, 1)), `datasketch text ${i}`));
  // doubri-v1: 40 seeds = one 32-seed block and a masked 16-seed one; 800 on the shorter texts.
  const db = minhashSync(ts, { profile: 'doubri-v1', numPerm: 40, seed: 11 });
  ts.forEach((t, i) => assert.equal(Array.from(signatureAt(db, i)), Array.from(doubriRef(t, 40 + 11).slice(11)), `doubri text ${i}`));
  const short = ts.filter((t) => t.length <= 41);
  const db800 = minhashSync(short, { profile: 'doubri-v1' });
  short.forEach((t, i) => assert.equal(Array.from(signatureAt(db800, i)), Array.from(doubriRef(t, 800)), `doubri 800 text ${i}`));
}

test('ASCII texts: fast, datasketch char and doubri-v1 = the reference (fixed-width kernels)', () => {
  check();
});

if (!process.env.NEARDUP_MINHASH_ASCII_CHILD) test('ASCII texts: the same without SIMD (NEARDUP_DISABLE_SIMD=1, child process)', () => {
  const root = path.resolve(__dirname, '..');
  const out = execFileSync(process.execPath, [...TSX_FLAGS, __filename], {
    cwd: root, env: { ...process.env, NEARDUP_DISABLE_SIMD: '1', NEARDUP_MINHASH_ASCII_CHILD: '1' }, encoding: 'utf8',
  });
  assert.ok(out.includes('ok'));
});

if (process.env.NEARDUP_MINHASH_ASCII_CHILD) {
  check();
  console.log('ok');
} else {
  test.run();
}
