// The posting store through the API (PostingIndex) against a brute-force map, the neardup blot profile
// against a pure-TypeScript reference, and `neardup passages` end to end.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { PostingIndex, blot } from '../lib/postings/postings';
import { NeardupError } from '../lib/util/errors';
import { cli } from './cli-helper';
import { refWindows } from './reference/passages';
import { rng as rng01 } from './reference/random';

const test = suite('postings');
let dir = '';
test.before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-postings-')); });
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The shared seeded generator, as 32-bit integers. */
function rng(seed: number) {
  const r = rng01(seed);
  return () => r() * 4294967296;
}

test('append / delete / merge: lookups and key counts equal a brute-force map at every step', async () => {
  const next = rng(5);
  const d = path.join(dir, 'api');
  PostingIndex.create(d);
  const ix = await PostingIndex.open(d);
  const live = new Map<number, number[]>();
  for (let step = 0; step < 12; step++) {
    const op = next() % 3;
    if (op === 0 || live.size === 0) {
      const docs = Array.from({ length: 1 + (next() % 40) }, () => Array.from({ length: next() % 30 }, () => (next() % 7 === 0 ? next() : next() % 300)));
      const ids = await ix.append(docs, { memory: next() % 2 ? 32768 : 0 });
      ids.forEach((id, i) => { assert.not.ok(live.has(id)); live.set(id, docs[i]); });
    } else if (op === 1) {
      const del = [...live.keys()].filter(() => next() % 4 === 0);
      await ix.delete(del);
      del.forEach((id) => live.delete(id));
    } else {
      await ix.merge();
      assert.is(ix.info().segments, 1);
      assert.is(ix.info().tombstones, 0);
    }
    const ref = new Map<number, Set<number>>();
    for (const [id, keys] of live) for (const k of keys) (ref.get(k) ?? ref.set(k, new Set()).get(k)!).add(id);
    const { keys, counts } = await ix.keyCounts();
    const want = [...ref.keys()].sort((a, b) => a - b);
    assert.equal(Array.from(keys), want);
    assert.equal(Array.from(counts), want.map((k) => ref.get(k)!.size));
    const r = await ix.lookup(want);
    want.forEach((k, i) => assert.equal(Array.from(r.docs.subarray(r.offsets[i], r.offsets[i + 1])), [...ref.get(k)!].sort((a, b) => a - b)));
    assert.is(ix.info().liveDocs, live.size);
  }
  const err = await ix.delete([ix.info().nextId + 5]).then(() => null, (x) => x);
  assert.match(String(err?.message), /not in the index/);
  ix.close();
});

