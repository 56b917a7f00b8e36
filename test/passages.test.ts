// Shared passages (PassageIndex extract / query / pairs) against the brute-force reference in
// test/reference/passages.ts, on small random corpora full of copied passages (also copied in other cases
// and punctuation, repeated within a document, and spread over two index runs).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassageIndex } from '../lib/passages';
import { rng, int, pick } from './reference/random';
import { refExtract, refPairs, refQuery, refWindows } from './reference/passages';

const test = suite('passages');
let dir = '';
test.before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-passages-')); });
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const VOCAB = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu', 'nu', 'xi',
  'omicron', 'pi', 'rho', 'sigma', 'tau', 'upsilon', 'phi', 'chi', 'psi', 'omega', 'Straße', 'café', 'naïve', '東京', 'x_1', '42'];
const SEPS = [' ', ' ', ' ', ', ', '. ', '\n', ' - '];

/** Random corpora: words from a small vocabulary, with passages copied from other documents. */
function corpus(seed: number, n: number): string[] {
  const r = rng(seed);
  const words: string[][] = [];
  for (let d = 0; d < n; d++) {
    const w: string[] = Array.from({ length: int(r, 3, 60) }, () => pick(r, VOCAB));
    for (let c = int(r, 0, 3); c > 0 && d > 0; c--) {
      const src = words[int(r, 0, d - 1)];
      const a = int(r, 0, src.length - 1), len = int(r, 1, 25);
      let piece = src.slice(a, a + len);
      if (r() < 0.2) piece = piece.map((x) => x.toUpperCase());
      const at = int(r, 0, w.length);
      w.splice(at, 0, ...piece);
      if (r() < 0.1) w.push(...piece);  // repeated within the document
    }
    words.push(w);
  }
  return words.map((w) => w.map((x) => x + pick(r, SEPS)).join(''));
}

async function build(name: string, docs: string[], seqLen: number, runs: number, merge: boolean) {
  const p = await PassageIndex.open(path.join(dir, name), { seqLen }, true);
  const cut = Math.floor(docs.length / runs);
  for (let k = 0; k < runs; k++) {
    const part = docs.slice(k * cut, k === runs - 1 ? docs.length : (k + 1) * cut);
    await p.add(part.map((t, i) => ({ id: `d${k * cut + i}`, text: Buffer.from(t) })), { memory: k % 2 ? 1 << 16 : 0 });
  }
  if (merge) await p.merge();
  return p;
}

for (const [seed, n, seqLen, runs, merge] of [[1, 30, 4, 1, false], [2, 45, 3, 2, false], [3, 60, 5, 3, true], [4, 25, 2, 2, true]] as const) {
  test(`corpus ${seed} (${n} docs, window ${seqLen}, ${runs} runs${merge ? ', merged' : ''}) == the brute-force reference`, async () => {
    const docs = corpus(seed, n);
    const wins = docs.map((t) => refWindows(t, seqLen));
    const p = await build(`c${seed}`, docs, seqLen, runs, merge);
    const id = (d: number) => `d${d}`;
    const slice = (d: number, b: number, e: number) => Buffer.from(docs[d]).subarray(b, e).toString('utf8');
    try {
      // extract, at several cut-offs
      for (const [sigma, minDocs] of [[0, 2], [2, 2], [-1, 3], [0.5, 2]] as const) {
        const got = [];
        for await (const x of p.extract({ sigma, minDocs })) got.push(x);
        const want = refExtract(wins, sigma, minDocs).map((x) => ({
          blot: x.firstBlot.toString(16).padStart(8, '0'), count: x.count, windows: x.windows,
          docs: x.docs.map((o) => ({ id: id(o.doc), begin: o.begin, end: o.end, text: slice(o.doc, o.begin, o.end) })),
        }));
        assert.equal(got, want, `extract sigma ${sigma} minDocs ${minDocs}`);
        if (sigma === 0) assert.ok(want.some((x) => x.windows > 1), 'the corpus has passages longer than one window');
      }
      // query: documents of the corpus (and a mix of two) against the index
      const queries = [docs[3], docs[n - 1], docs[5] + ' ' + docs[7], 'nothing shared here at all'];
      for (const [minShared, maxDocs] of [[1, 1000], [2, 1000], [1, 3]] as const) {
        const got = await p.query(queries.map((q) => Buffer.from(q)), { minShared, maxDocs });
        queries.forEach((q, i) => {
          const want = refQuery(refWindows(q, seqLen), wins, minShared, maxDocs).map((m) => ({
            id: id(m.doc), passages: m.runs.length, windows: m.windows,
            spans: m.runs.map((r) => ({ windows: r.len, query: r.query, doc: r.doc, text: slice(m.doc, r.doc[0], r.doc[1]) })),
          }));
          assert.equal(got[i], want, `query ${i} minShared ${minShared} maxDocs ${maxDocs}`);
        });
      }
      // pairs
      for (const [minShared, maxDocs] of [[1, 1000], [2, 1000], [1, 3]] as const) {
        const got = await p.pairs({ minShared, maxDocs });
        const want = refPairs(wins, minShared, maxDocs).map((x) => ({
          a: id(x.a), b: id(x.b), passages: x.passages, windows: x.windows,
          coverA: x.bytesA / Buffer.byteLength(docs[x.a]), coverB: x.bytesB / Buffer.byteLength(docs[x.b]),
        }));
        assert.ok(want.length > 0);
        assert.equal(got, want, `pairs minShared ${minShared} maxDocs ${maxDocs}`);
        // under a cap of a few KB (eligible keys in partitions, occurrences in a file, many blocks, the
        // output sort spilled): the same pairs, and the spill folder is gone
        const spill = path.join(dir, `spill-${seed}`);
        fs.mkdirSync(spill, { recursive: true });
        for (const memory of [1, 4096, 20000]) {
          assert.equal(await p.pairs({ minShared, maxDocs, memory, tmp: spill }), want, `pairs capped at ${memory}`);
          assert.equal(fs.readdirSync(spill), []);
        }
      }
    } finally {
      p.close();
    }
  });
}

