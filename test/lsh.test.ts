// LSH index: datasketch's (b, r) choice and candidate pairs from test/fixtures/vectors/datasketch-legacy, brute-force
// band equality on random signatures, remove, clusters, save/load (memory-mapped, read-only), close.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LshIndex, optimalParam, optimalParamAsync, NeardupError } from '../lib/index';

const D = path.join(__dirname, 'fixtures', 'vectors', 'datasketch-legacy');
const vectors = JSON.parse(fs.readFileSync(path.join(D, 'vectors.json'), 'utf8')) as {
  optimal_param: { num_perm: number; threshold: number; b: number; r: number }[];
  cases: { shingles: string; num_perm: number; seed: number; signatures: number[][];
    lsh?: { threshold: number; b: number; r: number; pairs: [number, number][] }[] }[];
};

test('optimalParam reproduces datasketch for every (num_perm, threshold) in the vectors', () => {
  assert.is(vectors.optimal_param.length, 70);
  for (const c of vectors.optimal_param) assert.equal(optimalParam(c.threshold, c.num_perm), { b: c.b, r: c.r }, JSON.stringify(c));
});

test('optimalParamAsync agrees with the vectors; numPerm 65536 is fast (was ~30 min), argument errors are coded', async () => {
  for (const c of vectors.optimal_param.filter((_, i) => i % 7 === 0)) {
    assert.equal(await optimalParamAsync(c.threshold, c.num_perm), { b: c.b, r: c.r }, JSON.stringify(c));
  }
  const t0 = performance.now();
  const big = await optimalParamAsync(0.8, 65536);
  const sync = optimalParam(0.8, 65536);
  // generous bound for a loaded machine: the exhaustive scan needed minutes for 4096
  assert.ok(performance.now() - t0 < 3000, `took ${performance.now() - t0} ms`);
  assert.equal(big, sync);
  assert.ok(big.b * big.r <= 65536 && big.b > 1 && big.r > 1);
  for (const bad of [() => optimalParam(1.5, 128), () => optimalParam(0.5, 0), () => optimalParam(0.5, 65537), () => optimalParam(0.5, 128, [0.7, 0.7])]) {
    try {
      bad();
      assert.unreachable('accepted');
    } catch (e) {
      assert.is((e as { code?: string }).code, 'ERR_NEARDUP_INVALID_ARGUMENT', String(e));
    }
  }
  const rejected = await optimalParamAsync(0.5, 0).then(() => undefined, (e: { code?: string }) => e.code);
  assert.is(rejected, 'ERR_NEARDUP_INVALID_ARGUMENT');
});

const flat = (sigs: number[][]) => Uint32Array.from(sigs.flat());
const pairsOf = (p: { a: BigUint64Array; b: BigUint64Array }) => Array.from(p.a, (a, i) => [Number(a), Number(p.b[i])]);

test('candidate pairs equal datasketch MinHashLSH for thresholds 0.5/0.8/0.9 (datasketch signatures)', () => {
  let checked = 0;
  for (const c of vectors.cases) {
    for (const l of c.lsh ?? []) {
      const idx = new LshIndex({ profile: 'datasketch', numPerm: c.num_perm, threshold: l.threshold });
      assert.equal([idx.params.b, idx.params.r], [l.b, l.r]);
      idx.insertSync(c.signatures.map((_, i) => i), flat(c.signatures));
      assert.equal(pairsOf(idx.candidatePairs()), l.pairs, `${c.shingles} ${c.num_perm} t=${l.threshold}`);
      // query agrees with the pairs
      const q = Array.from(idx.query(Uint32Array.from(c.signatures[l.pairs[0][0]]))).map(Number);
      assert.ok(q.includes(l.pairs[0][1]));
      idx.close();
      checked++;
    }
  }
  assert.is(checked, 12);
});

function rng(seed: number) {
  let s = BigInt(seed) | 1n;
  return () => { s ^= s << 13n; s &= (1n << 64n) - 1n; s ^= s >> 7n; s ^= s << 17n; s &= (1n << 64n) - 1n; return s; };
}

