// LSH index: datasketch's (b, r) choice and candidate pairs from test/fixtures/vectors/datasketch-legacy, brute-force
// band equality on random signatures, clusters, save/load (memory-mapped, appendable), close; datasketch
// MinHashLSH's insert/query/remove semantics against a small model (test/reference/minhash-lsh.ts) on random
// operation sequences with integer and string keys across save/load cycles; version 1 files of earlier releases;
// damaged files.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LshIndex, optimalParam, optimalParamAsync, NeardupError, minhashSync } from '../lib/index';
import { native } from '../lib/native/addon';
import { RefKeyError, RefMinHashLSH, RefValueError } from './reference/minhash-lsh';

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

const fixCrcs = (b: Buffer) => {
  b.writeUInt32LE(native.crc32c(b.subarray(64)), 32);
  b.writeUInt32LE(native.crc32c(b.subarray(0, 60)), 60);
  return b;
};
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
    assert.equal(ro.params, { profile: 'fast', numPerm: k, b, r, valueBytes: 8, keyType: 'int' });
    assert.equal(ro.info, { size: n, mapped: n, removed: 0, added: 0, fileVersion: 2, storesSignatures: false, storesData: false });
    assert.is(ro.size, n);
    assert.equal(pairsOf(ro.candidatePairs()), expect);
    assert.equal(Array.from(ro.clusters().representatives), Array.from(cl.representatives));
    const [q1, q2] = await Promise.all([ro.queryBatch(sigs), idx.queryBatch(sigs)]);
    assert.equal(Array.from(q1.ids), Array.from(q2.ids));
    assert.equal(Array.from(q1.offsets), Array.from(q2.offsets));
    for (let i = 0; i < n; i += 37) assert.equal(Array.from(ro.query(sigs.subarray(i * k, (i + 1) * k))), Array.from(q1.ids.subarray(q1.offsets[i], q1.offsets[i + 1])));
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

  // remove: the pairs of the removed id disappear; removing it again is datasketch's KeyError
  const victim = expect[0][0];
  assert.ok(idx.has(victim));
  idx.remove(BigInt(victim));
  assert.not.ok(idx.has(victim));
  assert.throws(() => idx.remove(BigInt(victim)), (e: NeardupError) => e.code === 'ERR_NEARDUP_KEY_NOT_FOUND' && /not in the index/.test(e.message));
  assert.equal(pairsOf(idx.candidatePairs()), expect.filter((p) => p[0] !== victim && p[1] !== victim));
  assert.throws(() => idx.insertSync([1001n], sigs.subarray(0, k)), (e: NeardupError) => e.code === 'ERR_NEARDUP_DUPLICATE_KEY' && /key 1001 is already in the index/.test(e.message));
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

// ---- datasketch MinHashLSH semantics, segments, files ------------------------------------------------------------

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-lshidx-'));
const isCode = (code: string, re?: RegExp) => (e: unknown) => (e as NeardupError).code === code && (!re || re.test((e as Error).message));

/** Random signatures with planted near-copies, so that bands collide often. */
function plantedSigs(n: number, k: number, seed: number): Uint32Array {
  const next = rng(seed);
  const sigs = new Uint32Array(n * k);
  for (let i = 0; i < n; i++) {
    const src = i > 3 && Number(next() % 2n) === 0 ? Number(next() % BigInt(i)) : -1;
    for (let v = 0; v < k; v++) sigs[i * k + v] = src >= 0 && Number(next() % 5n) !== 0 ? sigs[src * k + v] : Number(next() % 6n);
  }
  return sigs;
}

async function checkAgainstModel<K extends bigint | string>(ix: LshIndex<K>, model: RefMinHashLSH<K>, sigs: Uint32Array, k: number, what: string) {
  const asList = (v: BigUint64Array | string[]) => Array.from(v as ArrayLike<bigint | string>);
  assert.is(ix.size, model.size, `${what}: size`);
  for (let i = 0; i < sigs.length / k; i += 3) {
    const sig = sigs.subarray(i * k, (i + 1) * k);
    assert.equal(asList(ix.query(sig)), model.query(sig), `${what}: query ${i}`);
  }
  const q = await ix.queryBatch(sigs);
  for (let i = 0; i < sigs.length / k; i += 7) {
    assert.equal(asList(q.ids).slice(q.offsets[i], q.offsets[i + 1]), model.query(sigs.subarray(i * k, (i + 1) * k)), `${what}: queryBatch ${i}`);
  }
  const p = ix.candidatePairs();
  const got = asList(p.a).map((a, i) => [a, asList(p.b)[i]]);
  assert.equal(got, model.pairs(), `${what}: pairs`);
  assert.equal(asList(ix.clusters().ids), model.ordered(), `${what}: insertion order`);
}