test('extract under a tiny memory cap (every sort spilled, the key table in partitions) == without a cap', async () => {
  const docs = corpus(7, 80);
  const p = await build('capped', docs, 3, 2, false);
  const spill = path.join(dir, 'spill');
  fs.mkdirSync(spill);
  try {
    for (const [sigma, minDocs] of [[0, 2], [-1, 2], [1, 3]] as const) {
      const free = [], capped = [], limited = [];
      for await (const x of p.extract({ sigma, minDocs })) free.push(x);
      for await (const x of p.extract({ sigma, minDocs, memory: 1, tmp: spill })) capped.push(x);
      for await (const x of p.extract({ sigma, minDocs, memory: 1, tmp: spill, limit: 5 })) limited.push(x);
      assert.ok(free.length > 5);
      assert.equal(capped, free, `sigma ${sigma} minDocs ${minDocs}`);
      assert.equal(limited, free.slice(0, 5));
      assert.equal(fs.readdirSync(spill), [], 'the spill folder is removed');
    }
    // an extract left before its end removes its spill files too
    for await (const x of p.extract({ sigma: 0, memory: 1, tmp: spill })) { assert.ok(x); break; }
    assert.equal(fs.readdirSync(spill), []);
  } finally {
    p.close();
  }
});

test('extractLines == JSON.stringify of extract, byte for byte (escapes, invalid UTF-8, any id)', async () => {
  const r = rng(11);
  const junk = ['"', '\\', '\n', '\t', '\u0001', '\u001f', '\u007f', '\u2028', 'é', '😀', '</script>', '\b\f\r'];
  const bytes: Buffer[] = [];
  const base = corpus(12, 40);
  base.forEach((t, i) => {
    const parts = t.split(' ').map((w) => Buffer.from(r() < 0.2 ? w + pick(r, junk) : w));
    // invalid UTF-8 between words: lone continuation bytes, a cut sequence, an overlong form, a surrogate
    const bad = [Buffer.from([0x80]), Buffer.from([0xe2, 0x82]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf4, 0x90, 0x80, 0x80]), Buffer.from([0xff])];
    const out: Buffer[] = [];
    for (const w of parts) out.push(w, r() < 0.1 ? pick(r, bad) : Buffer.from(' '));
    bytes.push(Buffer.concat(out));
    void i;
  });
  const ids: unknown[] = bytes.map((_, i) => [i, `d"${i}\\`, `é${i}\n`, { k: i }, -i * 1.5, null][i % 6]);
  const p = await PassageIndex.open(path.join(dir, 'lines'), { seqLen: 3 }, true);
  try {
    await p.add(bytes.map((text, i) => ({ id: ids[i], text })));
    for (const [sigma, limit] of [[0, undefined], [-1, 7], [1, undefined]] as const) {
      let want = '';
      for await (const x of p.extract({ sigma, limit })) want += JSON.stringify(x) + '\n';
      const got: Buffer[] = [];
      for await (const b of p.extractLines({ sigma, limit, memory: 1, tmp: dir })) got.push(b);
      assert.ok(want.length > 1000);
      if (sigma === 0) {
        for (const x of ['\ufffd', '\\"', '\\\\', '\\n', '\\u0001', '\\u001f', '\u2028', '😀', '\\b'])
          assert.ok(want.includes(x), `the passages hold ${JSON.stringify(x)}`);
      }
      assert.ok(Buffer.concat(got).equals(Buffer.from(want)), `sigma ${sigma} limit ${limit}`);
    }
    // pairs, formatted natively (ids of every kind, covers of every size), capped or not
    for (const [minShared, maxDocs] of [[1, 1000], [2, 1000], [1, 4]] as const) {
      const want = (await p.pairs({ minShared, maxDocs })).map((x) => JSON.stringify(x) + '\n').join('');
      assert.ok(want.length > 1000);
      for (const memory of [0, 4096]) {
        const got: Buffer[] = [];
        for await (const b of p.pairsLines({ minShared, maxDocs, memory, tmp: dir })) got.push(b);
        assert.ok(Buffer.concat(got).equals(Buffer.from(want)), `pairs minShared ${minShared} maxDocs ${maxDocs} memory ${memory}`);
      }
      // the CLI's way: written into one reused buffer (a line per chunk at 200 bytes; 100 bytes is too small
      // for a line with these ids: new buffers then)
      for (const size of [100, 200, 65536]) {
        const into = Buffer.alloc(size);
        const got: Buffer[] = [];
        for await (const b of p.pairsLinesInto({ minShared, maxDocs, memory: 4096, tmp: dir }, into)) {
          assert.ok(b.length > 0 && (b.buffer === into.buffer) === (size > 100), `size ${size}`);
          got.push(Buffer.from(b));
        }
        assert.ok(Buffer.concat(got).equals(Buffer.from(want)), `pairs into ${size} minShared ${minShared} maxDocs ${maxDocs}`);
        if (size === 200) assert.is(got.length, want.split('\n').length - 1);
      }
    }
    // query's matches, formatted natively
    const queries = [bytes[2], Buffer.concat([bytes[5], Buffer.from([0xc3]), bytes[9]]), Buffer.from('nothing here')];
    for (const [minShared, maxDocs] of [[1, 1000], [2, 1000], [1, 3]] as const) {
      const objs = await p.query(queries, { minShared, maxDocs });
      const lines = await p.queryLines(queries, { minShared, maxDocs });
      assert.is(lines.length, queries.length);
      objs.forEach((m, i) => assert.is(lines[i].toString(), JSON.stringify(m), `query ${i} minShared ${minShared} maxDocs ${maxDocs}`));
      assert.ok(objs[0].length > 0 && objs[2].length === 0);
    }
  } finally {
    p.close();
  }
});

