// neardup decontaminate against a brute force written here: normalise (Unicode lower-casing, \p{P} deleted,
// whitespace split: the rules docs/decontaminate.md states) and n-grams in plain TypeScript, set intersection
// over token strings; random corpora with planted contamination (one n-gram, several, short rows inside
// documents, short documents inside rows, case/punctuation/Unicode variants). The API and the CLI (report,
// --kept, --drop-above, --approx), then bad input, exit codes, outputs left behind and the summary.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DecontaminationIndex, readDocuments, type Contamination } from '../lib/index';
import { parquetBytes } from './support/formats';
import { isPunct, isSpace, lowerCp } from './reference/text';
import { rng, int, pick } from './reference/random';
import { spawnSync } from 'node:child_process';
import { cli } from './cli-helper';
import { TSX_FLAGS } from './support/tsx';

// ---------------------------------------------------------------------------------------------------------
// The brute force

function tokens(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let open = false;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (isSpace(c)) {
      if (open) out.push(cur);
      cur = '';
      open = false;
      continue;
    }
    if (isPunct(c)) continue;  // deleted, does not split a word
    for (const l of lowerCp(c)) cur += String.fromCodePoint(l);
    open = true;
  }
  if (open) out.push(cur);
  return out;
}

interface Truth {
  tokens: number; ngrams: number; matched: number; shortFound: number; covered: number; rows: number[]; spans: Set<string>;
}

