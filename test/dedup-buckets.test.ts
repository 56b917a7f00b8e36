// Large band buckets (families of near-copies), empty documents and documents shorter than one shingle:
// dedup against brute-force exact Jaccard (issue 26).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dedup, shingleHashesSync, minhashSync, DedupSession, LshIndex, INDEX_REPRESENTATIVE } from '../lib/index';
import { cli } from './cli-helper';

// Shingle sets as sorted small ints (the 64-bit hashes numbered), for a fast brute-force merge.
function sets(texts: string[], opts: { short?: 'whole' | 'none' } = {}): Int32Array[] {
  const r = shingleHashesSync(texts, { hash: 'fast64', dedupe: true, ...opts });
  const ids = new Map<bigint, number>();
  return texts.map((_, i) => {
    const h = r.hashes.subarray(r.offsets[i], r.offsets[i + 1]) as BigUint64Array;
    const s = Int32Array.from(h, (x) => { let v = ids.get(x); if (v === undefined) ids.set(x, v = ids.size); return v; });
    return s.sort();
  });
}

function jaccard(x: Int32Array, y: Int32Array): number {
  if (x.length === 0 || y.length === 0) return 0;  // an empty set is no near-duplicate of anything
  let i = 0, j = 0, inter = 0;
  while (i < x.length && j < y.length) {
    if (x[i] < y[j]) i++; else if (y[j] < x[i]) j++; else { inter++; i++; j++; }
  }
  return inter / (x.length + y.length - inter);
}

// doubri's keep rule over pairs [a, b] (a < b)
function keepRule(n: number, pairs: [number, number][]): number[] {
  const rep = Array.from({ length: n }, (_, i) => i);
  for (const [a, b] of [...pairs].sort((x, y) => x[1] - y[1] || x[0] - y[0])) if (rep[b] === b && rep[a] === a) rep[b] = a;
  return rep;
}

