import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { ParagraphFilter, dedupVertical, type ParagraphFilterOptions } from '../lib/index';
import { refVertical, type RefOptions } from './reference/onion';
import { generate } from './support/gen-vertical';

const VEC = path.join(__dirname, 'fixtures', 'vectors', 'onion');
const CLI = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const sample = zlib.gunzipSync(fs.readFileSync(path.join(VEC, 'sample.vert.gz')));
const CASES: [string, ParagraphFilterOptions, string[]][] = [
  ['sample.onion.flags.gz', {}, []],
  ['sample.onion-m.flags.gz', { smoothing: false }, ['-m']],
  ['sample.onion-n5-t07.flags.gz', { n: 5, threshold: 0.7 }, ['-n', '5', '-t', '0.7']],
];
const expected = (f: string) => zlib.gunzipSync(fs.readFileSync(path.join(VEC, f))).toString('latin1');
const asString = (flags: ArrayLike<number>) => Array.from(flags, (x) => (x ? '1' : '0')).join('');

for (const [file, opts, argv] of CASES) {
  test(`vectors: ${file} via the API (exact)`, async () => {
    const flags = await dedupVertical(sample, { ...opts, keepUniqueShort: false });
    const want = expected(file);
    assert.is(flags.length, want.length);
    assert.ok(asString(flags) === want, 'flags differ');
  });
  test(`vectors: ${file} via the CLI (neardup onion ${argv.join(' ')})`, () => {
    const r = spawnSync(process.execPath, [CLI, 'onion', ...argv, path.join(VEC, 'sample.vert.gz')], { maxBuffer: 1 << 30 });
    assert.is(r.status, 0, r.stderr?.toString());
    const out = r.stdout;
    // every line: flag, TAB, the input line
    let flags = '';
    let at = 0;
    while (at < out.length) {
      flags += String.fromCharCode(out[at]);
      assert.is(out[at + 1], 9);
      const nl = out.indexOf(10, at);
      at = nl + 1;
    }
    assert.ok(flags === expected(file), 'flags differ');
    const body = Buffer.concat(out.toString('latin1').split('\n').filter(Boolean).map((l) => Buffer.from(l.slice(2) + '\n', 'latin1')));
    assert.ok(body.equals(sample), 'the lines after the flags are not the input');
  });
}

test('CLI -s prints exactly the kept lines', () => {
  const want = expected('sample.onion.flags.gz');
  const lines = sample.toString('latin1').split('\n');
  lines.pop();
  const kept = lines.filter((_, i) => want[i] === '0').join('\n') + '\n';
  const r = spawnSync(process.execPath, [CLI, 'onion', '-s', path.join(VEC, 'sample.vert.gz')], { maxBuffer: 1 << 30 });
  assert.is(r.status, 0);
  assert.ok(r.stdout.toString('latin1') === kept);
});

test('chunked pushes give the same flags as one push', async () => {
  const want = expected('sample.onion.flags.gz');
  const f = new ParagraphFilter({ keepUniqueShort: false });
  const parts: Uint8Array[] = [];
  let at = 0;
  let step = 1;
  while (at < sample.length) {
    let end = Math.min(sample.length, at + step);
    while (end < sample.length && sample[end - 1] !== 10) end++;
    parts.push((await f.pushVertical(sample.subarray(at, end), end === sample.length)).flags);
    at = end;
    step = step * 3 + 17;
  }
  f.close();
  assert.ok(asString(Buffer.concat(parts)) === want);
});

// ---- generated inputs against the reference

const VARIANTS: [string, RefOptions][] = [
  ['defaults (Onion)', { keepUniqueShort: false }],
  ['no smoothing', { smoothing: false, keepUniqueShort: false }],
  ['n=3 t=0.3', { n: 3, threshold: 0.3, keepUniqueShort: false }],
  ['n=2 t=0.2', { n: 2, threshold: 0.2, keepUniqueShort: false }],
  ['n=5 t=0.7 stub 5', { n: 5, threshold: 0.7, maxStub: 5, keepUniqueShort: false }],
  ['keep unique short, no within-doc', { keepUniqueShort: true, withinDocument: false }],
  ['t=1 (never by coverage)', { threshold: 1, keepUniqueShort: false }],
];

for (const [name, o] of VARIANTS) {
  test(`generated vertical text agrees with the reference: ${name}`, async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const lines = generate(seed, 120, seed === 2 ? 30000 : 0);
      const text = lines.join('\n') + (seed % 2 ? '\n' : '');
      const want = refVertical(lines, o);
      const got = await dedupVertical(text, o);
      assert.is(got.length, lines.length);
      const a = asString(got), b = want.join('');
      if (a !== b) {
        const i = [...a].findIndex((c, k) => c !== b[k]);
        assert.unreachable(`seed ${seed}: first difference at line ${i}: ${JSON.stringify(lines.slice(Math.max(0, i - 3), i + 3))}`);
      }
      assert.ok(want.some((x) => x === 1) && want.some((x) => x === 0), 'input has both kinds');
    }
  });
}

test('the reference itself reproduces the Onion vectors (so it is a valid oracle)', () => {
  const lines = sample.toString('latin1').split('\n');
  lines.pop();
  assert.ok(refVertical(lines, { keepUniqueShort: false }).join('') === expected('sample.onion.flags.gz'));
});

test('custom tag names', async () => {
  const lines = generate(9, 60).map((l) => l.replace(/^<(\/?)doc/, '<$1text').replace(/^<(\/?)p\b/, '<$1para'));
  const want = refVertical(lines, { keepUniqueShort: false }, { doc: 'text', par: 'para' });
  const got = await dedupVertical(lines.join('\n'), { keepUniqueShort: false, docTag: 'text', parTag: 'para' });
  assert.ok(asString(got) === want.join(''));
});

test('CLI: a 12 MB line and a document spread over several input pieces', () => {
  const lines = generate(7, 40);
  lines.splice(Math.floor(lines.length / 2), 0, 'y'.repeat(12 << 20));
  // One long document with no tags at all after the rest: it spans several 4 MiB pieces.
  for (let i = 0; i < 400000; i++) lines.push(`t${i % 5000}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-onion-'));
  const file = path.join(dir, 'long.vert');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const r = spawnSync(process.execPath, [CLI, 'onion', file], { maxBuffer: 1 << 30 });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.is(r.status, 0, r.stderr?.toString());
  const out = r.stdout.toString('latin1').split('\n');
  assert.is(out.pop(), '');
  assert.is(out.length, lines.length);
  const want = refVertical(lines, { keepUniqueShort: false });
  assert.ok(out.every((l, i) => l.length === lines[i].length + 2 && l[0] === String(want[i])), 'flags or lines differ');
  assert.ok(want.some((x) => x === 1), 'the long document has repeats');
});

test('a non-final chunk must end with a newline', async () => {
  const f = new ParagraphFilter();
  assert.throws(() => f.pushVertical('a\nb', false), RangeError);
  f.close();
});

test.run();