test('64-bit keys: append, streaming append, abort, delete, merge equal a brute-force map', async () => {
  const next = rng(17);
  const d = path.join(dir, 'api64');
  PostingIndex.create(d, { keyBits: 64 });
  const ix = await PostingIndex.open(d);
  assert.is(ix.keyBits, 64);
  const live = new Map<number, bigint[]>();
  // keys that differ only above bit 31, the extremes, and random 64-bit values
  const key = () => {
    const r = next() % 4;
    return r === 0 ? BigInt(next() % 50) << 40n | 7n : r === 1 ? (next() % 2 ? 2n ** 64n - 1n : 0n) : BigInt(next()) << 32n | BigInt(next() % 100);
  };
  for (let step = 0; step < 10; step++) {
    const op = next() % 4;
    const docs = Array.from({ length: 1 + (next() % 30) }, () => Array.from({ length: next() % 20 }, key));
    if (op === 0 || live.size === 0) {
      const ids = await ix.append(docs, { memory: next() % 2 ? 16384 : 0 });
      ids.forEach((id, i) => live.set(id, docs[i]));
    } else if (op === 1) {
      const app = await ix.appender({ memory: 16384, keyBits: 48 });
      assert.ok(ix.info().appending);
      const a = await app.add(docs.slice(0, 5));
      const b = await app.add(docs.slice(5).map((k) => BigUint64Array.from(k)));
      const refused = await ix.merge().then(() => null, (e) => e);
      assert.match(String(refused?.message), /append is in progress/);
      await app.commit();
      [...a, ...b].forEach((id, i) => live.set(id, docs[i]));
    } else if (op === 2) {
      const app = await ix.appender({});
      await app.add(docs);
      await app.abort();
      assert.not.ok(ix.info().appending);
    } else {
      const del = [...live.keys()].filter(() => next() % 3 === 0);
      await ix.delete(del);
      del.forEach((id) => live.delete(id));
      if (next() % 2) await ix.merge();
    }
    const ref = new Map<bigint, Set<number>>();
    for (const [id, keys] of live) for (const k of keys) (ref.get(k) ?? ref.set(k, new Set()).get(k)!).add(id);
    const want = [...ref.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const { keys, counts } = await ix.keyCounts();
    assert.ok(keys instanceof BigUint64Array);
    assert.equal(Array.from(keys as BigUint64Array), want);
    assert.equal(Array.from(counts), want.map((k) => ref.get(k)!.size));
    const r = await ix.lookup(want);
    want.forEach((k, i) => assert.equal(Array.from(r.docs.subarray(r.offsets[i], r.offsets[i + 1])), [...ref.get(k)!].sort((a, b) => a - b)));
    assert.is(ix.info().liveDocs, live.size);
  }
  // keys of the wrong width are refused, and a 64-bit index cannot hold blots
  assert.throws(() => ix.lookup([1, 2] as unknown as bigint[]), /bigint/);
  assert.throws(() => ix.appendTexts(['a b c']), /32-bit keys/);
  ix.close();
  assert.throws(() => PostingIndex.create(path.join(dir, 'bad-width'), { keyBits: 16 as 32 }), /32 or 64/);
});

test('bounded-memory build writes the same segment bytes as an unbounded one', async () => {
  const next = rng(9);
  const texts = Array.from({ length: 300 }, () => Array.from({ length: 200 }, () => 'w' + (next() % 500)).join(' '));
  const bytes: Buffer[] = [];
  for (const memory of [0, 32768]) {
    const d = path.join(dir, 'mem' + memory);
    PostingIndex.create(d);
    const ix = await PostingIndex.open(d);
    await ix.appendTexts(texts, { memory });
    ix.close();
    const seg = fs.readdirSync(d).filter((f) => f.endsWith('.pst'));
    assert.is(seg.length, 1);
    bytes.push(fs.readFileSync(path.join(d, seg[0])));
  }
  assert.ok(bytes[0].equals(bytes[1]));
});

test('a corrupt or truncated segment is refused naming the file (verify) and the offset', async () => {
  const d = path.join(dir, 'corrupt');
  PostingIndex.create(d);
  const ix = await PostingIndex.open(d);
  await ix.appendTexts(Array.from({ length: 50 }, (_, i) => `doc ${i} ` + 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu '.repeat(3)));
  ix.close();
  const seg = path.join(d, fs.readdirSync(d).find((f) => f.endsWith('.pst'))!);
  const good = fs.readFileSync(seg);
  const flipped = Buffer.from(good);
  flipped[100] ^= 4;
  fs.writeFileSync(seg, flipped);
  const e = await PostingIndex.open(d, { verify: true }).then(() => null, (x) => x);
  assert.instance(e, NeardupError);
  assert.is(e.code, 'ERR_NEARDUP_CORRUPT');
  assert.ok(e.message.includes(seg), e.message);
  fs.writeFileSync(seg, good.subarray(0, good.length - 7));
  const e2 = await PostingIndex.open(d).then(() => null, (x) => x);
  assert.is(e2?.code, 'ERR_NEARDUP_CORRUPT');
  assert.ok(e2.message.includes(seg), e2.message);
  fs.writeFileSync(seg, good);
});

test('neardup profile == the TypeScript reference (ordered and xor, windows 1..12, Unicode, sizes)', async () => {
  const next = rng(3);
  const vocab = ['alpha', 'Beta', 'ÇA', 'Σίσυφος', 'straße', 'İstanbul', '東京', '١٢٣', 'x_y', 'don', 't', 'KELVIN', 'ǅemal', 'e\u0301t\u00e9'];
  const seps = [' ', ', ', '\n', ' — ', "'", '\u00a0', '!! ', '\t'];
  const texts: string[] = [];
  for (let i = 0; i < 120; i++) {
    const n = next() % 40;
    let s = next() % 2 ? '' : seps[next() % seps.length];
    for (let k = 0; k < n; k++) s += vocab[next() % vocab.length] + seps[next() % seps.length];
    texts.push(s);
  }
  for (const bits of [32, 64] as const) for (const hash of ['ordered', 'xor'] as const) {
    for (const seqLen of [1, 3, 10, 12]) {
      const r = await blot(texts, { profile: 'neardup', hash, seqLen, bits });
      assert.ok(bits === 64 ? r.blots instanceof BigUint64Array : r.blots instanceof Uint32Array);
      texts.forEach((t, i) => {
        const ref = refWindows(t, seqLen, hash, bits);
        const a = r.docOffsets[i], b = r.docOffsets[i + 1];
        assert.equal(Array.from(r.blots.subarray(a, b) as ArrayLike<number | bigint>), ref.blots, `${bits} ${hash} ${seqLen} ${JSON.stringify(t)}`);
        assert.equal(Array.from(r.textBegins.subarray(a, b), (x, j) => [x, r.textEnds[a + j]]), ref.ranges);
      });
    }
  }
});

test('the ordered window hash sees word order and repeats; xor does not (dupi)', async () => {
  const base = 'one two three four five six seven eight nine ten';
  const swapped = 'two one three four five six seven eight nine ten';
  const rep = 'spam spam spam spam spam spam spam spam spam spam';
  const o = await blot([base, swapped, rep], { seqLen: 10 });
  assert.is.not(o.blots[0], o.blots[1]);
  assert.is.not(o.blots[2], 0);
  const x = await blot([base, swapped, rep], { seqLen: 10, hash: 'xor' });
  assert.is(x.blots[0], x.blots[1]);
  assert.is(x.blots[2], 0);  const o64 = await blot([base, swapped, rep], { seqLen: 10, bits: 64 });
  assert.is.not(o64.blots[0], o64.blots[1]);
  assert.is.not(o64.blots[2], 0n);
  const x64 = await blot([base, swapped, rep], { seqLen: 10, hash: 'xor', bits: 64 });
  assert.is(x64.blots[0], x64.blots[1]);
  assert.is(x64.blots[2], 0n);
});

test('neardup passages index (gzip, --id-field, two runs) / extract / query', () => {
  const w = path.join(dir, 'cli');
  fs.mkdirSync(w);
  const shared = 'the committee agreed that the proposal should be sent back to the working group for another review';
  const docs = [
    { key: 'a', body: `Dear all, ${shared}. Thanks.` },
    { key: 'b', body: `Minutes: ${shared}; next meeting Monday.` },
    { key: 'c', body: 'An unrelated note about lunch plans and the weather this weekend in the hills nearby.' },
    { key: 'd', body: `FWD: ${shared.toUpperCase()}` },
  ];
  const jl = (xs: typeof docs) => xs.map((d) => JSON.stringify({ key: d.key, body: d.body })).join('\n') + '\n';
  fs.writeFileSync(path.join(w, 'one.jsonl.gz'), zlib.gzipSync(jl(docs.slice(0, 2))));
  fs.writeFileSync(path.join(w, 'two.jsonl'), jl(docs.slice(2)));
  fs.writeFileSync(path.join(w, 'all.jsonl'), jl(docs));
  const ok = (args: string[], input?: string) => {
    const r = cli(w, args, input);
    assert.is(r.code, 0, r.stderr);
    return r.stdout.toString();
  };
  ok(['passages', 'index', '-o', 'ix', '--field', 'body', '--id-field', 'key', 'one.jsonl.gz']);
  ok(['passages', 'index', '-o', 'ix', '--field', 'body', '--id-field', 'key', 'two.jsonl']);
  ok(['passages', 'index', '-o', 'ix1', '--field', 'body', '--id-field', 'key', '--memory', '64K', 'all.jsonl']);
  const ex = ok(['passages', 'extract', 'ix', '--sigma', '0']);
  assert.is(ok(['passages', 'extract', 'ix1', '--sigma', '0']), ex);
  const lines = ex.trim().split('\n').map((l) => JSON.parse(l));
  // one passage: every window of the shared text, held by a, b and d (case folded), merged
  assert.is(lines.length, 1);
  const [p] = lines;
  assert.is(p.count, 3);
  assert.is(p.windows, shared.split(' ').length - 9);
  assert.equal(p.docs.map((d: { id: string }) => d.id), ['a', 'b', 'd']);
  for (const d of p.docs) {
    const body = Buffer.from(docs.find((x) => x.key === d.id)!.body);
    assert.is(body.subarray(d.begin, d.end).toString(), d.text);
    assert.is(d.text.toLowerCase(), shared);
  }
  const q = ok(['passages', 'query', 'ix', '--field', 'body', '--id-field', 'key'], JSON.stringify({ key: 'q', body: `Re: ${shared} (quoted)` }) + '\n');
  const res = JSON.parse(q);
  assert.is(res.id, 'q');
  assert.equal(res.matches.map((m: { id: string }) => m.id).sort(), ['a', 'b', 'd']);
  for (const m of res.matches) {
    assert.is(m.passages, 1);
    assert.is(m.windows, p.windows);
    assert.equal(m.spans[0].query, [4, 4 + shared.length]);
    assert.is(m.spans[0].text.toLowerCase(), shared);
  }
  const pairs = ok(['passages', 'pairs', 'ix']).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(pairs.map((x) => [x.a, x.b].join()).sort(), ['a,b', 'a,d', 'b,d']);
  for (const x of pairs) {
    assert.is(x.passages, 1);
    assert.is(x.windows, p.windows);
    const len = (k: string) => Buffer.byteLength(docs.find((y) => y.key === k)!.body);
    assert.is(x.coverA, shared.length / len(x.a));
    assert.is(x.coverB, shared.length / len(x.b));
  }
  assert.is(ok(['passages', 'pairs', 'ix', '--min-shared', '2']), '');
  // capped at a few KB: the same lines, nothing left in --tmp
  fs.mkdirSync(path.join(w, 'sp'));
  const all = ok(['passages', 'pairs', 'ix']);
  assert.is(ok(['passages', 'pairs', 'ix', '--memory', '4K', '--tmp', 'sp']), all);
  assert.is(ok(['passages', 'pairs', 'ix', '--memory', '1', '--tmp', 'sp', '--max-docs', '3']), ok(['passages', 'pairs', 'ix', '--max-docs', '3']));
  assert.equal(fs.readdirSync(path.join(w, 'sp')), []);
});

test.run();
