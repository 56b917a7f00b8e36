// neardup substrings (ExactSubstr): the removed spans against a brute force written here (for each window of
// L bytes, does the same content occur at an earlier offset, or at any other offset with drop-all?), on small
// random corpora with few letters and multibyte characters; planted repeats through the CLI; bad input
// naming file and line with no output left; an input never overwritten; the JSON summary.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SubstringFinder, countSubstrings, removeRepeatedSubstrings } from '../lib/index';
import { native } from '../lib/native/addon';
import { cli } from './cli-helper';
import { parquetBytes } from './support/formats';

const available = native.substringsLibrary();
if (!available.ok) console.log(`substrings tests skipped: ${available.message}`);

interface Span { doc: number; start: number; end: number; firstDoc: number; firstOffset: number }

/** The rule by brute force over the documents' UTF-8 (see the file comment); spans shrunk to whole code points. */
function brute(docs: Buffer[], L: number, dropAll: boolean): Span[] {
  const windows: [number, number][] = [];
  docs.forEach((d, i) => { for (let p = 0; p + L <= d.length; p++) windows.push([i, p]); });
  const key = ([d, p]: [number, number]) => docs[d].subarray(p, p + L).toString('latin1');
  const removed = docs.map((d) => new Uint8Array(d.length));
  const keys = windows.map(key);
  windows.forEach((w, i) => {
    const hit = keys.some((k, j) => j !== i && (dropAll || j < i) && k === keys[i]);
    if (hit) removed[w[0]].fill(1, w[1], w[1] + L);
  });
  const cont = (b: number) => (b & 0xc0) === 0x80;
  const out: Span[] = [];
  docs.forEach((d, i) => {
    for (let p = 0; p < d.length;) {
      if (!removed[i][p]) { p++; continue; }
      let e = p;
      while (e < d.length && removed[i][e]) e++;
      let b = p, f = e;
      while (b < f && cont(d[b])) b++;
      while (f > b && f < d.length && cont(d[f])) f--;
      if (b < f) {
        const k0 = key([i, p]);
        const src = windows.find((w) => !(w[0] === i && w[1] === p) && key(w) === k0)!;
        out.push({ doc: i, start: b, end: f, firstDoc: src[0], firstOffset: src[1] + (b - p) });
      }
      p = e;
    }
  });
  return out;
}

// Python's str.isspace() set (what str.split() splits at), written out here
const SPACE = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;

/** Token mode by brute force: windows of L tokens (runs of non-space code points), runs of removed tokens. */
function bruteTokens(docs: Buffer[], L: number, dropAll: boolean): Span[] {
  const toks = docs.map((d) => {
    const out: { b: number; e: number; s: string }[] = [];
    let at = 0, start = -1;
    for (const ch of d.toString('utf8')) {
      const len = Buffer.byteLength(ch);
      if (SPACE.test(ch)) {
        if (start >= 0) out.push({ b: start, e: at, s: d.toString('utf8', start, at) });
        start = -1;
      } else if (start < 0) {
        start = at;
      }
      at += len;
    }
    if (start >= 0) out.push({ b: start, e: at, s: d.toString('utf8', start, at) });
    return out;
  });
  const windows: [number, number][] = [];
  toks.forEach((t, d) => { for (let j = 0; j + L <= t.length; j++) windows.push([d, j]); });
  const key = ([d, j]: [number, number]) => JSON.stringify(toks[d].slice(j, j + L).map((t) => t.s));
  const keys = windows.map(key);
  const removed = toks.map((t) => new Uint8Array(t.length));
  windows.forEach((w, i) => {
    if (keys.some((k, j) => j !== i && (dropAll || j < i) && k === keys[i])) removed[w[0]].fill(1, w[1], w[1] + L);
  });
  const out: Span[] = [];
  toks.forEach((t, d) => {
    for (let j = 0; j < t.length;) {
      if (!removed[d][j]) { j++; continue; }
      let e = j;
      while (e < t.length && removed[d][e]) e++;
      const k0 = key([d, j]);
      const src = windows.find((w) => !(w[0] === d && w[1] === j) && key(w) === k0)!;
      out.push({ doc: d, start: t[j].b, end: t[e - 1].e, firstDoc: src[0], firstOffset: toks[src[0]][src[1]].b });
      j = e;
    }
  });
  return out;
}