for (const keyType of ['int', 'string'] as const) {
  test(`datasketch semantics (${keyType} keys): random insert/remove/query/has against the MinHashLSH model, across save/load`, async () => {
    const k = 12, b = 4, r = 3, n = 240;
    const sigs = plantedSigs(n, k, keyType === 'int' ? 31 : 32);
    type K = typeof keyType extends 'int' ? bigint : string;
    const keyOf = (i: number) => (keyType === 'int' ? BigInt(i * 7919 % 1000 + i * 1000) : `doc/${i % 17}/${i}-ü`) as unknown as K;
    const model = new RefMinHashLSH<K>(b, r);
    let ix = new LshIndex<K>({ profile: 'datasketch', numPerm: k, b, r, keyType });
    const next = rng(keyType === 'int' ? 5 : 6);
    const file = path.join(tmpRoot, `model-${keyType}.lsh`);
    let loaded = 0;
    for (let step = 0; step < 900; step++) {
      const op = Number(next() % 10n);
      const i = Number(next() % BigInt(n));
      const key = keyOf(i);
      const sig = sigs.subarray(i * k, (i + 1) * k);
      if (op < 5) {
        let want: string | undefined;
        try { model.insert(key, sig); } catch (e) { assert.ok(e instanceof RefValueError); want = 'ERR_NEARDUP_DUPLICATE_KEY'; }
        const got = await (ix as LshIndex<bigint | string>).insert([key] as never, sig).then(() => undefined, (e: NeardupError) => e.code);
        assert.is(got, want, `insert ${String(key)}`);
      } else if (op < 8) {
        let want: string | undefined;
        try { model.remove(key); } catch (e) { assert.ok(e instanceof RefKeyError); want = 'ERR_NEARDUP_KEY_NOT_FOUND'; }
        let got: string | undefined;
        try { ix.remove(key as never); } catch (e) { got = (e as NeardupError).code; }
        assert.is(got, want, `remove ${String(key)}`);
      } else {
        assert.is(ix.has(key as never), model.has(key), `has ${String(key)}`);
        assert.equal(Array.from(ix.query(sig) as ArrayLike<unknown>), model.query(sig), `query ${i}`);
      }
      if (step % 150 === 149) {
        await checkAgainstModel(ix, model, sigs, k, `step ${step}`);
        // save (over the file it was loaded from, after the first round) and continue on the loaded index
        await ix.save(file);
        ix.close();
        ix = loaded % 2 ? await LshIndex.loadAsync<K>(file) : LshIndex.load<K>(file);
        loaded++;
        assert.equal(ix.params.keyType, keyType);
        assert.is(ix.info.mapped, model.size);
        await checkAgainstModel(ix, model, sigs, k, `loaded after step ${step}`);
      }
    }
    assert.ok(loaded >= 5);
    ix.close();
  });
}

test('incremental: old, then +B, then +C (each loaded, appended, saved) is byte for byte one index of A+B+C', async () => {
  const k = 16, n = 300;
  const sigs = plantedSigs(n, k, 77);
  const key = (i: number) => `url-${i}`;
  const one = new LshIndex<string>({ numPerm: k, b: 4, r: 4, keyType: 'string' });
  one.insertSync(Array.from({ length: n }, (_, i) => key(i)), sigs);
  one.metadata = '{"runs": 3}';
  const fileAll = path.join(tmpRoot, 'abc-one.lsh');
  await one.save(fileAll);
  const parts = [[0, 120], [120, 200], [200, 300]];
  let file = path.join(tmpRoot, 'abc-0.lsh');
  const first = new LshIndex<string>({ numPerm: k, b: 4, r: 4, keyType: 'string' });
  await first.insert(Array.from({ length: 120 }, (_, i) => key(i)), sigs.subarray(0, 120 * k));
  await first.save(file);
  first.close();
  for (const [lo, hi] of parts.slice(1)) {
    const ix = LshIndex.load<string>(file);
    // what the new part collides with in the saved index, before it is added
    const q = await ix.queryBatch(sigs.subarray(lo * k, hi * k));
    assert.ok(q.ids.length > 0);
    await ix.insert(Array.from({ length: hi - lo }, (_, i) => key(lo + i)), sigs.subarray(lo * k, hi * k));
    assert.equal(ix.info, { size: hi, mapped: lo, removed: 0, added: hi - lo, fileVersion: 2, storesSignatures: false, storesData: false });
    ix.metadata = '{"runs": 3}';
    file = path.join(tmpRoot, `abc-${hi}.lsh`);
    await ix.save(file);
    if (hi === n) assert.equal(ix.candidatePairs(), one.candidatePairs());
    ix.close();
  }
  assert.ok(fs.readFileSync(file).equals(fs.readFileSync(fileAll)), 'the same bytes');
  one.close();
});