test('101 identical lines: --pairs lists all 5,050 pairs (not 199), every copy dropped for the first', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-buckets-'));
  try {
    const input = '{"text":"the same line of text, copied"}\n'.repeat(101);
    const r = cli(dir, ['dedup', '-', '--pairs', 'p.jsonl', '--flags', 'f.txt'], input);
    assert.is(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout.toString());
    assert.is(s.reported_pairs, 5050);
    assert.is(s.duplicates, 100);
    const lines = fs.readFileSync(path.join(dir, 'p.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.is(lines.length, 5050);
    assert.is(new Set(lines.map((p) => `${p.a} ${p.b}`)).size, 5050);
    // the default keep rule without --pairs: the same decisions, the pair counts unknown (null)
    const k = cli(dir, ['dedup', '-', '--flags', 'f2.txt'], input);
    assert.is(k.code, 0, k.stderr);
    assert.is(JSON.parse(k.stdout.toString()).reported_pairs, null);
    assert.is(fs.readFileSync(path.join(dir, 'f2.txt'), 'utf8'), fs.readFileSync(path.join(dir, 'f.txt'), 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// Families sharing band buckets of far more than 100 documents: 1,000 near-copies of one text (edited at rates
// from 0 to 25 %, exact copies among them) and 150 "locale modules" (one template, different values), between
// unrelated texts.
function families(): string[] {
  let s = 7;
  const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
  const vocab = Array.from({ length: 2000 }, (_, i) => `v${i.toString(36)}`);
  const words = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(rnd() * vocab.length)]);
  const base = words(32);
  const template = words(24);
  const texts: string[] = [];
  for (let i = 0; i < 1250; i++) {
    const r = rnd();
    if (r < 0.8) {
      const rate = [0, 0, 0.01, 0.03, 0.05, 0.08, 0.12, 0.18, 0.25][Math.floor(rnd() * 9)];
      texts.push(base.map((w) => (rnd() < rate ? vocab[Math.floor(rnd() * vocab.length)] : w)).join(' '));
    } else if (r < 0.92) {
      texts.push(`${template.join(' ')} ${words(4 + Math.floor(rnd() * 6)).join(' ')}`);
    } else {
      texts.push(words(30).join(' '));
    }
  }
  return texts;
}

test('buckets of 1,000 near-copies: pairs complete and equal to brute force; the keep rule equals it, every budget', async () => {
  const texts = families();
  const S = sets(texts);
  const t = 0.8;
  const truth: [number, number][] = [];
  for (let a = 0; a < texts.length; a++) for (let b = a + 1; b < texts.length; b++) if (jaccard(S[a], S[b]) >= t) truth.push([a, b]);
  assert.ok(truth.length > 50000, `pairs at J >= ${t}: ${truth.length}`);
  // 64 bands of 2 values: a pair at J >= 0.8 misses every band with probability 0.36^64, so the candidates
  // hold every true pair and the verified pairs must be exactly the truth
  const opts = { threshold: t, b: 64, r: 2 };
  const got = await dedup(texts, { ...opts, pairs: true });
  const pairs = Array.from(got.pairA, (a, i) => [a, got.pairB[i]] as [number, number]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  assert.is(pairs.length, truth.length);
  assert.equal(pairs, truth);
  const want = keepRule(texts.length, truth);
  assert.equal(Array.from(got.representative), want);
  for (const memory of [0, 24 << 10, 256 << 10]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-buckets-'));
    try {
      const kept = await dedup(texts, { ...opts, memory, tmp: dir });
      assert.equal(Array.from(kept.representative), want, `keep rule alone, memory ${memory}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  // the default banding: the keep rule alone equals the rule over its own verified pairs
  const dp = await dedup(texts, { pairs: true });
  const dk = await dedup(texts, {});
  assert.equal(Array.from(dk.representative), Array.from(dp.representative));
  assert.equal(Array.from(dp.representative), keepRule(texts.length, Array.from(dp.pairA, (a, i) => [a, dp.pairB[i]] as [number, number])));
});

test('empty documents and documents shorter than one shingle: never near-duplicates of anything', async () => {
  const texts = [...Array(37).fill(''), 'ab', 'ab', 'a b c d e f g h', '', 'ab', ' ', ' '];
  for (const pairs of [true, false]) {
    const r = await dedup(texts, { pairs });
    // '' (no shingle) is paired with nothing; 'ab' (shorter than 5 characters: one shingle of all of it, short
    // 'whole') is a set of one shingle: its copies are duplicates (J = 1); ' ' is the one-character set ' '
    const dropped = Array.from(r.representative).map((x, i) => (x !== i ? `${i}>${x}` : '')).filter(Boolean);
    assert.equal(dropped, ['38>37', '41>37', '43>42'], `pairs ${pairs}`);
    if (pairs) assert.equal(Array.from(r.pairA, (a, i) => `${a}-${r.pairB[i]}`).sort(), ['37-38', '37-41', '38-41', '42-43'].sort());
  }
  // short 'none': a text shorter than one shingle has no shingles at all, as an empty one
  const none = await dedup(texts, { short: 'none', pairs: true });
  assert.is(none.pairA.length, 0);
  assert.is(none.duplicates, 0);
  // and through the CLI, as the 37 empty files
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-buckets-'));
  try {
    const c = cli(dir, ['dedup', '-', '--pairs', 'p.jsonl'], '{"text":""}\n'.repeat(37));
    assert.is(c.code, 0, c.stderr);
    const s = JSON.parse(c.stdout.toString());
    assert.is(s.reported_pairs, 0);
    assert.is(s.duplicates, 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an index bucket of more than 100 entries: a new copy of a middle entry is dropped for it', async () => {
  // entry i = a base text without its word i: entries are at J ~ 0.98 of each other (all kept at t = 0.995), and
  // about half have the base's own signature (no removed shingle held a minimum), and each band's bucket of the
  // base's key holds the ~140 entries whose removed shingles held none of its minima
  const words = Array.from({ length: 200 }, (_, i) => `w${(i * 7919).toString(36)}q`);
  const base = words.join(' ');
  const entries = Array.from({ length: 150 }, (_, i) => words.filter((_, k) => k !== i + 20).join(' '));
  const opts = { threshold: 0.995, b: 16, r: 8 };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-buckets-'));
  try {
    const first = new DedupSession({ ...opts, indexOut: true });
    await first.add(entries);
    const r1 = await first.finish();
    assert.is(r1.duplicates, 0);
    const file = path.join(dir, 'a.lsh');
    await first.saveIndex(file);
    first.close();
    const sig = minhashSync([base, ...entries], { profile: 'fast', numPerm: 128, seed: 0 }).signatures;
    const likeBase = entries.map((_, i) => i).filter((i) => sig.subarray((i + 1) * 128, (i + 2) * 128).every((v, k) => v === sig[k]));
    assert.ok(likeBase.length > 30, `entries with the base's signature: ${likeBase.length}`);
    const e = likeBase[likeBase.length >> 1];  // neither the first nor the last of their buckets
    const ix = await LshIndex.loadAsync<bigint>(file);
    const second = new DedupSession({ index: ix });
    await second.add([entries[e]]);
    const r2 = await second.finish();
    second.close();
    ix.close();
    assert.is(r2.representative[0], INDEX_REPRESENTATIVE, 'dropped for an indexed entry');
    assert.is(Number(r2.indexMatches!.keys[0]), e);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