/** bench: texts with their rows. Returns per document its truth (contaminated: matched + shortFound > 0). */
function bruteForce(bench: { text: string; row: number }[], docs: string[], n: number, m: number): Truth[] {
  // every L-gram (m <= L <= n) of every benchmark text -> rows; short rows (m <= k < n) by their text
  const grams = new Map<string, Set<number>>();
  const shortRows = new Map<string, Set<number>>();
  const shortLengths = new Set<number>();
  for (const b of bench) {
    const t = tokens(b.text);
    for (let len = m; len <= Math.min(n, t.length); len++) {
      for (let i = 0; i + len <= t.length; i++) {
        const g = t.slice(i, i + len).join(' ');
        if (!grams.has(g)) grams.set(g, new Set());
        grams.get(g)!.add(b.row);
      }
    }
    if (t.length >= m && t.length < n) {
      const g = t.join(' ');
      if (!shortRows.has(g)) shortRows.set(g, new Set());
      shortRows.get(g)!.add(b.row);
      shortLengths.add(t.length);
    }
  }
  return docs.map((d) => {
    const t = tokens(d);
    const truth: Truth = { tokens: t.length, ngrams: 0, matched: 0, shortFound: 0, covered: 0, rows: [], spans: new Set() };
    if (t.length < m) return truth;
    const cover = new Array<boolean>(t.length).fill(false);
    const rows = new Set<number>();
    const hit = (i: number, len: number, rs: Set<number>) => {
      for (let k = i; k < i + len; k++) cover[k] = true;
      for (const r of rs) rows.add(r);
      truth.spans.add(t.slice(i, i + len).join(' '));
    };
    if (t.length >= n) {
      truth.ngrams = t.length - n + 1;
      for (let i = 0; i + n <= t.length; i++) {
        const rs = grams.get(t.slice(i, i + n).join(' '));
        if (rs) { truth.matched++; hit(i, n, rs); }
      }
    } else {
      truth.ngrams = 1;
      const rs = grams.get(t.join(' '));
      if (rs) { truth.matched = 1; hit(0, t.length, rs); }
    }
    for (const len of shortLengths) {
      if (len > t.length || (t.length < n && len === t.length)) continue;
      for (let i = 0; i + len <= t.length; i++) {
        const rs = shortRows.get(t.slice(i, i + len).join(' '));
        if (rs) { truth.shortFound++; hit(i, len, rs); }
      }
    }
    truth.covered = cover.filter(Boolean).length;
    truth.rows = [...rows].sort((a, b) => a - b);
    return truth;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Random corpora with planted contamination

const VOCAB = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`).concat([
  'straße', 'École', 'naïve', 'Ωmega', '日本語', 'ĳssel', 'ΣΟΦΙΑ', 'İstanbul', 'café', 'Œuvre', 'x_y', '42', 'ǅemal',
]);
const PUNCT = [',', '.', '!', '?', ';', ':', '“', '”', '’', '—', '…', '(', ')', '«', '»', '¿', '-'];

/** A variant of a word that (mostly) normalises to the same token: case changed, punctuation glued on. */
function variant(r: () => number, w: string): string {
  let v = w;
  const x = r();
  if (x < 0.2) v = v.toUpperCase();  // (ß -> SS does not come back: the brute force knows)
  else if (x < 0.3) v = v.charAt(0).toUpperCase() + v.slice(1);
  if (r() < 0.25) v = v + pick(r, PUNCT);
  if (r() < 0.1) v = pick(r, PUNCT) + v;
  if (r() < 0.05 && v.length > 2) v = v.slice(0, 1) + '’' + v.slice(1);  // an apostrophe inside: deleted
  return v;
}

const SPACES = [' ', ' ', ' ', '  ', '\t', '\n', '\u00a0', '\u3000', '\u2003'];
const words = (r: () => number, k: number) => Array.from({ length: k }, () => pick(r, VOCAB));
const join = (r: () => number, ws: string[]) => ws.map((w) => variant(r, w)).reduce((s, w, i) => (i ? s + pick(r, SPACES) + w : w), '');

interface Case { rows: { q: string; a: string }[]; docs: string[] }

function makeCase(seed: number, n: number, m: number): Case {
  const r = rng(seed);
  const rows: { q: string; a: string }[] = [];
  const rowWords: string[][] = [];
  for (let i = 0; i < 40; i++) {
    const k = i % 5 === 0 ? int(r, m, n - 1) : i % 7 === 0 ? int(r, 1, m - 1) : int(r, n, 40);  // short rows, too-short rows, long rows
    const ws = words(r, k);
    rowWords.push(ws);
    rows.push({ q: ws.join(' '), a: words(r, int(r, 1, 6)).join(' ') });
  }
  const docs: string[] = [];
  for (let d = 0; d < 120; d++) {
    const kind = d % 8;
    const pre = words(r, int(r, 0, 20)), post = words(r, int(r, 0, 20));
    const src = rowWords[int(r, 0, rowWords.length - 1)];
    let mid: string[] = [];
    if (kind === 0 && src.length >= n) {  // exactly one n-gram
      const at = int(r, 0, src.length - n);
      mid = src.slice(at, at + n);
    } else if (kind === 1 && src.length >= n) {  // several n-grams
      const len = int(r, n, src.length);
      const at = int(r, 0, src.length - len);
      mid = src.slice(at, at + len);
    } else if (kind === 2) {  // a short row inside (or a long row's n-grams)
      mid = src;
    } else if (kind === 3) {  // a short document: a piece of a row, alone
      const len = Math.min(src.length, int(r, m, n - 1));
      const at = int(r, 0, src.length - len);
      docs.push(join(r, src.slice(at, at + len)));
      continue;
    } else if (kind === 4) {  // a short document of random words
      docs.push(join(r, words(r, int(r, 0, n - 1))));
      continue;
    } else if (kind === 5) {  // n-1 tokens of a row: no n-gram
      const len = Math.min(src.length, n - 1);
      mid = src.slice(0, len);
    }
    docs.push(join(r, [...pre, ...mid, ...post]));
  }
  docs.push('', '   ', '!!! ... ,,,');
  return { rows, docs };
}

function compare(got: Contamination[], truth: Truth[], what: string, rowsKnown = true): void {
  const byIndex = new Map(got.map((c) => [c.index, c]));
  truth.forEach((t, i) => {
    const c = byIndex.get(i);
    const dirty = t.matched + t.shortFound > 0;
    if (!dirty) {
      assert.is(c, undefined, `${what}: document ${i} reported but clean`);
      return;
    }
    assert.ok(c, `${what}: document ${i} is contaminated (${[...t.spans][0]}) but not reported`);
    assert.equal([c!.tokens, c!.ngrams, c!.matched, c!.shortFound, c!.covered], [t.tokens, t.ngrams, t.matched, t.shortFound, t.covered], `${what}: document ${i}`);
    assert.ok(Math.abs(c!.overlap - t.covered / t.tokens) < 1e-12);
    if (rowsKnown) {
      assert.equal(c!.rows, t.rows, `${what}: document ${i} rows`);
      assert.is(c!.rowsTotal, t.rows.length);
    }
    for (const s of c!.samples) assert.ok(t.spans.has(s), `${what}: document ${i}: sample '${s}' is not a matched span`);
    assert.ok(c!.samples.length === Math.min(3, t.spans.size), `${what}: document ${i}: ${c!.samples.length} samples`);
  });
}

async function apiRun(cs: Case, n: number, m: number, approx = false, fields: 'each' | 'joined' = 'each') {
  const index = new DecontaminationIndex({ n, minTokens: m, approx });
  try {
    const texts: string[] = [], rows: number[] = [];
    cs.rows.forEach((row, i) => {
      if (fields === 'joined') { texts.push(`${row.q}\n${row.a}`); rows.push(i); }
      else { texts.push(row.q, row.a); rows.push(i, i); }
    });
    await index.add(texts, rows);
    await index.seal();
    return await index.check(cs.docs, { maxRows: 1000 });
  } finally {
    index.close();
  }
}

const benchOf = (cs: Case, fields: 'each' | 'joined') => cs.rows.flatMap((row, i) => (fields === 'joined' ? [{ text: `${row.q}\n${row.a}`, row: i }] : [{ text: row.q, row: i }, { text: row.a, row: i }]));

for (const [n, m] of [[13, 8], [5, 3], [4, 4]] as const) {
  test(`API agrees with the brute force (n=${n}, min tokens ${m}), each field and joined`, async () => {
    let dirty = 0, shortFound = 0, shortDocs = 0;
    for (let seed = 1; seed <= 4; seed++) {
      const cs = makeCase(seed * 10 + n, n, m);
      for (const fields of ['each', 'joined'] as const) {
        const truth = bruteForce(benchOf(cs, fields), cs.docs, n, m);
        compare(await apiRun(cs, n, m, false, fields), truth, `seed ${seed} ${fields}`);
        dirty += truth.filter((t) => t.matched > 0).length;
        shortFound += truth.filter((t) => t.shortFound > 0).length;
        shortDocs += truth.filter((t) => t.matched > 0 && t.tokens < n).length;
      }
    }
    // the cases exercise every rule
    assert.ok(dirty > 50, `${dirty} documents with matched n-grams`);
    if (m < n) {
      assert.ok(shortFound > 5, `${shortFound} documents with short rows`);
      assert.ok(shortDocs > 5, `${shortDocs} short documents found`);
    }
  });
}

test('approx index: every true match is found (no false negatives), no rows', async () => {
  for (let seed = 1; seed <= 3; seed++) {
    const cs = makeCase(seed, 13, 8);
    const truth = bruteForce(benchOf(cs, 'each'), cs.docs, 13, 8);
    const got = new Map((await apiRun(cs, 13, 8, true)).map((c) => [c.index, c]));
    truth.forEach((t, i) => {
      if (t.matched + t.shortFound === 0) return;
      const c = got.get(i);
      assert.ok(c, `document ${i} missed by the approximate index`);
      assert.ok(c!.matched >= t.matched && c!.shortFound >= t.shortFound && c!.covered >= t.covered);
      assert.equal(c!.rows, []);
    });
  }
});

test('normalisation: case, Unicode punctuation and spaces match; NFKC forms and split words do not', async () => {
  const index = new DecontaminationIndex({ n: 3, minTokens: 3 });
  await index.add(['Straße ÉCOLE naïve “quoted” don’t'], [0]);
  await index.seal();
  const got = await index.check([
    'STRAßE\u3000école, NAÏVE!',   // 0: case and punctuation, ideographic space
    '«quoted» dont',               // 1: two tokens only: under minTokens... 3 tokens? no: 2
    'naive quoted dont',           // 2: ï is not folded to i
    'ｓｔｒａßｅ école naïve',      // 3: full-width letters are not folded (no NFKC)
    'naïve quoted don t',          // 4: "don’t" is one word "dont", not "don t"
    'x naïve "quoted" DON\'T y',   // 5: matches "naïve quoted dont"
  ]);
  assert.equal(got.map((c) => c.index), [0, 5]);
  assert.equal(got[0].samples, ['straße école naïve']);
  assert.equal(got[1].samples, ['naïve quoted dont']);
  index.close();
});

async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.match((e as Error).message, re);
    return;
  }
  assert.unreachable(`resolved, expected ${re}`);
}

test('API misuse: probe before seal, add after seal, closed index, bad options', async () => {
  const index = new DecontaminationIndex({ n: 3, minTokens: 2 });
  await rejects(index.probe(['a b c']), /not sealed/);
  await index.seal();
  await rejects(index.add(['a b c'], [0]), /sealed/);
  index.close();
  await rejects(index.probe(['a b c']), /closed/);
  assert.throws(() => new DecontaminationIndex({ n: 3, minTokens: 4 }), RangeError);
  assert.throws(() => new DecontaminationIndex({ approx: true, fpRate: 2 }), RangeError);
});

// ---------------------------------------------------------------------------------------------------------
// The command line

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-decon-'));
const summaryOf = (stderr: string) => JSON.parse(stderr.trim().split('\n').filter((l) => !l.includes('"progress"')).at(-1)!) as Record<string, unknown>;

test('CLI: report and --kept agree with the brute force; --drop-above; ids; plain-text benchmark', () => {
  const dir = tmp();
  const cs = makeCase(77, 13, 8);
  fs.writeFileSync(path.join(dir, 'bench.jsonl'), cs.rows.map((r) => JSON.stringify({ question: r.q, answer: r.a })).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'bench.txt'), cs.rows.map((r) => r.q).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'corpus.jsonl'), cs.docs.map((t, i) => JSON.stringify({ id: `d${i}`, text: t })).join('\n') + '\n');
  const corpusBefore = fs.readFileSync(path.join(dir, 'corpus.jsonl'));
  const truth = bruteForce(benchOf(cs, 'each'), cs.docs, 13, 8);
  const r = cli(dir, ['decontaminate', '--against', 'bench.jsonl', '--bench-field', 'question', '--bench-field', 'answer',
    '--report', 'report.jsonl', '--kept', 'kept.jsonl', '--id-field', 'id', '--max-rows', '1000', 'corpus.jsonl']);
  assert.is(r.code, 0, r.stderr);
  const report = fs.readFileSync(path.join(dir, 'report.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const got: Contamination[] = report.map((o) => {
    assert.is(o.file, 'corpus.jsonl');
    assert.is(o.id, `d${o.line}`);
    assert.ok(o.rows.every((x: { file: string }) => x.file === 'bench.jsonl'));
    return { index: o.line, tokens: o.tokens, ngrams: o.ngrams, matched: o.matched, shortFound: o.short_rows, covered: o.covered,
      overlap: o.overlap, rows: o.rows.map((x: { row: number }) => x.row), rowsTotal: o.rows_total, samples: o.samples };
  });
  // overlap is rounded to 6 digits in the report
  got.forEach((c) => { c.overlap = c.covered / c.tokens; });
  compare(got, truth, 'CLI');
  const dirty = new Set(got.map((c) => c.index));
  assert.ok(dirty.size > 10);
  const keptLines = fs.readFileSync(path.join(dir, 'kept.jsonl'), 'utf8');
  assert.is(keptLines, cs.docs.map((t, i) => (dirty.has(i) ? '' : JSON.stringify({ id: `d${i}`, text: t }) + '\n')).join(''));
  const s = summaryOf(r.stderr);
  assert.is(s.command, 'decontaminate');
  assert.is(s.documents, cs.docs.length);
  assert.is(s.contaminated, dirty.size);
  assert.is(s.dropped, dirty.size);
  assert.is(s.kept, cs.docs.length - dirty.size);
  assert.is(s.benchmark_rows, cs.rows.length);
  assert.is(s.mode, 'exact');
  assert.ok(corpusBefore.equals(fs.readFileSync(path.join(dir, 'corpus.jsonl'))));

  // --drop-above 0.5 on a plain-text benchmark (the questions only); the report to stdout
  const truth2 = bruteForce(cs.rows.map((row, i) => ({ text: row.q, row: i })), cs.docs, 13, 8);
  const r2 = cli(dir, ['decontaminate', '--against', 'bench.txt', '--report', '-', '--kept', 'kept2.jsonl.gz', '--drop-above', '0.5', 'corpus.jsonl']);
  assert.is(r2.code, 0, r2.stderr);
  const rep2 = r2.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(rep2.map((o) => o.line), truth2.flatMap((t, i) => (t.matched + t.shortFound > 0 ? [i] : [])));
  const drop = new Set(truth2.flatMap((t, i) => (t.matched + t.shortFound > 0 && t.covered / t.tokens > 0.5 ? [i] : [])));
  assert.ok(drop.size > 0 && drop.size < rep2.length, `${drop.size} of ${rep2.length} dropped`);
  rep2.forEach((o) => assert.is(o.dropped, drop.has(o.line)));
  assert.ok(rep2.every((o) => o.rows.every((x: { file: string }) => x.file === 'bench.txt')));
  const kept2 = require('node:zlib').gunzipSync(fs.readFileSync(path.join(dir, 'kept2.jsonl.gz'))).toString();
  assert.is(kept2, cs.docs.map((t, i) => (drop.has(i) ? '' : JSON.stringify({ id: `d${i}`, text: t }) + '\n')).join(''));

  // --approx: every document the exact run reported, and no rows
  const r3 = cli(dir, ['decontaminate', '--against', 'bench.jsonl', '--bench-field', 'question', '--bench-field', 'answer', '--approx', '--report', '-', 'corpus.jsonl']);
  assert.is(r3.code, 0, r3.stderr);
  const rep3 = r3.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
  const lines3 = new Set(rep3.map((o) => o.line));
  for (const d of dirty) assert.ok(lines3.has(d), `--approx missed line ${d}`);
  assert.ok(rep3.every((o) => o.rows === undefined));
  const s3 = summaryOf(r3.stderr);
  assert.is(s3.mode, 'approx');
  assert.ok(typeof s3.fp_bound === 'number' && (s3.fp_bound as number) > 0 && (s3.fp_bound as number) <= 1e-8 * (1 + 1e-9));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('CLI: a Parquet benchmark (--bench-join) and a Parquet corpus, --kept as Parquet', async () => {
  const dir = tmp();
  const cs = makeCase(91, 13, 8);
  fs.writeFileSync(path.join(dir, 'bench.parquet'), await parquetBytes([
    { name: 'question', data: cs.rows.map((r) => r.q), type: 'STRING' }, { name: 'answer', data: cs.rows.map((r) => r.a), type: 'STRING' }], { rowGroupSize: 7 }));
  fs.writeFileSync(path.join(dir, 'corpus.parquet'), await parquetBytes([
    { name: 'id', data: cs.docs.map((_, i) => BigInt(i)), type: 'INT64' }, { name: 'text', data: cs.docs, type: 'STRING' }], { rowGroupSize: 50 }));
  const truth = bruteForce(benchOf(cs, 'joined'), cs.docs, 13, 8);
  const r = cli(dir, ['decontaminate', '--against', 'bench.parquet', '--bench-field', 'question', '--bench-field', 'answer', '--bench-join',
    '--report', 'report.jsonl', '--kept', 'kept.parquet', '--id-field', 'id', '--max-rows', '1000', 'corpus.parquet']);
  assert.is(r.code, 0, r.stderr);
  const report = fs.readFileSync(path.join(dir, 'report.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  compare(report.map((o) => {
    assert.is(o.id, o.line);
    return { index: o.line, tokens: o.tokens, ngrams: o.ngrams, matched: o.matched, shortFound: o.short_rows, covered: o.covered,
      overlap: o.covered / o.tokens, rows: o.rows.map((x: { file: string; row: number }) => (assert.is(x.file, 'bench.parquet'), x.row)), rowsTotal: o.rows_total, samples: o.samples };
  }), truth, 'Parquet');
  const dirty = new Set(report.map((o) => o.line as number));
  assert.ok(dirty.size > 10);
  const kept: string[] = [];
  for await (const b of readDocuments([path.join(dir, 'kept.parquet')])) {
    const buf = Buffer.from(b.packed.data.buffer, b.packed.data.byteOffset, b.packed.data.length);
    for (let i = 0; i < b.count; i++) kept.push(buf.toString('utf8', b.packed.offsets[i], b.packed.offsets[i + 1]));
  }
  assert.equal(kept, cs.docs.filter((_, i) => !dirty.has(i)));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('CLI: --shard i/N: the shards\' reports and kept files together are the unsharded run\'s', () => {
  const dir = tmp();
  const cs = makeCase(55, 13, 8);
  fs.writeFileSync(path.join(dir, 'bench.jsonl'), cs.rows.map((r) => JSON.stringify({ text: r.q })).join('\n') + '\n');
  const names = ['c0.jsonl', 'c1.jsonl', 'c2.jsonl'];
  names.forEach((f, k) => fs.writeFileSync(path.join(dir, f), cs.docs.filter((_, i) => i % 3 === k).map((t) => JSON.stringify({ text: t })).join('\n') + '\n'));
  const run = (extra: string[], out: string) => {
    const r = cli(dir, ['decontaminate', '--against', 'bench.jsonl', '--report', `${out}.report`, '--kept', `${out}.kept`, ...extra, ...names]);
    assert.is(r.code, 0, r.stderr);
    return summaryOf(r.stderr);
  };
  run([], 'all');
  const s0 = run(['--shard', '0/2'], 's0'), s1 = run(['--shard', '1/2'], 's1');
  assert.equal([s0.inputs, s1.inputs, s0.shard], [['c0.jsonl', 'c2.jsonl'], ['c1.jsonl'], '0/2']);
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  const lines = (f: string) => read(f).split('\n').filter(Boolean);
  const byFile = (ls: string[]) => [...ls].sort((a, b) => names.indexOf(JSON.parse(a).file) - names.indexOf(JSON.parse(b).file) || JSON.parse(a).line - JSON.parse(b).line);
  const all = lines('all.report');
  assert.ok(all.length > 5);
  assert.equal(byFile([...lines('s0.report'), ...lines('s1.report')]), all);
  // kept: shard 0 holds c0's then c2's kept lines, shard 1 c1's
  const keptOf = (files: string[]) => files.map((f) => {
    const dirty = new Set(all.map((l) => JSON.parse(l)).filter((o) => o.file === f).map((o) => o.line as number));
    return lines(f).filter((_, i) => !dirty.has(i)).map((l) => l + '\n').join('');
  }).join('');
  assert.is(read('all.kept'), keptOf(names));
  assert.is(read('s0.kept'), keptOf(['c0.jsonl', 'c2.jsonl']));
  assert.is(read('s1.kept'), keptOf(['c1.jsonl']));
  const r = cli(dir, ['decontaminate', '--against', 'bench.jsonl', '--report', 'x', '--shard', '2/2', ...names]);
  assert.is(r.code, 2);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('CLI: bad input names file and line, exit codes, nothing left behind, inputs never overwritten', () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'bench.jsonl'), '{"text":"one two three four five six seven eight nine ten eleven twelve thirteen"}\n{"text":"x"}\n');
  fs.writeFileSync(path.join(dir, 'corpus.jsonl'), '{"text":"one two three four five six seven eight nine ten eleven twelve thirteen"}\n{"text": oops}\n');
  const listing = () => fs.readdirSync(dir).sort();
  const before = listing();
  const run = (...a: string[]) => cli(dir, ['decontaminate', ...a]);

  let r = run('--report', 'out.jsonl', 'corpus.jsonl');
  assert.is(r.code, 2, 'missing --against is a usage error');
  assert.match(r.stderr, /--against/);
  r = run('--against', 'bench.jsonl', 'corpus.jsonl');
  assert.is(r.code, 2);
  assert.match(r.stderr, /--report/);
  r = run('--against', 'bench.jsonl', '--report', 'out.jsonl', '--ngram', '0', 'corpus.jsonl');
  assert.is(r.code, 2);
  r = run('--against', 'bench.jsonl', '--report', 'out.jsonl', '--kept', 'k.jsonl', '-');
  assert.is(r.code, 2);
  // malformed corpus line: file and line named, no report written
  r = run('--against', 'bench.jsonl', '--report', 'out.jsonl', '--kept', 'kept.jsonl', 'corpus.jsonl');
  assert.is(r.code, 1);
  assert.match(r.stderr, /corpus\.jsonl:2/);
  assert.equal(listing(), before, 'no output or temporary file left');
  // a missing benchmark field, invalid UTF-8 in a plain-text benchmark, a missing benchmark file
  fs.writeFileSync(path.join(dir, 'bench2.jsonl'), '{"text":"a b c"}\n{"question":"a b c"}\n');
  fs.writeFileSync(path.join(dir, 'bench3.txt'), Buffer.concat([Buffer.from('good line\nbad '), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]));
  fs.writeFileSync(path.join(dir, 'clean.jsonl'), '{"text":"nothing"}\n');
  const before2 = listing();
  r = run('--against', 'bench2.jsonl', '--report', 'out.jsonl', 'clean.jsonl');
  assert.is(r.code, 1);
  assert.match(r.stderr, /bench2\.jsonl:2/);
  r = run('--against', 'bench3.txt', '--report', 'out.jsonl', 'clean.jsonl');
  assert.is(r.code, 1);
  assert.match(r.stderr, /bench3\.txt:2: invalid UTF-8/);
  r = run('--against', 'nope.jsonl', '--report', 'out.jsonl', 'clean.jsonl');
  assert.is(r.code, 1);
  assert.match(r.stderr, /nope\.jsonl/);
  // the report or --kept onto an input: refused before any work
  const corpus = fs.readFileSync(path.join(dir, 'clean.jsonl'));
  r = run('--against', 'bench.jsonl', '--report', 'clean.jsonl', 'clean.jsonl');
  assert.ok(r.code !== 0);
  assert.match(r.stderr, /overwrite an input/);
  r = run('--against', 'bench.jsonl', '--report', 'out.jsonl', '--kept', 'bench.jsonl', 'clean.jsonl');
  assert.ok(r.code !== 0);
  assert.ok(corpus.equals(fs.readFileSync(path.join(dir, 'clean.jsonl'))));
  assert.equal(listing(), before2, 'no output or temporary file left');
  // --on-bad-line skip: the bad line is neither reported nor kept; the summary counts it
  r = run('--against', 'bench.jsonl', '--report', 'out.jsonl', '--kept', 'kept.jsonl', '--on-bad-line', 'skip', 'corpus.jsonl');
  assert.is(r.code, 0, r.stderr);
  assert.is(fs.readFileSync(path.join(dir, 'out.jsonl'), 'utf8').trim().split('\n').length, 1);
  assert.is(fs.readFileSync(path.join(dir, 'kept.jsonl'), 'utf8'), '');
  const s = summaryOf(r.stderr);
  assert.equal([s.documents, s.contaminated, s.bad_lines, s.kept], [2, 1, 1, 0]);
  for (const k of ['version', 'inputs', 'seconds', 'cpu_seconds', 'peak_rss_mb', 'index_keys', 'mb_per_s']) assert.ok(k in s, k);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('CLI: interrupted before the report is committed: exit 130 / 143, no report, no temporary file', () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'bench.jsonl'), '{"text":"one two three four five six seven eight nine ten eleven twelve thirteen"}\n');
  fs.writeFileSync(path.join(dir, 'corpus.jsonl'), '{"text":"one two three four five six seven eight nine ten eleven twelve thirteen"}\n');
  const before = fs.readdirSync(dir).sort();
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    const r = spawnSync(process.execPath, [...TSX_FLAGS, path.join(__dirname, '..', 'lib', 'cli', 'main.ts'), 'decontaminate', '--against', 'bench.jsonl', '--report', 'out.jsonl', 'corpus.jsonl'],
      { cwd: dir, env: { ...process.env, NEARDUP_TEST_KILL_AT: `decontaminate-report:${signal}` } });
    assert.is(r.status, code, r.stderr.toString());
    assert.equal(fs.readdirSync(dir).sort(), before, `${signal}: nothing left`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test.run();
