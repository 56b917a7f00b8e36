// neardup code (lib/code/code.ts, lib/cli/commands/code.ts) on a small corpus: a copy with renamed variables,
// comments and layout changed, and a copy with its functions reordered, are found; an unrelated file is not;
// --base removes the base code's matches; --submissions pairs folders; and every reported region's line
// ranges equal a brute-force list of the shared runs of >= min-tokens normalised tokens (all offset pairs
// compared here, from codeTokens' values), both ways round: no run missed, none made up.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cli } from './cli-helper';
import { CodeIndex, codeTokens, findCopiedCode, languageOf, winnowParameters, type CodeLanguage } from '../lib/index';

let dir = '';
test.before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-code-')); });
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  fs.writeFileSync(path.join(dir, name), text);
};

const F1 = `function parseRecords(input, separator) {
  // split the input into records
  const records = [];
  for (const line of input.split('\\n')) {
    if (line.trim() === '') continue;
    const fields = line.split(separator).map((f) => f.trim());
    records.push({ key: fields[0], value: Number(fields[1]) || 0, rest: fields.slice(2) });
  }
  return records;
}
`;
const F2 = `function summarize(records) {
  let total = 0, count = 0, largest = -Infinity;
  for (const r of records) {
    total += r.value;
    count += 1;
    if (r.value > largest) largest = r.value;
  }
  return { total, count, mean: count ? total / count : 0, largest };
}
`;
const F3 = `function groupByKey(records) {
  const groups = new Map();
  for (const r of records) {
    const list = groups.get(r.key) ?? [];
    list.push(r);
    groups.set(r.key, list);
  }
  return [...groups.entries()].sort((a, b) => b[1].length - a[1].length);
}
`;
const F4 = 'function formatReport(summary, groups) {\n' +
  "  const lines = [`total: ${summary.total}`, `mean: ${summary.mean.toFixed(2)}`];\n" +
  "  for (const [key, list] of groups) lines.push(key + ': ' + list.length + ' records');\n" +
  "  return lines.join('\\n');\n" +
  '}\n';
