import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  SimhashIndex, hammingDistance, pickSimhashBlocks, shingleHashesSync, simhashCompute, simhashFindAll,
  simhashFindAllStream, simhashFindAllSync, simhashFingerprints, simhashFingerprintsSync,
} from '../lib/index';
import { native } from '../lib/native/addon';
import * as ref from './reference/simhash';

const VECTORS = path.join(__dirname, 'fixtures', 'vectors', 'simhash-py', 'vectors.json');
const V = JSON.parse(fs.readFileSync(VECTORS, 'utf8'));
const SEOMOZ_SHINGLES = { unit: 'word', n: 4, split: 'nonword', lowercase: true, short: 'none', hash: 'md5_64' } as const;

test('vectors: compute', () => {
  assert.ok(V.compute.length > 10);
  for (const c of V.compute) {
    const f = c.features.map(BigInt);
    assert.is(simhashCompute(f), BigInt(c.fingerprint));
    assert.is(ref.compute(f), BigInt(c.fingerprint));
  }
});

test('vectors: unsigned_hash_examples', () => {
  for (const [s, h] of Object.entries(V.unsigned_hash_examples as Record<string, string>)) {
    assert.is(ref.unsignedHash(s), BigInt(h));
    if (s === '') continue; // no shingle of an empty text
    const r = shingleHashesSync([s], { unit: 'char', n: 4096, short: 'whole', hash: 'md5_64' });
    assert.is(r.hashes[0], BigInt(h), s);
  }
});

test('vectors: documents (fingerprint, shingle count, first shingles and features)', () => {
  const texts: string[] = V.documents.map((d: { text: string }) => d.text);
  const fps = simhashFingerprintsSync(texts, { profile: 'seomoz' });
  const sh = shingleHashesSync(texts, SEOMOZ_SHINGLES);
  V.documents.forEach((d: { text: string; fingerprint: string; shingle_count: number; first_shingles: string[]; first_features: string[] }, i: number) => {
    assert.is(fps[i], BigInt(d.fingerprint), `document ${i}`);
    assert.is(sh.offsets[i + 1] - sh.offsets[i], d.shingle_count, `shingle count ${i}`);
    d.first_features.forEach((f, j) => assert.is(sh.hashes[sh.offsets[i] + j], BigInt(f)));
    assert.equal(ref.shingles(ref.tokenize(d.text)).slice(0, d.first_shingles.length), d.first_shingles);
    assert.is(ref.seomozFingerprint(d.text), BigInt(d.fingerprint));
  });
});

test('vectors: find_all pairs on distinct values (and async agrees)', async () => {
  const pts = [...new Set<string>(V.find_all_points)].map(BigInt);
  const fps = BigUint64Array.from(pts);
  for (const fa of V.find_all) {
    const want = fa.pairs.map((p: string[]) => p.map(BigInt).sort((a: bigint, b: bigint) => (a < b ? -1 : 1)).join(' ')).sort();
    const r = simhashFindAllSync(fps, { ids: fps, blocks: fa.blocks, distance: fa.distance });
    const got: string[] = [];
    for (let i = 0; i < r.pairs.length; i += 2) got.push(`${r.pairs[i]} ${r.pairs[i + 1]}`);
    assert.ok(want.length > 100);
    assert.equal(got.sort(), want, `(${fa.blocks},${fa.distance})`);
    const a = await simhashFindAll(fps, { ids: fps, blocks: fa.blocks, distance: fa.distance });
    assert.equal(Array.from(a.pairs), Array.from(r.pairs));
  }
});

