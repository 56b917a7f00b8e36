// Shared passages (PassageIndex extract / query / pairs) against the brute-force reference in
// test/reference/passages.ts, on small random corpora full of copied passages (also copied in other cases
// and punctuation, repeated within a document, and spread over two index runs).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassageIndex } from '../lib/postings/passages';
import { blot } from '../lib/postings/postings';
import { cli } from './cli-helper';
import { rng, int, pick } from './reference/random';
import { refExtract, refPairs, refQuery, refWindows, type RefWindows } from './reference/passages';

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

async function build(name: string, docs: string[], seqLen: number, runs: number, merge: boolean, bits?: 32 | 64) {
  const p = await PassageIndex.open(path.join(dir, name), { seqLen, bits }, true);
  const cut = Math.floor(docs.length / runs);
  for (let k = 0; k < runs; k++) {
    const part = docs.slice(k * cut, k === runs - 1 ? docs.length : (k + 1) * cut);
    await p.add(part.map((t, i) => ({ id: `d${k * cut + i}`, text: Buffer.from(t) })), { memory: k % 2 ? 1 << 16 : 0 });
  }
  if (merge) await p.merge();
  return p;
}

// bits 64 (the default): the reference compares the windows' texts; 32: their 32-bit blots
for (const [seed, n, seqLen, runs, merge, bits] of [[1, 30, 4, 1, false, 64], [2, 45, 3, 2, false, 32], [3, 60, 5, 3, true, 64], [4, 25, 2, 2, true, 32]] as const) {
  test(`corpus ${seed} (${n} docs, window ${seqLen}, ${runs} runs${merge ? ', merged' : ''}, ${bits}-bit blots) == the brute-force reference`, async () => {
    const docs = corpus(seed, n);
    const wins = docs.map((t) => refWindows(t, seqLen, 'ordered', bits));
    const p = await build(`c${seed}`, docs, seqLen, runs, merge, bits === 64 ? undefined : bits);
    assert.is(p.bits, bits);
    const id = (d: number) => `d${d}`;
    const slice = (d: number, b: number, e: number) => Buffer.from(docs[d]).subarray(b, e).toString('utf8');
    try {
      // extract, at several cut-offs
      for (const [sigma, minDocs] of [[0, 2], [2, 2], [-1, 3], [0.5, 2]] as const) {
        const got = [];
        for await (const x of p.extract({ sigma, minDocs })) got.push(x);
        const want = refExtract(wins, sigma, minDocs).map((x) => ({
          blot: x.firstBlot.toString(16).padStart(bits / 4, '0'), count: x.count, windows: x.windows,
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
          const want = refQuery(refWindows(q, seqLen, 'ordered', bits), wins, minShared, maxDocs).map((m) => ({
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

/** Two different windows of 10 words with one 32-bit blot: found by search over the windows of a long random text. */
async function colliding32(): Promise<[string, string]> {
  const r = rng(12345);
  const vocab = Array.from({ length: 2000 }, () => Array.from({ length: int(r, 3, 8) }, () => String.fromCharCode(97 + int(r, 0, 25))).join(''));
  const words = Array.from({ length: 300_009 }, () => pick(r, vocab));
  const b = await blot([words.join(' ')], { seqLen: 10, bits: 32 });
  const seen = new Map<number, number>();
  for (let i = 0; i < b.blots.length; i++) {
    const j = seen.get(b.blots[i]);
    const x = words.slice(i, i + 10).join(' ');
    if (j !== undefined && words.slice(j, j + 10).join(' ') !== x) return [words.slice(j, j + 10).join(' '), x];
    seen.set(b.blots[i], i);
  }
  throw new Error('no 32-bit collision among the windows');
}

/** Pairs by brute force over the windows' texts: every two documents compared window by window. */
function textPairs(wins: RefWindows[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let a = 0; a < wins.length; a++)
    for (let b = a + 1; b < wins.length; b++) if (wins[a].keys.some((k) => wins[b].keys.includes(k))) out.push([a, b]);
  return out;
}

test('64-bit blots (the default) are exact where 32-bit ones collide: two different windows with one 32-bit blot', async () => {
  const [x, y] = await colliding32();
  assert.is.not(x, y);
  const [bx, by] = (await blot([x, y], { seqLen: 10, bits: 32 })).blots;
  assert.is(bx, by, 'the two windows share a 32-bit blot');
  const shared = 'the minutes of the meeting were sent to every member of the board last week';
  const docs = [`Records: ${x}. End.`, `Notes: ${y} done`, `First: ${shared}.`, `Second, quoting: ${shared}!`, 'nothing shared here at all, only words of its own, a dozen or more'];
  const texts = docs.map((d) => refWindows(d, 10, 'ordered', 64));
  const brute = textPairs(texts);
  assert.equal(brute, [[2, 3]], 'the texts share one passage');
  const id = (d: number) => `d${d}`;
  for (const bits of [64, 32] as const) {
    const p = await build(`collide-${bits}`, docs, 10, 1, false, bits === 64 ? undefined : bits);
    try {
      assert.is(p.bits, bits);
      const pairs = (await p.pairs({})).map((q) => [q.a, q.b]);
      const query = (await p.query([Buffer.from(`Re: ${x}`)]))[0].map((m) => m.id);
      const extract = [];
      for await (const e of p.extract({ sigma: 0 })) extract.push(e.docs.map((d) => d.id));
      if (bits === 64) {
        assert.equal(pairs, brute.map(([a, b]) => [id(a), id(b)]), 'pairs == the brute force over the texts');
        assert.equal(query, ['d0']);
        assert.equal(extract, [['d2', 'd3']]);
        assert.is((await p.extract({}).next()).value!.blot.length, 16);
      } else {
        // the seed tool's width: the spurious pair, as the reference over 32-bit blots says
        assert.equal(pairs, [['d2', 'd3'], ['d0', 'd1']]);
        assert.equal(pairs, refPairs(docs.map((d) => refWindows(d, 10, 'ordered', 32)), 1, 1000).map((q) => [id(q.a), id(q.b)]));
        assert.equal(query, ['d0', 'd1']);
        assert.equal(extract.length, 2);
      }
    } finally {
      p.close();
    }
  }
});

test('a passage index written with 32-bit blots (before 64-bit ones): opened, answered as before, added to with 32-bit blots', () => {
  const fx = path.join(__dirname, 'fixtures', 'passages-32');
  const w = path.join(dir, 'old32');
  fs.cpSync(path.join(fx, 'idx'), w, { recursive: true });
  const run = (args: string[]) => {
    const r = cli(dir, args);
    assert.is(r.code, 0, r.stderr);
    return r.stdout.toString();
  };
  const expected = (f: string) => fs.readFileSync(path.join(fx, f), 'utf8');
  assert.is(run(['passages', 'extract', w]), expected('extract.jsonl'));
  assert.is(run(['passages', 'pairs', w]), expected('pairs.jsonl'));  // with its 32-bit collision (documents d and e)
  assert.ok(expected('pairs.jsonl').includes('"a":"d","b":"e"'));
  assert.is(run(['passages', 'query', w, '--id-field', 'id', path.join(fx, 'q.jsonl')]), expected('query.jsonl'));
  // a run adds to it with its width; another width is refused, naming it
  const more = path.join(dir, 'more.jsonl');
  fs.writeFileSync(more, JSON.stringify({ id: 'g', text: fs.readFileSync(path.join(fx, 'corpus.jsonl'), 'utf8').split('\n')[0] }) + '\n');
  const bad = cli(dir, ['passages', 'index', '-o', w, '--bits', '64', more]);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, /--bits 32/);
  run(['passages', 'index', '-o', w, '--id-field', 'id', more]);
  const meta = JSON.parse(fs.readFileSync(path.join(w, 'passages.json'), 'utf8'));
  assert.is(meta.bits, undefined);
  assert.is(meta.batches.length, 2);
  assert.match(run(['passages', 'pairs', w]), /"a":"d","b":"e"/);
  assert.match(run(['passages', 'pairs', w]), /"a":"a","b":"g"/);
  // a sharded build planned on it takes its width (the parts are built with 32-bit blots)
  const more2 = path.join(dir, 'more2.jsonl');
  fs.writeFileSync(more2, JSON.stringify({ id: 'h', text: fs.readFileSync(path.join(fx, 'corpus.jsonl'), 'utf8').split('\n')[1] }) + '\n');
  run(['passages', 'index', '-o', w, '--id-field', 'id', '--work', path.join(dir, 'old32-work'), '--shards', '2', more, more2]);
  assert.is(JSON.parse(fs.readFileSync(path.join(w, 'passages.json'), 'utf8')).bits, undefined);
  assert.match(run(['passages', 'pairs', w]), /"a":"b","b":"h"/);
  assert.match(run(['passages', 'pairs', w]), /"a":"d","b":"e"/);
});

test('integer ids beyond 2^53 stay exact: unquoted digits in query, pairs and extract, through one run, a second run and a sharded build; bigints from the API', async () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bigid-'));
  const shared = 'the same long passage of words that several documents quote without changing a single one of its words at all';
  const ids = ['18446744073709551615', '9007199254740993', '-9223372036854775808', '12345678901234567890123'];
  const line = (id: string, t: string) => `{"id": ${id}, "text": ${JSON.stringify(t)}}`;
  fs.writeFileSync(path.join(d, 'a.jsonl'), [line(ids[0], `one ${shared} end`), line(ids[1], `two ${shared} stop`)].join('\n') + '\n');
  fs.writeFileSync(path.join(d, 'b.jsonl'), [line(ids[2], `three ${shared} halt`), line('"s"', `four ${shared} done`)].join('\n') + '\n');
  const run = (args: string[]) => {
    const r = cli(d, args);
    assert.is(r.code, 0, r.stderr);
    return r.stdout.toString();
  };
  run(['passages', 'index', '-o', 'ix', '--id-field', 'id', 'a.jsonl']);
  run(['passages', 'index', '-o', 'ix', '--id-field', 'id', 'b.jsonl']);
  run(['passages', 'index', '-o', 'ix2', '--id-field', 'id', '--work', 'w', '--shards', '2', 'a.jsonl', 'b.jsonl']);
  for (const ix of ['ix', 'ix2']) {
    const pairs = run(['passages', 'pairs', ix]);
    for (const id of ids.slice(0, 3)) assert.ok(pairs.includes(`:${id},`) || pairs.includes(`:${id}}`), `${ix} pairs: ${id} unquoted in ${pairs.slice(0, 300)}`);
    assert.not.match(pairs, /"18446744073709551615"|18446744073709552000/);
    const extract = run(['passages', 'extract', ix, '--sigma', '0']);
    assert.ok(extract.includes(`"id":${ids[1]},`), `${ix} extract`);
    const query = run(['passages', 'query', ix, '--id-field', 'id', 'a.jsonl']);
    assert.ok(query.startsWith(`{"id":${ids[0]},`) && query.includes(`"id":${ids[2]},`), `${ix} query: ${query.slice(0, 200)}`);
  }
  // an id is any JSON value: an integer beyond 64 bits is kept as its digits too
  fs.writeFileSync(path.join(d, 'c.jsonl'), [line(ids[3], `x ${shared}`), line('7', `y ${shared}`)].join('\n') + '\n');
  run(['passages', 'index', '-o', 'ix3', '--id-field', 'id', 'c.jsonl']);
  assert.match(run(['passages', 'pairs', 'ix3']), new RegExp(`^\\{"a":${ids[3]},"b":7,`));
  // the API: a bigint id comes back as the same bigint
  const api = await PassageIndex.open(path.join(d, 'ix'));
  const got = await api.pairs();
  const all = new Set(got.flatMap((p: { a: unknown; b: unknown }) => [p.a, p.b]));
  assert.ok(all.has(18446744073709551615n) && all.has(9007199254740993n) && all.has(-9223372036854775808n), [...all].map(String).join(' '));
  api.close();
  fs.rmSync(d, { recursive: true, force: true });
});

test.run();
