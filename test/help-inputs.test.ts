// Help that matches the program: each command that reads documents is run on one small corpus in every
// input format (JSONL plain, gzip, zstd, Parquet), and the formats its --help names must be exactly those
// it reads. Also: every sub-command has a help page of its own (passages), and a missing sub-command is a
// usage error on stderr.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { parquetBytes } from './support/formats';

const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-help-'));
const run = (args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
const FORMATS = ['gzip', 'zstd', 'parquet'] as const;
const FILE: Record<typeof FORMATS[number], string> = { gzip: 'c.jsonl.gz', zstd: 'c.jsonl.zst', parquet: 'c.parquet' };

test.before(async () => {
  assert.ok(fs.existsSync(MAIN), `${MAIN} is missing: run npx tsc -p . first`);
  const texts = Array.from({ length: 12 }, (_, i) => `document ${i} has a few words of text, some shared, some ${i % 3 ? 'its own' : 'copied'} here`);
  const jsonl = texts.map((t, i) => JSON.stringify({ id: `d${i}`, text: t })).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'c.jsonl'), jsonl);
  fs.writeFileSync(path.join(dir, 'c.jsonl.gz'), zlib.gzipSync(jsonl));
  fs.writeFileSync(path.join(dir, 'c.jsonl.zst'), (zlib as unknown as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync?.(Buffer.from(jsonl))
    ?? spawnSync('zstd', ['-q', '-c'], { input: jsonl }).stdout);
  fs.writeFileSync(path.join(dir, 'c.parquet'), await parquetBytes([
    { name: 'id', data: texts.map((_, i) => `d${i}`), type: 'STRING' }, { name: 'text', data: texts, type: 'STRING' },
  ]));
  // an index for the commands that query one
  for (const [args] of [[['passages', 'index', '-o', 'pix', 'c.jsonl']], [['similar', 'build', 'c.jsonl', '--index', 'six', '--id-field', 'id']]]) {
    const r = run(args);
    assert.is(r.status, 0, r.stderr);
  }
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

let fresh = 0;
/** Each command: its help arguments, and its arguments for an input file. */
const COMMANDS: [string, string[], (f: string) => string[]][] = [
  ['dedup', ['dedup'], (f) => ['dedup', f, '--flags', `o${fresh++}`]],
  ['minhash', ['minhash'], (f) => ['minhash', f]],
  ['shingles', ['shingles'], (f) => ['shingles', f]],
  ['simhash fingerprint', ['simhash', 'fingerprint'], (f) => ['simhash', 'fingerprint', f]],
  ['paragraphs', ['paragraphs'], (f) => ['paragraphs', f]],
  ['passages index', ['passages', 'index'], (f) => ['passages', 'index', '-o', `p${fresh++}`, f]],
  ['passages query', ['passages', 'query'], (f) => ['passages', 'query', 'pix', f]],
  ['similar build', ['similar', 'build'], (f) => ['similar', 'build', f, '--index', `s${fresh++}`, '--id-field', 'id']],
  ['similar query', ['similar', 'query'], (f) => ['similar', 'query', f, '--index', 'six', '--id-field', 'id']],
  ['code', ['code'], (f) => ['code', f, '--lang', 'c']],
];

/** The formats a help page names: words, not file suffixes of outputs. */
function named(help: string): Set<string> {
  const s = new Set<string>();
  if (/\bgzip\b/i.test(help)) s.add('gzip');
  if (/\bzstd\b/i.test(help)) s.add('zstd');
  if (/\bparquet\b/i.test(help)) s.add('parquet');
  return s;
}

for (const [name, helpArgs, withFile] of COMMANDS) {
  test(`${name}: --help names exactly the input formats it reads`, () => {
    const help = run([...helpArgs, '--help']);
    assert.is(help.status, 0, help.stderr);
    const reads = new Set<string>();
    for (const f of FORMATS) {
      const r = run(withFile(FILE[f]));
      if (r.status === 0) reads.add(f);
      else assert.match(r.stderr, new RegExp(`${FILE[f].replace(/\./g, '\\.')}|${f}`, 'i'), `${name} refusing ${f} says why: ${r.stderr}`);
    }
    assert.equal([...named(help.stdout)].sort(), [...reads].sort(), `${name}: formats in --help vs formats read`);
    const plain = run(withFile('c.jsonl'));
    assert.is(plain.status, 0, plain.stderr);
  });
}

test('dedup --help leads with the options people use, each of them an option dedup takes', () => {
  const help = run(['dedup', '--help']).stdout;
  const head = help.slice(0, help.indexOf('Defaults (the verified answer'));
  const lead = [...head.matchAll(/^  (--[a-z-]+)/gm)].map((m) => m[1]);
  assert.equal(lead, ['--kept', '--removed', '--flags', '--clusters', '--pairs', '--id-field', '--field', '--threshold', '--fast', '--memory', '--work']);
  const all = help.slice(head.length);
  for (const o of lead) assert.match(all, new RegExp(`^  ${o}\\b`, 'm'), `${o} is also described in full below`);
  assert.ok(head.split('\n').length <= 24, 'the lead fits a terminal');
});

test('passages: a help page per verb (and for stage); a missing verb is a usage error on stderr', () => {
  const pages = new Map<string, string>();
  for (const v of ['index', 'extract', 'query', 'pairs', 'stage']) {
    const r = run(['passages', v, '--help']);
    assert.is(r.status, 0, `${v}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Usage: neardup passages ${v}`), v);
    pages.set(v, r.stdout);
  }
  assert.is(new Set(pages.values()).size, 5, 'five different pages');
  assert.is(run(['passages', 'stage', 'part', '--help']).stdout, pages.get('stage'));
  for (const args of [['passages'], ['passages', 'stage'], ['simhash'], ['similar']]) {
    const r = run(args);
    assert.is(r.status, 2, args.join(' '));
    assert.is(r.stdout, '', `${args.join(' ')}: nothing on stdout`);
    assert.match(r.stderr, /^Usage: neardup/);
  }
  const bad = run(['passages', 'query', 'pix', '--min-shared', 'x']);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /Run 'neardup passages query --help'/);
});

test.run();