test('reference agrees with native fingerprints on random texts', async () => {
  const next = ref.rng(42n);
  const words = ['the', 'fox', 'Über', 'café', 'naïve', '日本語', 'x_y', '42', 'ΣΊΣΥΦΟΣ', 'a', 'b', 'c', 'd'];
  const seps = [' ', ', ', '. ', '\t', '\n', '—', '😀', "'", '  '];
  const texts: string[] = [];
  for (let i = 0; i < 300; i++) {
    const len = Number(next() % 40n);
    let t = '';
    for (let j = 0; j < len; j++) t += words[Number(next() % BigInt(words.length))] + seps[Number(next() % BigInt(seps.length))];
    texts.push(t);
  }
  const fps = await simhashFingerprints(texts, { profile: 'seomoz' });
  texts.forEach((t, i) => assert.is(fps[i], ref.seomozFingerprint(t), JSON.stringify(t)));
  // Weighted compute.
  for (let r = 0; r < 50; r++) {
    const n = Number(next() % 60n);
    const f = Array.from({ length: n }, () => next());
    const w = Array.from({ length: n }, () => Number(next() % 100n) / 7 - 3);
    assert.is(simhashCompute(f, w), ref.compute(f, w));
  }
  // Binary weighting = each distinct shingle votes once.
  const rep = 'a b c d a b c d a b c d e f g h';
  const distinct = [...new Set(ref.shingles(ref.tokenize(rep)))].map(ref.unsignedHash);
  assert.is(simhashFingerprintsSync([rep], { profile: 'seomoz', weighting: 'binary' })[0], ref.compute(distinct));
});

test('default profile: word 3-grams of \\W+-split lower-cased text (one shingle when shorter), fast64, each distinct shingle once', () => {
  const texts = ['The quick brown fox jumps over the lazy dog', 'Two WORDS', '', 'a a a a b b a a a a', 'naïve café, Über!'];
  const fps = simhashFingerprintsSync(texts);
  const sh = shingleHashesSync(texts, { unit: 'word', n: 3, split: 'nonword', lowercase: true, short: 'whole', hash: 'fast64', dedupe: true });
  texts.forEach((t, i) => assert.is(fps[i], simhashCompute(sh.hashes.subarray(sh.offsets[i], sh.offsets[i + 1]) as BigUint64Array), t));
  assert.ok(fps[1] !== 0n); // the two-word text has its one shingle
});

test('default weighting (issue 26): one repeated shingle does not decide the fingerprint', () => {
  // Two unrelated texts, each with a long run of spaces: with counts the run's shingle outvotes the rest in
  // char 5-grams and both get its fingerprint; each distinct shingle voting once keeps them apart.
  const pad = ' '.repeat(3000);
  const texts = [`function add(a, b) { return a + b; }${pad}module.exports = add;`, `The quick brown fox jumps over the lazy dog.${pad}The end.`];
  const o = { unit: 'char', n: 5, lowercase: false } as const;
  const counted = simhashFingerprintsSync(texts, { ...o, weighting: 'count' });
  assert.is(counted[0], counted[1]);
  const fps = simhashFingerprintsSync(texts, o);
  const sh = shingleHashesSync(texts, { ...o, hash: 'fast64', dedupe: true });
  texts.forEach((_, i) => assert.is(fps[i], ref.compute(Array.from(sh.hashes.subarray(sh.offsets[i], sh.offsets[i + 1]) as BigUint64Array))));
  assert.ok(hammingDistance(fps[0], fps[1]) > 8);
  // the seomoz profile keeps counts (the drop-in)
  const rep = 'a b c d a b c d a b c d e f g h';
  assert.is(simhashFingerprintsSync([rep], { profile: 'seomoz' })[0], ref.seomozFingerprint(rep));
});