function spansOf(r: { doc: Float64Array; start: Float64Array; end: Float64Array; firstDoc: Float64Array; firstOffset: Float64Array }): Span[] {
  return Array.from(r.doc, (doc, k) => ({ doc, start: r.start[k], end: r.end[k], firstDoc: r.firstDoc[k], firstOffset: r.firstOffset[k] }));
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const UNITS = ['a', 'b', 'c', 'é', '€', '😀'];
function randomText(r: () => number, max: number): string {
  const n = Math.floor(r() * (max + 1));
  let s = '';
  for (let i = 0; i < n; i++) s += UNITS[Math.floor(r() * (r() < 0.25 ? 6 : 3))];
  return s;
}

function keptByBrute(texts: string[], spans: Span[]): string[] {
  return texts.map((t, d) => {
    const b = Buffer.from(t, 'utf8');
    const parts: Buffer[] = [];
    let at = 0;
    for (const s of spans.filter((x) => x.doc === d)) { parts.push(b.subarray(at, s.start)); at = s.end; }
    parts.push(b.subarray(at));
    return Buffer.concat(parts).toString('utf8');
  });
}

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-substr-'));

test('random small corpora: spans and kept texts equal the brute force, both rules', async () => {
  if (!available.ok) return;
  const r = rng(11);
  let nonEmpty = 0, multibyteCut = 0;
  for (let round = 0; round < 150; round++) {
    const texts = Array.from({ length: 1 + Math.floor(r() * 6) }, () => randomText(r, 30));
    const L = 4 + Math.floor(r() * 6);
    for (const dropAll of [false, true]) {
      const want = brute(texts.map((t) => Buffer.from(t, 'utf8')), L, dropAll);
      const got = await removeRepeatedSubstrings(texts, { minLength: L, dropAll });
      assert.equal(spansOf(got.spans), want, `round ${round}, L ${L}, dropAll ${dropAll}: ${JSON.stringify(texts)}`);
      assert.equal(got.texts, keptByBrute(texts, want));
      if (want.length) nonEmpty++;
      for (const s of want) if (Buffer.from(texts[s.doc], 'utf8').subarray(s.start, s.end).toString('utf8').length !== s.end - s.start) multibyteCut++;
    }
  }
  assert.ok(nonEmpty > 100, `repeats happen (${nonEmpty} rounds with spans)`);
  assert.ok(multibyteCut > 20, `spans hold multibyte characters (${multibyteCut})`);
});

test('token mode: random small corpora (every kind of whitespace) equal the brute force, both rules', async () => {
  if (!available.ok) return;
  const r = rng(23);
  const words = ['a', 'b', 'ab', 'é', 'b€', '😀'];
  const spaces = [' ', ' ', '  ', '\n', '\t', '\r\n', '\u00a0', '\u3000', '\u2009', '\x1f', '\u0085'];
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  let nonEmpty = 0;
  for (let round = 0; round < 120; round++) {
    const texts = Array.from({ length: 1 + Math.floor(r() * 5) }, () => {
      let t = r() < 0.3 ? pick(spaces) : '';
      const n = Math.floor(r() * 14);
      for (let i = 0; i < n; i++) t += pick(words) + (i + 1 < n || r() < 0.3 ? pick(spaces) : '');
      return t;
    });
    const L = 1 + Math.floor(r() * 4);
    for (const dropAll of [false, true]) {
      const want = bruteTokens(texts.map((t) => Buffer.from(t, 'utf8')), L, dropAll);
      const got = await removeRepeatedSubstrings(texts, { unit: 'token', minLength: L, dropAll });
      assert.equal(spansOf(got.spans), want, `round ${round}, L ${L}, dropAll ${dropAll}: ${JSON.stringify(texts)}`);
      assert.equal(got.texts, keptByBrute(texts, want));
      if (want.length) nonEmpty++;
    }
  }
  assert.ok(nonEmpty > 80, `repeats happen (${nonEmpty})`);
});

test('documents added in several batches number on; invalid UTF-8 refuses the batch naming the text', async () => {
  if (!available.ok) return;
  const f = new SubstringFinder();
  try {
    await f.add(['xxabcdefgh', 'yy']);
    await f.add({ data: Buffer.from('zzabcdefgh'), offsets: new Uint32Array([0, 10]) });
    const bad = await f.addBatch([Buffer.from('fine'), Buffer.from([0x61, 0xc3, 0x28])]);
    assert.equal(bad?.bad, 1);
    assert.match(bad!.message, /invalid UTF-8 at byte 1/);
    assert.equal(f.documents, 3);
    const r = await f.find({ minLength: 8 });
    assert.equal(spansOf(r), [{ doc: 2, start: 2, end: 10, firstDoc: 0, firstOffset: 2 }]);
    assert.equal(r.stats.removedBytes, 8);
    await assert.throws(() => f.find({ minLength: 3 }), /minLength must be an integer from 4/);
  } finally {
    f.close();
  }
});

test('CLI: planted repeats across two files are removed after their first occurrence; spans, ids and summary', () => {
  if (!available.ok) return;
  const dir = tmp();
  try {
    const r = rng(5);
    const letters = (n: number, abc: string) => Array.from({ length: n }, () => abc[Math.floor(r() * abc.length)]).join('');
    const planted = letters(150, 'ABCDEFGHIJ') + 'ß';  // 152 bytes
    const docs: { id: string; text: string; meta: { n: number } }[] = [];
    for (let i = 0; i < 12; i++) {
      const t = letters(300, 'abcdefghijklmnopqrstuvwxyz');
      docs.push({ id: `d${i}`, text: i % 4 === 1 ? `${t.slice(0, 40)}${i}${planted}${i}${t.slice(40)}` : t, meta: { n: i } });
    }
    // members JSON.parse cannot keep as written come back byte for byte (only the text's value changes)
    const extras = '"big": 12345678901234567890, "x": 1.0, "e": "\\u00e9",';
    const lines = docs.map((d) => `{${extras}${JSON.stringify(d).slice(1)}`);
    fs.writeFileSync(path.join(dir, 'a.jsonl'), lines.slice(0, 5).join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'b.jsonl'), lines.slice(5).join('\n') + '\n');
    const res = cli(dir, ['substrings', 'a.jsonl', 'b.jsonl', '--kept', 'kept.jsonl', '--spans', 'spans.jsonl', '--id-field', 'id', '--progress', 'none']);
    assert.equal(res.code, 0, res.stderr);
    const spans = fs.readFileSync(path.join(dir, 'spans.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    // documents 5 and 9 repeat document 1's planted text (at offset 41 in each: 40 letters, then a digit)
    const at = (i: number) => 40 + String(i).length;
    assert.equal(spans, [5, 9].map((i) => ({ doc: i, id: `d${i}`, start: at(i), end: at(i) + 152, first_doc: 1, first_id: 'd1', first_offset: 41 })));
    const keptLines = fs.readFileSync(path.join(dir, 'kept.jsonl'), 'utf8').trim().split('\n');
    keptLines.forEach((l, i) => {
      const text = i === 5 || i === 9 ? docs[i].text.replace(planted, '') : docs[i].text;
      const removed = i === 5 || i === 9 ? 152 : 0;
      assert.is(l, `{${extras}${JSON.stringify({ ...docs[i], text }).slice(1, -1)},"substrings_removed_bytes":${removed},"substrings_spans":${removed ? 1 : 0}}`);
    });
    const kept = keptLines.map((l) => JSON.parse(l));
    assert.equal(kept.length, 12);
    kept.forEach((k, i) => {
      assert.equal(k.id, `d${i}`);
      assert.equal(k.meta, { n: i });
      assert.equal(k.text, i === 5 || i === 9 ? docs[i].text.replace(planted, '') : docs[i].text);
      assert.equal(k.substrings_removed_bytes, i === 5 || i === 9 ? 152 : 0);
    });
    const summary = JSON.parse(res.stderr.trim().split('\n').pop()!);
    assert.equal(summary.command, 'substrings');
    assert.equal(summary.documents, 12);
    assert.equal(summary.bytes_removed, 304);
    assert.equal(summary.spans, 2);
    assert.equal(summary.documents_changed, 2);
    assert.equal(summary.rule, 'keep-first');
    assert.equal(summary.bytes_in, docs.reduce((n, d) => n + Buffer.byteLength(d.text), 0));
    for (const k of ['seconds', 'cpu_seconds', 'peak_rss_mb', 'build_seconds', 'scan_seconds']) assert.type(summary[k], 'number', k);
    // drop-all-copies: document 1's copy goes too; nested --field works
    fs.writeFileSync(path.join(dir, 'n.jsonl'), docs.map((d) => JSON.stringify({ doc: { body: d.text } })).join('\n') + '\n');
    const all = cli(dir, ['substrings', 'n.jsonl', '--field', 'doc.body', '--kept', 'all.jsonl.gz', '--drop-all-copies', '--progress', 'none']);
    assert.equal(all.code, 0, all.stderr);
    const s2 = JSON.parse(all.stderr.trim().split('\n').pop()!);
    assert.equal([s2.spans, s2.bytes_removed, s2.rule], [3, 456, 'drop-all-copies']);
    const gz = require('node:zlib').gunzipSync(fs.readFileSync(path.join(dir, 'all.jsonl.gz'))).toString().trim().split('\n').map((l: string) => JSON.parse(l));
    assert.equal(gz[1].doc.body, docs[1].text.replace(planted, ''));
    // --unit token (L 50 tokens): "w0 w1 ... w59" in documents 0 and 2; 62 + 2 + 61 tokens
    const wordy = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    fs.writeFileSync(path.join(dir, 't.jsonl'), [`x ${wordy} y`, 'nothing here', `z ${wordy}`].map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
    const tok = cli(dir, ['substrings', 't.jsonl', '--unit', 'token', '--kept', 'tk.jsonl', '--spans', 'ts.jsonl', '--progress', 'none']);
    assert.equal(tok.code, 0, tok.stderr);
    assert.equal(fs.readFileSync(path.join(dir, 'tk.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).text), [`x ${wordy} y`, 'nothing here', 'z ']);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'ts.jsonl'), 'utf8')), { doc: 2, start: 2, end: 2 + wordy.length, first_doc: 0, first_offset: 2 });
    const ts = JSON.parse(tok.stderr.trim().split('\n').pop()!);
    assert.equal([ts.unit, ts.min_length, ts.tokens, ts.spans], ['token', 50, 125, 1]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('CLI: bad input names file and line and leaves no output; an input is never overwritten; usage errors', () => {
  if (!available.ok) return;
  const dir = tmp();
  try {
    const good = JSON.stringify({ text: 'a'.repeat(300) });
    const cases: [string, Buffer, RegExp][] = [
      ['malformed.jsonl', Buffer.from(`${good}\n{"text": "oops"\n`), /malformed\.jsonl:2/],
      ['missing.jsonl', Buffer.from(`${good}\n${good}\n{"body": "x"}\n`), /missing\.jsonl:3/],
      ['utf8.jsonl', Buffer.concat([Buffer.from(`${good}\n{"text": "ab`), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]), /utf8\.jsonl:2/],
    ];
    for (const [name, bytes, where] of cases) {
      fs.writeFileSync(path.join(dir, name), bytes);
      const r = cli(dir, ['substrings', name, '--kept', 'out.jsonl', '--spans', 'spans.jsonl', '--progress', 'none']);
      assert.ok(r.code !== 0 && r.code !== 2, `${name}: exit ${r.code}`);
      assert.match(r.stderr, where);
      assert.equal(fs.readdirSync(dir).sort(), [...cases.map((c) => c[0]).slice(0, cases.findIndex((c) => c[0] === name) + 1)].sort(), `${name}: no output or temporary file left`);
    }
    fs.writeFileSync(path.join(dir, 'in.jsonl'), `${good}\n${good}\n`);
    const before = fs.readFileSync(path.join(dir, 'in.jsonl'));
    const over = cli(dir, ['substrings', 'in.jsonl', '--kept', 'in.jsonl', '--progress', 'none']);
    assert.ok(over.code !== 0);
    assert.match(over.stderr, /refusing to overwrite an input/);
    assert.equal(fs.readFileSync(path.join(dir, 'in.jsonl')), before);
    fs.symlinkSync('in.jsonl', path.join(dir, 'link.jsonl'));
    assert.match(cli(dir, ['substrings', 'in.jsonl', '--spans', 'link.jsonl']).stderr, /refusing to overwrite an input/);
    for (const args of [['in.jsonl'], ['-', '--kept', 'k.jsonl'], ['in.jsonl', '--kept', 'k.jsonl', '--min-length', '3'], ['in.jsonl', '--kept', 'k.jsonl', '--unit', 'word'], ['in.jsonl', '--kept', 'k.jsonl', '--unit', 'token', '--min-length', '0'], ['in.jsonl', '--spans', 's.gz']]) {
      const u = cli(dir, ['substrings', ...args]);
      assert.equal(u.code, 2, `${args.join(' ')}: ${u.stderr}`);
    }
    // "a" * 300 twice: every window but the one at offset 0 occurred earlier (overlapping repeats count)
    const ok = cli(dir, ['substrings', 'in.jsonl', '--kept', 'k.jsonl', '--progress', 'none']);
    assert.equal(ok.code, 0, ok.stderr);
    const k = fs.readFileSync(path.join(dir, 'k.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).text);
    assert.equal(k, ['a', '']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('CLI: a Parquet input, two row groups; its rows come back as JSON objects of their columns', async () => {
  if (!available.ok) return;
  const dir = tmp();
  try {
    const shared = 'The quick brown fox jumps over the lazy dog, and then the dog chases the fox around the yard again!';
    const texts = ['one ' + shared + ' x', 'two', 'three ' + shared + ' y', 'four ' + shared];
    fs.writeFileSync(path.join(dir, 'in.parquet'), await parquetBytes([
      { name: 'text', data: texts, type: 'STRING' }, { name: 'n', data: [1, 2, 3, 4], type: 'INT32' },
    ], { rowGroupSize: 2 }));
    const r = cli(dir, ['substrings', 'in.parquet', '--kept', 'kept.jsonl', '--spans', 'spans.jsonl', '--min-length', '50', '--progress', 'none']);
    assert.equal(r.code, 0, r.stderr);
    const kept = fs.readFileSync(path.join(dir, 'kept.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const want = brute(texts.map((t) => Buffer.from(t)), 50, false);
    // "e " + shared + " " repeats in "three": only "thr" and "y" stay; "four" keeps what precedes its copy
    assert.equal(kept.map((k) => [k.text, k.n]), [[texts[0], 1], ['two', 2], ['threy', 3], ['four', 4]]);
    assert.equal(kept.map((k) => k.text), keptByBrute(texts, want));
    const spans = fs.readFileSync(path.join(dir, 'spans.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(spans.map((x) => ({ doc: x.doc, start: x.start, end: x.end, firstDoc: x.first_doc, firstOffset: x.first_offset })), want);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('--index-out, then count: occurrences equal a naive count (overlapping, never across documents); a damaged index is refused', async () => {
  if (!available.ok) return;
  const dir = tmp();
  try {
    const r = rng(31);
    const texts = Array.from({ length: 8 }, () => randomText(r, 80));
    texts.push('abab', 'ba');  // "abab" + "ba" would hold "abba" across the boundary
    fs.writeFileSync(path.join(dir, 'in.jsonl'), texts.map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
    const res = cli(dir, ['substrings', 'in.jsonl', '--index-out', 'in.subx', '--progress', 'none']);
    assert.equal(res.code, 0, res.stderr);
    const queries = ['a', 'ab', 'abba', 'bab', 'é', '€a', '😀', 'cc', 'abcabc', 'zz', ...texts.slice(0, 4).map((t) => t.slice(2, 9)).filter((q) => q !== '')];
    const naive = (q: string) => texts.reduce((n, t) => { let c = 0; for (let i = t.indexOf(q); i >= 0; i = t.indexOf(q, i + 1)) c++; return n + c; }, 0);
    const got = await countSubstrings(path.join(dir, 'in.subx'), queries);
    assert.equal(got.counts, queries.map(naive));
    assert.equal(got.documents, texts.length);
    assert.ok(got.counts.some((c) => c > 5), 'repeats are counted');
    const c = cli(dir, ['substrings', 'count', '--index', 'in.subx', 'ab', 'abba']);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)), [{ string: 'ab', count: naive('ab') }, { string: 'abba', count: naive('abba') }]);
    // one flipped byte of the text: ERR_NEARDUP_CORRUPT naming the file (unless --no-verify)
    const b = fs.readFileSync(path.join(dir, 'in.subx'));
    b[70] ^= 1;
    fs.writeFileSync(path.join(dir, 'bad.subx'), b);
    const bad = cli(dir, ['substrings', 'count', '--index', 'bad.subx', 'ab']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /bad\.subx/);
    assert.match(bad.stderr, /CRC|checksum/i);
    assert.equal(cli(dir, ['substrings', 'count', '--index', 'bad.subx', 'ab', '--no-verify']).code, 0);
    assert.equal(cli(dir, ['substrings', 'count', 'ab']).code, 2);
    assert.equal(cli(dir, ['substrings', 'in.jsonl', '--index-out', 'x.subx', '--unit', 'token']).code, 2);
    assert.match(cli(dir, ['substrings', 'in.jsonl', '--index-out', 'in.jsonl']).stderr, /refusing to overwrite an input/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