test('fast profile: pairs, query and clusters equal brute-force band comparison', async () => {
  const next = rng(7);
  const n = 300, k = 32, b = 8, r = 4;
  const sigs = new BigUint64Array(n * k);
  for (let i = 0; i < n; i++) {
    const src = i >= 10 && Number(next() % 3n) === 0 ? Number(next() % BigInt(i)) : -1;
    for (let v = 0; v < k; v++) sigs[i * k + v] = src >= 0 && Number(next() % 4n) !== 0 ? sigs[src * k + v] : next() % 16n;
  }
  const ids = Array.from({ length: n }, (_, i) => BigInt(1000 + i));
  const idx = new LshIndex({ profile: 'fast', numPerm: k, b, r, valueBytes: 8 });
  await idx.insert(ids, sigs);
  const expect: number[][] = [];
  const band = (i: number, j: number) => Array.from(sigs.subarray(i * k + j * r, i * k + j * r + r)).join(',');
  for (let x = 0; x < n; x++)
    for (let y = x + 1; y < n; y++)
      for (let j = 0; j < b; j++) if (band(x, j) === band(y, j)) { expect.push([1000 + x, 1000 + y]); break; }
  assert.ok(expect.length > 50, `enough pairs (${expect.length})`);
  assert.equal(pairsOf(idx.candidatePairs()), expect);
  // clusters: representative = smallest id of each connected component
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x])));
  for (const [a, c] of expect) { const ra = find(a - 1000), rc = find(c - 1000); parent[Math.max(ra, rc)] = Math.min(ra, rc); }
  const cl = idx.clusters();
  assert.equal(Array.from(cl.ids), ids);
  assert.equal(Array.from(cl.representatives, Number), Array.from({ length: n }, (_, i) => find(i) + 1000));

  // save / load: same answers from the memory-mapped tables, concurrently
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-lsh-'));
  try {
    const file = path.join(dir, 'x.lsh');
    await idx.save(file);
    const ro = LshIndex.load(file, { verify: true });
    assert.equal(ro.params, { profile: 'fast', numPerm: k, b, r, readOnly: true });
    assert.is(ro.size, n);
    assert.equal(pairsOf(ro.candidatePairs()), expect);
    assert.equal(Array.from(ro.clusters().representatives), Array.from(cl.representatives));
    const [q1, q2] = await Promise.all([ro.queryBatch(sigs), idx.queryBatch(sigs)]);
    assert.equal(Array.from(q1.ids), Array.from(q2.ids));
    assert.equal(Array.from(q1.offsets), Array.from(q2.offsets));
    for (let i = 0; i < n; i += 37) assert.equal(Array.from(ro.query(sigs.subarray(i * k, (i + 1) * k))), Array.from(q1.ids.subarray(q1.offsets[i], q1.offsets[i + 1])));
    assert.throws(() => ro.remove(1000n), (e: NeardupError) => e.code === 'ERR_NEARDUP_UNSUPPORTED');
    ro.close();
    assert.throws(() => ro.size, (e: NeardupError) => e.code === 'ERR_NEARDUP_CLOSED');
    // a corrupted file is refused
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 3] ^= 1;
    fs.writeFileSync(file, bytes);
    assert.throws(() => LshIndex.load(file, { verify: true }), (e: NeardupError) => e.code === 'ERR_NEARDUP_CORRUPT');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  // remove: the pairs of the removed id disappear
  const victim = expect[0][0];
  assert.ok(idx.remove(BigInt(victim)));
  assert.not.ok(idx.remove(BigInt(victim)));
  assert.equal(pairsOf(idx.candidatePairs()), expect.filter((p) => p[0] !== victim && p[1] !== victim));
  assert.throws(() => idx.insertSync([1001n], sigs.subarray(0, k)), /already in the index/);
  idx.close();
});