test('find-all: zero misses and zero false positives vs brute force, several (m, k)', async () => {
  for (const [m, k] of [[4, 3], [5, 3], [6, 3], [6, 4], [3, 2], [9, 8], [2, 0], [7, 1]]) {
    const fps = ref.plantedSet(250, k, BigInt(m * 10 + k));
    fps.push(fps[0], fps[0]); // identical fingerprints are pairs
    const want = ref.bruteForcePairs(fps, k).map(([i, j]) => `${i} ${j}`);
    const r = await simhashFindAll(fps, { blocks: m, distance: k, clusters: true });
    const got: string[] = [];
    for (let i = 0; i < r.pairs.length; i += 2) got.push(`${r.pairs[i]} ${r.pairs[i + 1]}`);
    assert.equal(got, want, `(${m},${k})`);
    // Clusters: every pair inside one cluster, every cluster id in some pair.
    const where = new Map<bigint, number>();
    const c = r.clusters!;
    for (let i = 0; i + 1 < c.offsets.length; i++) for (let j = c.offsets[i]; j < c.offsets[i + 1]; j++) where.set(c.ids[j], i);
    for (let i = 0; i < r.pairs.length; i += 2) assert.is(where.get(r.pairs[i]), where.get(r.pairs[i + 1]));
    assert.is(where.size, new Set(Array.from(r.pairs)).size);
  }
});

test('index: zero misses and zero false positives vs brute force, several (m, k)', async () => {
  for (const [m, k] of [[6, 3], [5, 3], [4, 3], [3, 1], [10, 8], [1, 0]]) {
    const fps = ref.plantedSet(500, k, BigInt(m * 100 + k));
    const ids = fps.map((_, i) => BigInt(i) * 7n + 3n);
    const ix = new SimhashIndex({ blocks: m, distance: k });
    ix.insert(ids.slice(0, 10), fps.slice(0, 10));
    await ix.insertAsync(ids.slice(10, 400), fps.slice(10, 400));
    ix.insert(ids.slice(400), fps.slice(400));
    const removed = new Set<number>();
    for (let i = 0; i < fps.length; i += 5) removed.add(i);
    assert.is(ix.remove([...removed].map((i) => ids[i]).concat([123456789n])), removed.size);
    const queries = fps.slice(0, 200).concat(ref.plantedSet(50, k, 7n));
    const all = await ix.findAllMany(queries);
    const first = ix.findFirstManySync(queries);
    queries.forEach((q, qi) => {
      const want = fps.map((f, i) => (!removed.has(i) && ref.distance(f, q) <= k ? ids[i] : -1n)).filter((x) => x >= 0n).sort((a, b) => (a < b ? -1 : 1));
      assert.equal(Array.from(all.ids.subarray(all.offsets[qi], all.offsets[qi + 1])), want, `(${m},${k}) query ${qi}`);
      assert.equal(Array.from(ix.findAll(q)), want);
      const f = ix.findFirst(q);
      if (want.length === 0) {
        assert.is(f, null);
        assert.is(first.found[qi], 0);
      } else {
        assert.ok(f !== null && want.includes(f));
        assert.ok(first.found[qi] === 1 && want.includes(first.ids[qi]));
      }
    });
    assert.is(ix.stats().size, fps.length - removed.size);
    ix.close();
  }
});

test('index: ids are unique, bad parameters are RangeErrors, closed index throws', () => {
  const ix = new SimhashIndex({ blocks: 6, distance: 3 });
  ix.insert([1n], [5n]);
  assert.throws(() => ix.insert([1n], [6n]), (e: Error) => e instanceof RangeError && /already/.test(e.message));
  assert.throws(() => ix.insert([2n, 2n], [6n, 7n]), (e: Error) => e instanceof RangeError && /twice/.test(e.message));
  assert.ok(ix.has(1n) && !ix.has(2n));
  assert.throws(() => ix.insert([3n, 4n], [1n]), RangeError);
  assert.throws(() => new SimhashIndex({ blocks: 3, distance: 3 }), RangeError);
  assert.throws(() => new SimhashIndex({ blocks: 6, distance: 9 }), RangeError);
  assert.throws(() => new SimhashIndex({ blocks: 64, distance: 8 }), RangeError);
  assert.throws(() => ix.findFirst('x' as unknown as bigint), TypeError);
  assert.is(hammingDistance(0n, 7n), 3);
  assert.is(pickSimhashBlocks(1e6, 3), 5);
  ix.close();
  assert.throws(() => ix.findFirst(5n), (e: Error) => (e as { code?: string }).code === 'ERR_NEARDUP_CLOSED');
});

