import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import * as os from 'node:os';
import * as path from 'node:path';
import { ParagraphFilter, dedupVertical } from '../lib/index';
import { refDocument, refVertical, type RefOptions } from './reference/onion';
import { generate } from './support/gen-vertical';
import { cli } from './cli-helper';

const asString = (flags: ArrayLike<number>) => Array.from(flags, (x) => (x ? '1' : '0')).join('');

const VARIANTS: [string, RefOptions][] = [
  ['defaults (Onion)', { keepUniqueShort: false }],
  ['no smoothing', { smoothing: false, keepUniqueShort: false }],
  ['n=3 t=0.3', { n: 3, threshold: 0.3, keepUniqueShort: false }],
  ['keep unique short, no within-doc', { keepUniqueShort: true, withinDocument: false }],
];

for (const [name, o] of VARIANTS) {
  test(`drop-all on generated vertical text agrees with the reference: ${name}`, async () => {
    let extra = 0;
    for (let seed = 1; seed <= 5; seed++) {
      const lines = generate(seed, 120, seed === 2 ? 20000 : 0);
      const text = lines.join('\n') + '\n';
      const want = refVertical(lines, { ...o, dropAll: true });
      const got = await dedupVertical(text, { ...o, dropAll: true });
      const a = asString(got), b = want.join('');
      if (a !== b) {
        const i = [...a].findIndex((c, k) => c !== b[k]);
        assert.unreachable(`seed ${seed}: first difference at line ${i}: ${JSON.stringify(lines.slice(Math.max(0, i - 3), i + 3))}`);
      }
      // Drop-all removes everything keep-first removes, and first copies too.
      const keep = refVertical(lines, o);
      keep.forEach((f, i) => assert.ok(!f || want[i], `line ${i} removed by keep-first only`));
      extra += want.filter((f, i) => f && !keep[i]).length;
    }
    assert.ok(extra > 0, 'some first copies are removed');
  });
}

test('drop-all with pushDocuments: two passes, first copies removed; chunking does not matter', async () => {
  const docs: string[][] = [['alpha beta gamma delta epsilon zeta eta theta', 'unique one two three four five six seven'],
    ['alpha beta gamma delta epsilon zeta eta theta', 'other text here that is new and long enough ok'],
    ['nothing repeated in this document at all really no sir']];
  const o = { n: 3, smoothing: false };
  const f = new ParagraphFilter({ ...o, dropAll: true });
  const first = await f.pushDocuments(docs);
  assert.equal(first.duplicate, [[false, false], [true, false], [false]]); // pass 1: keep-first
  await f.startSecondPass();
  const a = await f.pushDocuments(docs.slice(0, 1));
  const b = await f.pushDocuments(docs.slice(1));
  assert.equal([...a.duplicate, ...b.duplicate], [[true, false], [true, false], [false]]);
  assert.is(f.stats().duplicateParagraphs, 2);
  await f.startSecondPass().then(() => assert.unreachable('second call'), (e) => assert.match(String(e), /already started/));
  f.close();
  // The reference.
  const seen = new Set<string>(), rep = new Set<string>();
  const toks = docs.map((d) => d.map((p) => p.split(' ')));
  for (const d of toks) refDocument(d, seen, o, 'collect', rep);
  assert.equal(toks.map((d) => refDocument(d, seen, o, 'drop-all', rep).dup), [[true, false], [true, false], [false]]);
  const k = new ParagraphFilter();
  await k.startSecondPass().then(() => assert.unreachable('keep-first'), (e) => assert.match(String(e), /dropAll/));
  k.close();
});

test('neardup paragraphs --drop-all: files, stdin and pipes; both copies removed', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-dropall-'));
  const para = 'the same paragraph appears twice in this small text file';
  fs.writeFileSync(path.join(dir, 'a.txt'), `${para}\n\nfirst unique paragraph of the file here\n\n${para}\n`);
  const r = cli(dir, ['paragraphs', '--drop-all', '--no-smoothing', '--format', 'text', 'a.txt']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.toString(), 'first unique paragraph of the file here\n');
  const k = cli(dir, ['paragraphs', '--no-smoothing', '--format', 'text', 'a.txt']);
  assert.is(k.stdout.toString(), `${para}\n\nfirst unique paragraph of the file here\n`);
  // standard input and a pipe given as FILE (it used to print nothing and exit 0): copied to --tmp first,
  // the copy removed at the end
  const input = fs.readFileSync(path.join(dir, 'a.txt'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-dropall-tmp-'));
  for (const args of [[], ['-']]) {
    const s = cli(dir, ['paragraphs', '--drop-all', '--no-smoothing', '--format', 'text', '--tmp', tmp, ...args], input);
    assert.is(s.code, 0, s.stderr);
    assert.is(s.stdout.toString(), 'first unique paragraph of the file here\n', args.join(' '));
    assert.equal(fs.readdirSync(tmp), []);
  }
  // real pipes (spawnSync's stdin is a socket): `cat | neardup ... /dev/stdin` and a FIFO as FILE
  const node = [process.execPath, '--import', pathToFileURL(require.resolve('tsx')).href, path.join(__dirname, '..', 'lib', 'cli', 'main.ts')]
    .map((a) => `'${a}'`).join(' ');
  const sh = (script: string) => spawnSync('sh', ['-c', script], { cwd: dir, encoding: 'utf8' });
  const piped = sh(`cat a.txt | ${node} paragraphs --drop-all --no-smoothing --format text --tmp '${tmp}' /dev/stdin`);
  assert.is(piped.status, 0, piped.stderr);
  assert.is(piped.stdout, 'first unique paragraph of the file here\n');
  const fifo = sh(`mkfifo p.fifo && (cat a.txt > p.fifo &) && ${node} paragraphs --drop-all --no-smoothing --format text --tmp '${tmp}' p.fifo`);
  assert.is(fifo.status, 0, fifo.stderr);
  assert.is(fifo.stdout, 'first unique paragraph of the file here\n');
  assert.equal(fs.readdirSync(tmp), []);
  // a bad line in piped JSONL is named as the pipe, not as the copy
  fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"text": "a"}\n{oops\n');
  const bad = sh(`cat bad.jsonl | ${node} paragraphs --drop-all --format jsonl --tmp '${tmp}' /dev/stdin`);
  assert.is(bad.status, 1);
  assert.match(bad.stderr, /\/dev\/stdin:2: not valid JSON/);
  assert.equal(fs.readdirSync(tmp), []);
  const noTmp = cli(dir, ['paragraphs', '--drop-all', '--format', 'text', '--tmp', path.join(dir, 'missing', 'x')], 'x\n');
  assert.is(noTmp.code, 1);
  assert.match(noTmp.stderr, /--tmp .*missing.*cannot create a folder/);
  fs.rmSync(tmp, { recursive: true, force: true });
  const lines = generate(4, 80);
  fs.writeFileSync(path.join(dir, 'g.vert'), lines.join('\n') + '\n');
  const v = cli(dir, ['paragraphs', '--drop-all', '--mark', '--no-within-doc', 'g.vert']);
  assert.is(v.code, 0, v.stderr);
  const flags = v.stdout.toString().split('\n').filter(Boolean).map((l) => l[0]).join('');
  assert.is(flags, refVertical(lines, { withinDocument: false, keepUniqueShort: true, dropAll: true }).join(''));
  fs.rmSync(dir, { recursive: true, force: true });
});

test.run();