test('argument errors: wrong array type, b*r > numPerm, threshold and (b, r) together', () => {
  assert.throws(() => new LshIndex({ profile: 'fast', numPerm: 16, b: 5, r: 4 }), RangeError);
  assert.throws(() => new LshIndex({ profile: 'doubri', numPerm: 16, b: 4, r: 4, valueBytes: 8 }), RangeError);
  assert.throws(() => new LshIndex({ numPerm: 16, b: 4, r: 4, threshold: 0.5 }), RangeError);
  const idx = new LshIndex({ profile: 'datasketch', numPerm: 16, threshold: 0.5 });
  assert.throws(() => idx.insertSync([0n], new BigUint64Array(16)), TypeError);
  assert.throws(() => idx.insertSync([0n], new Uint32Array(15)), RangeError);
  idx.close();
});


test('caps on quadratic outputs: maxPairs / maxResults (ERR_NEARDUP_TOO_MANY_RESULTS), candidatePairsStream equals candidatePairs', async () => {
  // 3000 identical signatures: 4,498,500 pairs, 9,000,000 query results; memory must stay small
  const k = 16, n = 3000;
  const sigs = new Uint32Array(n * k);
  for (let i = 0; i < n; i++) for (let j = 0; j < k; j++) sigs[i * k + j] = i < n - 5 ? j : 1000 * i + j;  // 5 loners
  const idx = new LshIndex({ numPerm: k, b: 4, r: 4 });
  idx.insertSync(BigUint64Array.from({ length: n }, (_, i) => BigInt(i)), sigs);
  const m = n - 5, total = (m * (m - 1)) / 2;
  const tooMany = (e: unknown) => (e as NeardupError).code === 'ERR_NEARDUP_TOO_MANY_RESULTS' && /maxPairs/.test((e as Error).message);
  assert.throws(() => idx.candidatePairs({ maxPairs: total - 1 }), tooMany);
  const all = idx.candidatePairs({ maxPairs: total });
  assert.is(all.a.length, total);
  // brute force on the structure: every pair of the first m ids, sorted
  let at = 0, ok = true;
  for (let x = 0; x < m && ok; x++) for (let y = x + 1; y < m; y++, at++) if (all.a[at] !== BigInt(x) || all.b[at] !== BigInt(y)) { ok = false; break; }
  assert.ok(ok);
  let streamed = 0, chunks = 0, inOrder = true;
  for await (const c of idx.candidatePairsStream({ chunkPairs: 100000 })) {
    assert.ok(c.a.length <= 100000 && c.a.length === c.b.length);
    for (let i = 0; i < c.a.length; i += 997) if (c.a[i] !== all.a[streamed + i] || c.b[i] !== all.b[streamed + i]) inOrder = false;
    streamed += c.a.length;
    chunks++;
  }
  assert.ok(inOrder);
  assert.is(streamed, total);
  assert.is(chunks, Math.ceil(total / 100000));
  // queryBatch: 3000 queries x 2995 ids each
  const rej = await idx.queryBatch(sigs, { maxResults: 1000 }).then(() => undefined, (e: NeardupError) => e.code);
  assert.is(rej, 'ERR_NEARDUP_TOO_MANY_RESULTS');
  const q = await idx.queryBatch(sigs.subarray(0, 10 * k), { maxResults: 10 * m });
  assert.is(q.ids.length, 10 * m);
  // the default cap lets ordinary results through
  assert.is((await idx.queryBatch(sigs.subarray(0, k))).ids.length, m);
  // bad caps are argument errors
  for (const bad of [-1, 1.5, NaN]) assert.throws(() => idx.candidatePairs({ maxPairs: bad }), (e: NeardupError) => e.code === 'ERR_NEARDUP_INVALID_ARGUMENT');
  assert.throws(() => idx.queryBatch(sigs, { maxResults: '5' as unknown as number }), (e: NeardupError) => e.code === 'ERR_NEARDUP_INVALID_ARGUMENT');
  // a change while streaming stops the stream
  const it = idx.candidatePairsStream({ chunkPairs: 10 });
  await it.next();
  idx.remove(0n);
  const changed = await it.next().then(() => undefined, (e: NeardupError) => e.code);
  assert.is(changed, 'ERR_NEARDUP_INVALID_ARGUMENT');
  idx.close();
});

test.run();