test('index: close() while async work is pending is safe', async () => {
  const fps = ref.plantedSet(3000, 3, 9n);
  const ids = fps.map((_, i) => BigInt(i));
  const ix = new SimhashIndex({ blocks: 5, distance: 3 });
  ix.insert(ids, fps);
  const pending = [ix.findAllMany(fps), ix.insertAsync([10n ** 9n], [1n]), ix.findFirstMany(fps), ix.save(path.join(os.tmpdir(), `nd-close-${process.pid}.simh`))];
  ix.close();
  const settled = await Promise.allSettled(pending);
  for (const s of settled) {
    if (s.status === 'rejected') assert.is((s.reason as { code?: string }).code, 'ERR_NEARDUP_CANCELLED');
  }
  fs.rmSync(path.join(os.tmpdir(), `nd-close-${process.pid}.simh`), { force: true });
});

test('index: a file written before the smaller directories (format 1, 2^6 buckets for 231 keys) opens and answers as brute force', () => {
  // test/fixtures/formats/simhash-index-v1.simh: written by the addon of commit 5e6585c from
  // ref.plantedSet(120, 1, 29n) with ids 1000 + 3i, blocks 4, distance 1 (directories of count/4 buckets,
  // today's builds write count/16)
  const fps = ref.plantedSet(120, 1, 29n);
  const ids = fps.map((_, i) => BigInt(1000 + 3 * i));
  const file = path.join(__dirname, 'fixtures', 'formats', 'simhash-index-v1.simh');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-simh-v1-'));
  try {
    const old = SimhashIndex.open(file);
    const fresh = new SimhashIndex({ blocks: 4, distance: 1 });
    fresh.insert(ids, fps);
    fresh.saveSync(path.join(dir, 'new.simh'));
    assert.ok(fs.statSync(path.join(dir, 'new.simh')).size < fs.statSync(file).size, 'the new file has smaller directories');
    const reopened = SimhashIndex.open(path.join(dir, 'new.simh'));
    const queries = fps.concat(ref.plantedSet(30, 1, 5n));
    for (const q of queries) {
      const want = fps.map((f, i) => (ref.distance(f, q) <= 1 ? ids[i] : -1n)).filter((x) => x >= 0n).sort((a, b) => (a < b ? -1 : 1));
      assert.equal(Array.from(old.findAll(q)), want);
      assert.equal(Array.from(reopened.findAll(q)), want);
    }
    // a mutation copies the mapped arrays; the old file's tables are rebuilt with the new directories
    old.insert([1n], [fps[0]]);
    assert.ok(Array.from(old.findAll(fps[0])).includes(1n));
    old.close();
    reopened.close();
    fresh.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('index: save / open round trip, mutation after open, corrupt files', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-simhash-'));
  const file = path.join(dir, 'a.simh');
  const fps = ref.plantedSet(2000, 3, 11n);
  const ids = fps.map((_, i) => BigInt(i) + 100n);
  const ix = new SimhashIndex({ blocks: 6, distance: 3 });
  ix.insert(ids, fps);
  ix.remove([100n, 101n]);
  await ix.save(file);
  const qs = BigUint64Array.from(fps.slice(0, 300));
  const before = ix.findAllManySync(qs);
  const back = SimhashIndex.open(file);
  assert.ok(back.stats().mapped);
  assert.is(back.stats().size, fps.length - 2);
  const after = await back.findAllMany(qs);
  assert.equal(Array.from(after.ids), Array.from(before.ids));
  assert.equal(Array.from(after.offsets), Array.from(before.offsets));
  back.insert([1n], [fps[0]]);
  assert.ok(back.findAll(fps[0]).includes(1n));
  assert.is(back.remove([102n]), 1);
  back.saveSync(file); // over the file it was opened from
  const again = SimhashIndex.open(file);
  assert.is(again.stats().size, fps.length - 2);
  // Corruption.
  const bytes = fs.readFileSync(file);
  fs.writeFileSync(path.join(dir, 'trunc.simh'), bytes.subarray(0, bytes.length - 9));
  assert.throws(() => SimhashIndex.open(path.join(dir, 'trunc.simh')), (e: Error) =>
    (e as { code?: string }).code === 'ERR_NEARDUP_CORRUPT' && e.message.includes('trunc.simh'));
  const flipped = Buffer.from(bytes);
  flipped[5000] ^= 0xff;
  fs.writeFileSync(path.join(dir, 'flip.simh'), flipped);
  assert.throws(() => SimhashIndex.open(path.join(dir, 'flip.simh')), (e: Error) =>
    (e as { code?: string }).code === 'ERR_NEARDUP_CORRUPT' && /checksum/.test(e.message));
  // Structural check without the checksum: the first directory word (after head, fps, ids, table head).
  const n = fps.length - 2;
  const bad = Buffer.from(bytes);
  bad.writeUInt32LE(7, 64 + 32 + n * 16 + 8);
  fs.writeFileSync(path.join(dir, 'dir.simh'), bad);
  assert.throws(() => SimhashIndex.open(path.join(dir, 'dir.simh'), { verify: false }), (e: Error) =>
    (e as { code?: string }).code === 'ERR_NEARDUP_CORRUPT' && /offset \d+/.test(e.message) && e.message.includes('dir.simh'));
  assert.throws(() => SimhashIndex.open(path.join(dir, 'missing.simh')), (e: Error) => (e as { code?: string }).code === 'ERR_NEARDUP_IO');
  ix.close();
  back.close();
  again.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('openAsync: maps and verifies on the pool; same answers as open(); corrupt/missing files reject', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-simh-async-'));
  const file = path.join(dir, 'a.simh');
  const fps = BigUint64Array.from({ length: 3000 }, (_, i) => BigInt.asUintN(64, BigInt(i) * 0x9e3779b97f4a7c15n));
  const ids = BigUint64Array.from(fps, (_, i) => BigInt(i) + 7n);
  const ix = new SimhashIndex({ blocks: 6, distance: 3 });
  ix.insert(ids, fps);
  ix.saveSync(file);
  const sync = SimhashIndex.open(file);
  const pending = SimhashIndex.openAsync(file);
  assert.ok(pending instanceof Promise);
  const opened = await pending;
  assert.ok(opened instanceof SimhashIndex);
  assert.equal(opened.stats(), sync.stats());
  assert.equal(await opened.findAllMany(fps), await sync.findAllMany(fps));
  assert.is(opened.findFirst(fps[10]), 17n);
  assert.ok((await SimhashIndex.openAsync(file, { verify: false })).has(7n));
  const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: { code?: string }) => e.code);
  const flipped = fs.readFileSync(file);
  flipped[flipped.length - 100] ^= 0xff;
  fs.writeFileSync(path.join(dir, 'flip.simh'), flipped);
  assert.is(await code(SimhashIndex.openAsync(path.join(dir, 'flip.simh'))), 'ERR_NEARDUP_CORRUPT');
  assert.is(await code(SimhashIndex.openAsync(path.join(dir, 'missing.simh'))), 'ERR_NEARDUP_IO');
  assert.throws(() => SimhashIndex.openAsync(''), (e: Error) => e instanceof TypeError);
  opened.close();
  assert.throws(() => opened.stats(), (e: Error) => (e as { code?: string }).code === 'ERR_NEARDUP_CLOSED');
  ix.close();
  sync.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('simhashFindAll without ids: the native side numbers fingerprints 0..n-1', async () => {
  const fps = BigUint64Array.from({ length: 500 }, (_, i) => BigInt.asUintN(64, BigInt(i % 60) * 0x9e3779b97f4a7c15n) ^ BigInt(i % 3));
  const ids = BigUint64Array.from(fps, (_, i) => BigInt(i));
  const opts = { blocks: 6, distance: 3, clusters: true, pairs: true };
  const explicit = await native.simhashFindAll(ids, fps, opts, 2 ** 25);
  assert.ok(explicit.pairs.length > 0);
  assert.equal(await native.simhashFindAll(undefined, fps, opts, 2 ** 25), explicit);
  assert.equal(native.simhashFindAllSync(undefined, fps, opts, 2 ** 25), explicit);
  assert.equal(await simhashFindAll(fps, { distance: 3, blocks: 6, clusters: true }), { pairs: explicit.pairs, clusters: { offsets: explicit.clusterOffsets!, ids: explicit.clusterIds! } });
  assert.throws(() => native.simhashFindAllSync(ids.subarray(1), fps, opts, 2 ** 25), (e: Error) => e instanceof RangeError);
});


test('find-all on dense sets (issue 26): equal fingerprints and values within a few bits, vs brute force', async () => {
  // 300 identical fingerprints plus 300 within 1..3 bits of them, a dense cluster of distinct values and
  // random ones, shuffled. Before equal values were grouped and dense groups compared all-to-all, k = 3 took
  // seconds and k = 5, 8 minutes (bench/simhash-dense.ts); the pairs were right, only slow.
  const next = ref.rng(2626n);
  const base = next(), base2 = next();
  const fps: bigint[] = [];
  for (let i = 0; i < 300; i++) fps.push(base);
  for (let i = 0; i < 300; i++) {
    let y = base;
    for (let f = 0, flips = 1 + Number(next() % 3n); f < flips; f++) y ^= 1n << (next() % 64n);
    fps.push(y);
  }
  for (let i = 0; i < 100; i++) fps.push(base2 ^ (1n << (next() % 64n)) ^ (1n << (next() % 64n)));
  for (let i = 0; i < 100; i++) fps.push(next());
  for (let i = fps.length - 1; i > 0; i--) {
    const j = Number(next() % BigInt(i + 1));
    [fps[i], fps[j]] = [fps[j], fps[i]];
  }
  const ids = fps.map((_, i) => BigInt(i) * 3n + 1n);
  for (const [m, k] of [[6, 3], [8, 5], [11, 8]]) {
    const want = ref.bruteForcePairs(fps, k);
    const wantIds = want.flatMap(([i, j]) => [ids[i], ids[j]]);
    const r = await simhashFindAll(fps, { ids, blocks: m, distance: k, clusters: true });
    assert.is(r.pairs.length, wantIds.length, `(${m},${k})`);
    assert.ok(Array.from(r.pairs).every((x, i) => x === wantIds[i]), `(${m},${k}) pairs`);
    const streamed: bigint[] = [];
    for await (const { a, b } of simhashFindAllStream(fps, { ids, blocks: m, distance: k, chunkPairs: 9000 })) for (let i = 0; i < a.length; i++) streamed.push(a[i], b[i]);
    assert.ok(streamed.length === wantIds.length && streamed.every((x, i) => x === wantIds[i]), `(${m},${k}) stream`);
    // clusters without pairs: the components of the brute-force pairs
    const parent = fps.map((_, i) => i);
    const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x])));
    for (const [i, j] of want) parent[Math.max(find(i), find(j))] = Math.min(find(i), find(j));
    const groups = new Map<number, bigint[]>();
    fps.forEach((_, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), ids[i]]));
    const wantClusters = [...groups.values()].filter((g) => g.length > 1).map((g) => g.join(' ')).sort();
    const c = (await simhashFindAll(fps, { ids, blocks: m, distance: k, clusters: true, pairs: false })).clusters!;
    const gotClusters: string[] = [];
    for (let i = 0; i + 1 < c.offsets.length; i++) gotClusters.push(Array.from(c.ids.subarray(c.offsets[i], c.offsets[i + 1])).join(' '));
    assert.equal(gotClusters.sort(), wantClusters, `(${m},${k}) clusters`);
  }
});

test.run();