test('string keys: has/remove/insert errors name the key; lone surrogates and wrong key kinds are refused', async () => {
  const k = 8;
  const sigs = plantedSigs(4, k, 3);
  const ix = new LshIndex<string>({ numPerm: k, b: 2, r: 4, keyType: 'string' });
  assert.is(ix.keyType, 'string');
  ix.insertSync(['a', 'b', '', 'ключ'], sigs);
  assert.ok(ix.has('') && ix.has('ключ') && !ix.has('c'));
  assert.throws(() => ix.insertSync(['c', 'c'], sigs.subarray(0, 2 * k)), isCode('ERR_NEARDUP_DUPLICATE_KEY', /key "c" is given twice/));
  assert.not.ok(ix.has('c'), 'all or nothing');
  await ix.insert(['ключ'], sigs.subarray(0, k)).then(() => assert.unreachable(), (e) => assert.ok(isCode('ERR_NEARDUP_DUPLICATE_KEY', /"ключ" is already in the index/)(e)));
  assert.throws(() => ix.remove('zz'), isCode('ERR_NEARDUP_KEY_NOT_FOUND', /"zz" is not in the index/));
  assert.throws(() => ix.insertSync(['x\uD800'], sigs.subarray(0, k)), (e: Error) => e instanceof RangeError && /lone surrogate/.test(e.message));
  assert.throws(() => ix.insertSync([1n] as never, sigs.subarray(0, k)), TypeError);
  assert.throws(() => ix.has(5n as never), TypeError);
  const ints = new LshIndex({ numPerm: k, b: 2, r: 4 });
  assert.throws(() => ints.insertSync(['a'] as never, sigs.subarray(0, k)), TypeError);
  assert.throws(() => ints.remove(-1), RangeError);
  ints.insertSync([2 ** 53 - 1, 2n ** 64n - 1n], sigs.subarray(0, 2 * k));
  assert.ok(ints.has(2n ** 64n - 1n) && ints.has(2 ** 53 - 1));
  ix.close();
  ints.close();
});