test('the documented example: a quoted paragraph is one passage in extract, query and pairs', async () => {
  const shared = 'the committee agreed that the proposal should be sent back to the working group for another review';
  const docs = [`Dear all, ${shared}. Thanks.`, `Minutes: ${shared}; next meeting Monday.`, 'An unrelated note about lunch plans.', `FWD: ${shared.toUpperCase()}`];
  const p = await build('example', docs, 10, 1, false);
  try {
    const ex = [];
    for await (const x of p.extract({ sigma: 0 })) ex.push(x);
    assert.is(ex.length, 1);
    assert.is(ex[0].count, 3);
    assert.is(ex[0].windows, shared.split(' ').length - 9);
    assert.equal(ex[0].docs.map((d) => d.text), [shared, shared, shared.toUpperCase()]);
    const [q] = await p.query([Buffer.from(`Re: ${shared} (quoted)`)]);
    assert.equal(q.map((m) => m.id), ['d0', 'd1', 'd3']);
    for (const m of q) assert.equal(m.spans.map((s) => s.query), [[4, 4 + shared.length]]);
    const pairs = await p.pairs({});
    assert.equal(pairs.map((x) => [x.a, x.b, x.passages]), [['d0', 'd1', 1], ['d0', 'd3', 1], ['d1', 'd3', 1]]);
  } finally {
    p.close();
  }
});

test.run();