const ORIGINAL = F1 + '\n' + F2 + '\n' + F3 + '\n' + F4;
// renamed identifiers, other comments, other layout: the same normalised tokens
const RENAMED = (F1 + F2 + F3 + F4)
  .replace(/records/g, 'rows').replace(/fields/g, 'cols').replace(/total/g, 'sum').replace(/groups/g, 'buckets')
  .replace(/\/\/ split the input into records/, '/* a different comment,\n   over two lines */')
  .replace(/\{\n  /g, '{\n\n    ');
const REORDERED = F3 + '\n' + F1 + '\n' + F4 + '\n' + F2;
const UNRELATED = `class Stack {
  constructor() { this.items = []; }
  push(x) { this.items.push(x); return this; }
  pop() { if (this.items.length === 0) throw new Error('empty'); return this.items.pop(); }
  peek() { return this.items[this.items.length - 1]; }
  get size() { return this.items.length; }
}
module.exports = { Stack };
`;

/** The brute force: maximal runs of >= len equal values (i in a, j in b, length), then runs touching in both merged. */
function bruteRegions(a: number[], b: number[], len: number): [number, number, number][] {
  const mems: [number, number, number][] = [];
  for (let i = 0; i < a.length; i++)
    for (let j = 0; j < b.length; j++) {
      if (a[i] !== b[j] || (i > 0 && j > 0 && a[i - 1] === b[j - 1])) continue;
      let l = 0;
      while (i + l < a.length && j + l < b.length && a[i + l] === b[j + l]) l++;
      if (l >= len) mems.push([i, j, l]);
    }
  const open: [number, number, number][] = [];
  for (const m of mems) {
    const r = open.find((o) => o[0] + o[2] === m[0] && o[1] + o[2] === m[1]);
    if (r) r[2] += m[2];
    else open.push([...m]);
  }
  return open;
}

function runCli(args: string[]): { pairs: Record<string, any>[]; summary: Record<string, any> } {
  const r = cli(dir, ['code', ...args]);
  assert.is(r.code, 0, r.stderr);
  const pairs = r.stdout.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const summary = JSON.parse(r.stderr.trim().split('\n').pop()!);
  return { pairs, summary };
}

test('renamed and reordered copies are found, an unrelated file is not; regions equal the brute force', () => {
  write('c/original.js', ORIGINAL);
  write('c/renamed.js', RENAMED);
  write('c/reordered.js', REORDERED);
  write('c/unrelated.js', UNRELATED);
  write('c/notes.txt', 'not code');
  const { pairs, summary } = runCli(['c', '--merge-gap', '0', '--max-files', '0']);
  assert.is(summary.files, 4);
  assert.is(summary.min_tokens, 39);
  assert.is(summary.k, 23);
  assert.is(summary.w, 17);
  const key = (p: Record<string, any>) => [path.basename(p.a), path.basename(p.b)].sort().join(' ');
  const byKey = new Map(pairs.map((p) => [key(p), p]));
  const renamed = byKey.get('original.js renamed.js');
  const reordered = byKey.get('original.js reordered.js');
  assert.ok(renamed, JSON.stringify(pairs));
  assert.ok(reordered, JSON.stringify(pairs));
  assert.ok(renamed.shared_a > 0.95 && renamed.shared_b > 0.95, JSON.stringify(renamed));
  assert.ok(reordered.shared_a > 0.75 && reordered.shared_b > 0.75, JSON.stringify(reordered));
  assert.ok(reordered.regions.length >= 3, 'each moved function is a region of its own');
  for (const p of pairs) assert.not.ok(key(p).includes('unrelated'), JSON.stringify(p));
  // largest shared first
  for (let i = 1; i < pairs.length; i++)
    assert.ok(Math.max(pairs[i - 1].shared_a, pairs[i - 1].shared_b) >= Math.max(pairs[i].shared_a, pairs[i].shared_b));
  // every pair of files: the regions reported equal the brute force's (none reported where it finds none)
  const names = ['original.js', 'renamed.js', 'reordered.js', 'unrelated.js'];
  for (let x = 0; x < names.length; x++)
    for (let y = x + 1; y < names.length; y++) {
      const ta = codeTokens(fs.readFileSync(path.join(dir, 'c', names[x])), 'javascript');
      const tb = codeTokens(fs.readFileSync(path.join(dir, 'c', names[y])), 'javascript');
      const want = bruteRegions(ta.map((t) => t.value), tb.map((t) => t.value), 39)
        .map(([i, j, l]) => JSON.stringify({ a: [ta[i].line, ta[i + l - 1].line], b: [tb[j].line, tb[j + l - 1].line], tokens: l }))
        .sort();
      const p = byKey.get(`${names[x]} ${names[y]}`);
      // the output names a and b in group order: swap the sides back when needed
      const swapped = p !== undefined && path.basename(p.a) !== names[x];
      const got = (p?.regions ?? []).map((r: any) => JSON.stringify(swapped ? { a: r.b, b: r.a, tokens: r.tokens } : r)).sort();
      if (!swapped) assert.equal(got, want, `${names[x]} ${names[y]}`);
      else assert.equal(got.map((g: string) => JSON.parse(g).tokens).sort(), want.map((g) => JSON.parse(g).tokens).sort(), `${names[x]} ${names[y]}`);
    }
});

test('--base removes the base code; --submissions pairs folders', () => {
  const base = F2 + '\n' + F3;
  write('b/template/starter.js', base);
  write('b/s1/main.js', base + '\n' + F1);
  write('b/s2/main.js', base + '\n' + UNRELATED);
  write('b/s3/main.js', F1 + '\n' + base);
  write('b/s3/util.js', F4);
  const without = runCli(['b/s1', 'b/s2', 'b/s3', '--merge-gap', '0']);
  const names = (ps: Record<string, any>[]) => ps.map((p) => [p.a, p.b].sort().join(' ')).sort();
  assert.equal(names(without.pairs), ['b/s1/main.js b/s2/main.js', 'b/s1/main.js b/s3/main.js', 'b/s2/main.js b/s3/main.js']);
  const withBase = runCli(['b/s1', 'b/s2', 'b/s3', '--base', 'b/template', '--merge-gap', '0']);
  assert.is(withBase.summary.base_files, 1);
  assert.ok(withBase.summary.base_fingerprints > 0);
  assert.equal(names(withBase.pairs), ['b/s1/main.js b/s3/main.js']);
  // the region is F1 alone: s1's lines after the base code, s3's first lines
  const p = withBase.pairs[0];
  const f1Lines = F1.split('\n').length - 1, baseLines = base.split('\n').length;
  const r = p.a === 'b/s1/main.js' ? p.regions[0] : { a: p.regions[0].b, b: p.regions[0].a };
  assert.equal(r.a, [baseLines + 1, baseLines + f1Lines]);
  assert.equal(r.b, [1, f1Lines]);
  // submissions: s1..s3 as folders of b (template too, as one more submission)
  const subs = runCli(['b', '--submissions', '--base', 'b/template']);
  assert.is(subs.summary.submissions, 4);
  assert.equal(subs.pairs.map((q) => [q.a, q.b].sort().join(' ')), ['b/s1 b/s3']);
  assert.is(subs.pairs[0].regions[0].file_a !== undefined, true);
});

test('API: findCopiedCode, CodeIndex options and states, languages', async () => {
  const r = await findCopiedCode([{ text: ORIGINAL, lang: 'javascript' }, { text: RENAMED, lang: 'javascript' }, { text: UNRELATED, lang: 'javascript' }]);
  assert.is(r.pairs.length, 1);
  assert.equal([r.pairs[0].a, r.pairs[0].b], [0, 1]);
  // keepIdentifiers: the renamed copy is no longer one run
  const kept = await findCopiedCode([{ text: ORIGINAL, lang: 'javascript' }, { text: RENAMED, lang: 'javascript' }], { keepIdentifiers: true });
  assert.ok(kept.pairs.length === 0 || kept.pairs[0].sharedA < r.pairs[0].sharedA);
  // Python: triple-quoted strings and comments are not code; indentation does not matter
  const py = 'def f(items, n):\n    """doc with "quotes" and # no comment"""\n    out = []\n    for i in range(n):\n        if items[i] % 2 == 0:\n            out.append(items[i] * 3 + 1)\n        else:\n            out.append(-items[i])\n    return out\n';
  const py2 = '# copied\ndef g(xs, m):\n  \'\'\'other doc\'\'\'\n  res = []\n  for j in range(m):\n    if xs[j] % 2 == 0:\n      res.append(xs[j] * 3 + 1)\n    else:\n      res.append(-xs[j])\n  return res\n';
  const p = await findCopiedCode([{ text: py, lang: 'python' }, { text: py2, lang: 'python' }], { minTokens: 20 });
  assert.is(p.pairs.length, 1);
  assert.equal(p.pairs[0].regions[0].linesA, [1, 9]);
  assert.equal(p.pairs[0].regions[0].linesB, [2, 10]);
  const index = new CodeIndex();
  try {
    const states = await index.add([{ text: Buffer.from([0x61, 0, 0x62]), lang: 'c' }, { text: Buffer.from([0x61, 0xff]), lang: 'c' }, { text: 'int x;', lang: 'c' }]);
    assert.equal(states, ['binary', 'invalid-utf8', 'indexed']);
    assert.is(index.files, 1);
  } finally {
    index.close();
  }
  assert.throws(() => new CodeIndex({ minTokens: 0 }), /minTokens must be an integer/);
  assert.equal(winnowParameters(), { k: 23, w: 17, minTokens: 39 });
  assert.is(languageOf('a/b.TSX') as CodeLanguage, 'typescript');
  assert.is(languageOf('a.b/c'), undefined);
  assert.equal(codeTokens('x = 1 // c', 'c').map((t) => t.kind), ['identifier', 'operator', 'number']);
});

test.run();
