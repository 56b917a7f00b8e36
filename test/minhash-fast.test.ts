// fast profile: estimator quality against exact Jaccard similarity (brute force over shingle sets), next to
// classic k-permutation MinHash (the datasketch profile) on the same pairs. Full permutation MinHash has
// E[est] = J and Var = J(1-J)/k; one-permutation hashing with optimal densification should be as good.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { minhashSync, signatureAt, estimateJaccard } from '../lib/index';
import { pyShingles } from './reference/minhash';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = Array.from({ length: 3000 }, (_, i) => `w${(i * 7919) % 10007}`);

/** Pairs of word documents (sizes 3..800 words) where a fraction of the words of b is replaced. */
function pairs(count: number, seed: number): [string, string][] {
  const r = rng(seed);
  const out: [string, string][] = [];
  for (let i = 0; i < count; i++) {
    const n = 3 + Math.floor(r() ** 2 * 800);
    const change = r();
    const a: string[] = [], b: string[] = [];
    for (let j = 0; j < n; j++) {
      const w = WORDS[Math.floor(r() * WORDS.length)];
      a.push(w);
      b.push(r() < change ? WORDS[Math.floor(r() * WORDS.length)] : w);
    }
    out.push([a.join(' '), b.join(' ')]);
  }
  return out;
}

function exactJaccard(a: string, b: string): number {
  const sa = new Set(pyShingles(a, 'char', 5, false));
  const sb = new Set(pyShingles(b, 'char', 5, false));
  let inter = 0;
  for (const x of sa) if (sb.has(x)) inter++;
  const uni = sa.size + sb.size - inter;
  return uni === 0 ? 1 : inter / uni;
}

interface Stats { bias: number; rmse: number; ratio: number }
function quality(ps: [string, string][], truth: number[], options: object, k: number): Stats {
  const texts = ps.flat();
  const r = minhashSync(texts, { ...options, numPerm: k });
  let sum = 0, sq = 0, expected = 0;
  ps.forEach((_, i) => {
    const est = estimateJaccard(signatureAt(r, 2 * i), signatureAt(r, 2 * i + 1));
    const d = est - truth[i];
    sum += d;
    sq += d * d;
    expected += (truth[i] * (1 - truth[i])) / k;
  });
  return { bias: sum / ps.length, rmse: Math.sqrt(sq / ps.length), ratio: sq / expected };
}

const PAIRS = pairs(300, 42);
const TRUTH = PAIRS.map(([a, b]) => exactJaccard(a, b));

for (const k of [64, 128, 256]) {
  test(`fast k=${k}: unbiased, variance like full-permutation MinHash`, () => {
    const fast = quality(PAIRS, TRUTH, { profile: 'fast' }, k);
    const full = quality(PAIRS, TRUTH, { profile: 'datasketch', unit: 'char', lowercase: false }, k);
    // Bias: a few standard errors of the mean (sqrt(0.25/k/300) <= 0.0036 for k = 64).
    assert.ok(Math.abs(fast.bias) < 0.01, `fast bias ${fast.bias}`);
    // Mean squared error relative to J(1-J)/k: 1 for ideal MinHash; allow sampling noise.
    assert.ok(fast.ratio < 1.35, `fast MSE ratio ${fast.ratio} (full permutations: ${full.ratio})`);
    assert.ok(fast.ratio < full.ratio * 1.3, `fast ${fast.ratio} vs full ${full.ratio}`);
  });
}

test('fast: tiny documents (densification) estimate like the rest', () => {
  const r = rng(9);
  const ps: [string, string][] = [];
  for (let i = 0; i < 300; i++) {
    const n = 5 + Math.floor(r() * 25); // 1..25 shingles for k = 128: mostly empty bins
    let a = '';
    for (let j = 0; j < n; j++) a += String.fromCharCode(97 + Math.floor(r() * 26));
    const cut = Math.floor(r() * n);
    ps.push([a, a.slice(0, cut) + 'Z' + a.slice(cut + 1)]);
  }
  const truth = ps.map(([a, b]) => exactJaccard(a, b));
  const s = quality(ps, truth, { profile: 'fast' }, 128);
  assert.ok(Math.abs(s.bias) < 0.015, `bias ${s.bias}`);
  assert.ok(s.ratio < 1.5, `MSE ratio ${s.ratio}`);
});

test('fast: a broken estimator would fail this test (sanity of the bounds)', () => {
  // Using only half of the values as a "signature" doubles the variance: the bound above must catch that.
  const texts = PAIRS.flat();
  const r = minhashSync(texts, { numPerm: 128 });
  let sq = 0, expected = 0;
  PAIRS.forEach((_, i) => {
    const a = signatureAt(r, 2 * i).subarray(0, 64), b = signatureAt(r, 2 * i + 1).subarray(0, 64);
    const d = estimateJaccard(a, b) - TRUTH[i];
    sq += d * d;
    expected += (TRUTH[i] * (1 - TRUTH[i])) / 128;
  });
  assert.ok(sq / expected > 1.5, `half-signature MSE ratio ${sq / expected}`);
});

test.run();