test('version 1 files of earlier releases load (converted), stay appendable, and save as version 2', async () => {
  const dir = path.join(__dirname, 'fixtures', 'lsh-v1');
  const exp = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
  for (const [name, wide] of [['datasketch', false], ['fast64', true]] as const) {
    const e = exp[name];
    const ix = LshIndex.load(path.join(dir, `${name}.lsh`));
    assert.equal(ix.info.fileVersion, 1);
    const { profile, numPerm, b, r } = e.params;
    assert.equal(ix.params, { profile, numPerm, b, r, valueBytes: wide ? 8 : 4, keyType: 'int' });
    const ids: string[] = exp.ids.filter((x: string) => x !== e.removed);
    assert.equal(Array.from(ix.clusters().ids, String), ids, 'insertion order kept');
    const pairs = ix.candidatePairs();
    const got = Array.from(pairs.a, (a, i) => [String(a), String(pairs.b[i])].sort()).map(String).sort();
    assert.equal(got, e.pairs.map((p: string[]) => [...p].sort()).map(String).sort(), `${name} pairs`);
    // the same answers as a fresh index of the same signatures
    const sigs = wide ? BigUint64Array.from(e.signatures.map(BigInt)) : Uint32Array.from(e.signatures);
    const k = e.params.numPerm;
    const fresh = new LshIndex({ profile, numPerm, b, r, valueBytes: wide ? 8 : 4 });
    exp.ids.forEach((id: string, i: number) => { if (id !== e.removed) fresh.insertSync([BigInt(id)], sigs.subarray(i * k, (i + 1) * k)); });
    for (let i = 0; i < exp.ids.length; i++) {
      const sig = sigs.subarray(i * k, (i + 1) * k);
      assert.equal(Array.from(ix.query(sig)), Array.from(fresh.query(sig)));
    }
    // appendable; saved as version 2 equal to the fresh index's file
    ix.remove(BigInt(ids[0]));
    fresh.remove(BigInt(ids[0]));
    const out = path.join(tmpRoot, `${name}-v2.lsh`), out2 = path.join(tmpRoot, `${name}-fresh.lsh`);
    await ix.save(out);
    await fresh.save(out2);
    assert.ok(fs.readFileSync(out).equals(fs.readFileSync(out2)));
    assert.is(fs.readFileSync(out).readUInt32LE(12), 2);
    ix.close();
    fresh.close();
  }
  const empty = LshIndex.load(path.join(dir, 'empty-doubri.lsh'));
  assert.equal([empty.size, empty.params.profile, empty.params.b, empty.params.r], [0, 'doubri', 2, 4]);
  empty.close();
});

test('damaged and truncated files are refused with a clear error naming the file', async () => {
  const k = 8;
  const ix = new LshIndex<string>({ numPerm: k, b: 2, r: 4, keyType: 'string' });
  ix.insertSync(['alpha', 'beta', 'gamma'], plantedSigs(3, k, 9));
  ix.metadata = '{"x": 1}';
  const good = path.join(tmpRoot, 'good.lsh');
  await ix.save(good);
  ix.close();
  const bytes = fs.readFileSync(good);
  const bad = path.join(tmpRoot, 'bad.lsh');
  const refused = (b: Buffer, code: string, re: RegExp, options?: { verify?: boolean }) => {
    fs.writeFileSync(bad, b);
    assert.throws(() => LshIndex.load(bad, options), (e: NeardupError) => e.code === code && re.test(e.message) && e.message.includes(bad), `${re}`);
  };
  for (const len of [0, 10, 63, 64, 100, bytes.length - 8, bytes.length - 1]) refused(bytes.subarray(0, len), 'ERR_NEARDUP_CORRUPT', /shorter than|truncated/);
  refused(Buffer.concat([bytes, Buffer.alloc(8)]), 'ERR_NEARDUP_CORRUPT', /truncated or extended/);
  const flip = Buffer.from(bytes);
  flip[64 + 64 + 3] ^= 1;  // a key offset
  refused(flip, 'ERR_NEARDUP_CORRUPT', /payload checksum/);
  const newer = Buffer.from(bytes);
  newer.writeUInt32LE(3, 12);
  newer.writeUInt32LE(native.crc32c(newer.subarray(0, 60)), 60);
  refused(newer, 'ERR_NEARDUP_UNSUPPORTED', /version 3 is not supported/);
  // valid checksums, broken structure: the key directory no longer matches the keys
  const renamed = Buffer.from(bytes);
  const at = renamed.indexOf('beta');
  renamed.write('bezz', at, 'latin1');
  refused(fixCrcs(renamed), 'ERR_NEARDUP_CORRUPT', /key directory entry \d+ does not match its key/);
  // unverified loads check only the layout: the same file then loads (the documented trade-off)
  fs.writeFileSync(bad, fixCrcs(renamed));
  const lazy = LshIndex.load<string>(bad, { verify: false });
  assert.is(lazy.size, 3);
  lazy.close();
  // the index keeps its map when the file is replaced by a rename (as every neardup writer replaces files)
  fs.copyFileSync(good, bad);
  const mapped = LshIndex.load<string>(bad);
  fs.writeFileSync(bad + '.new', 'x');
  fs.renameSync(bad + '.new', bad);
  assert.ok(mapped.has('gamma'));
  mapped.close();
  await LshIndex.loadAsync(path.join(tmpRoot, 'missing.lsh')).then(() => assert.unreachable(), (e: NeardupError) => assert.is(e.code, 'ERR_NEARDUP_IO'));
});

test.after(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

test.run();
