// neardup dupi against go-air/dupi's own outputs (test/fixtures/vectors/dupi, spec in its README): every blot
// value and offset, the interleaved and 8-shard variants, inspect, extract (Go's unstable tie order), unblot,
// like, the edge-case index. Paths: dupi prints absolute paths; the vectors have the working directory
// removed, so outputs here are compared after removing this test's working directory.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { cli } from './cli-helper';
import { blot } from '../lib/postings/postings';

const test = suite('dupi');
const V = path.join(__dirname, 'fixtures', 'vectors', 'dupi');
let dir = '';
let prefix = '';

const vec = (name: string): string => {
  const p = path.join(V, name);
  if (fs.existsSync(p)) return fs.readFileSync(p, 'utf8');
  return zlib.gunzipSync(fs.readFileSync(p + '.gz')).toString('utf8');
};
const corpus = zlib.gunzipSync(fs.readFileSync(path.join(V, 'corpus.jsonl.gz'))).toString().trim().split('\n')
  .map((l) => JSON.parse(l) as { path: string; b64: string });
const blotVectors = zlib.gunzipSync(fs.readFileSync(path.join(V, 'blots.jsonl.gz'))).toString().trim().split('\n')
  .map((l) => JSON.parse(l) as Record<string, unknown> & { file: string; blots: string[]; il_blots: string[] });

function run(args: string[]): string {
  const r = cli(dir, ['dupi', ...args]);
  assert.is(r.code, 0, `neardup dupi ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString('utf8').split(prefix).join('');
}

test.before(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-dupi-')));
  prefix = dir + '/';
  for (const e of corpus) {
    fs.mkdirSync(path.join(dir, path.dirname(e.path)), { recursive: true });
    fs.writeFileSync(path.join(dir, e.path), Buffer.from(e.b64, 'base64'));
  }
  run(['-r', 'idx-n4', 'index', 'corpus']);
  run(['-r', 'idx-n8', 'index', '-n', '8', 'corpus']);
  fs.writeFileSync(path.join(dir, 'il-cfg.json'), vec('il/cfg.json').replace('"idx-il"', JSON.stringify(path.join(dir, 'idx-il'))));
  run(['index', '-c', 'il-cfg.json', 'corpus']);
  run(['-r', 'idx-edge', 'index', 'corpus/edge']);
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('every blot value (32-bit, reduced, interleaved, 8 shards) and -offsets range', async () => {
  const texts = blotVectors.map((b) => fs.readFileSync(path.join(dir, b.file)));
  const r = await blot(texts, { profile: 'dupi' });
  const ri = await blot(texts, { profile: 'dupi', seqLen: 5, interleave: 2 });
  let checked = 0;
  blotVectors.forEach((e, i) => {
    const a = Array.from(r.blots.subarray(r.docOffsets[i], r.docOffsets[i + 1]));
    const ai = Array.from(ri.blots.subarray(ri.docOffsets[i], ri.docOffsets[i + 1]));
    assert.equal(a.map((x) => (x % 262144).toString(16)), e.blots, e.file);
    assert.equal(ai.map((x) => (x % 262144).toString(16)), e.il_blots, e.file);
    checked += e.blots.length + e.il_blots.length;
    if (e.blots32) assert.equal(a.map((x) => x.toString(16).padStart(8, '0')), e.blots32, e.file);
    if (e.il_blots32) assert.equal(ai.map((x) => x.toString(16).padStart(8, '0')), e.il_blots32, e.file);
    if (e.n8_blots) assert.equal(a.map((x) => (x % 524288).toString(16)), e.n8_blots, e.file);
    if (e.offsets) {
      const o = a.map((x, j) => `${(x % 262144).toString(16)} ${r.tokenBegins[r.docOffsets[i] + j]}:${r.tokenEnds[r.docOffsets[i] + j]}`);
      assert.equal(o, e.offsets, e.file);
    }
  });
  assert.ok(checked > 300000);
});

test('blot CLI prints the reduced blots and -offsets of any file (dot-files too), files back to back', () => {
  const edge = blotVectors.filter((b) => b.file.startsWith('corpus/edge/'));
  const files = edge.map((e) => e.file);
  assert.is(run(['-r', 'idx-n4', 'blot', ...files]), edge.map((e) => e.blots.map((l) => l + '\n').join('')).join(''));
  assert.is(run(['-r', 'idx-n4', 'blot', '-offsets', ...files]), edge.map((e) => (e.offsets as string[]).map((l) => l + '\n').join('')).join(''));
  assert.is(run(['-r', 'idx-il', 'blot', ...files]), edge.map((e) => e.il_blots.map((l) => l + '\n').join('')).join(''));
});

for (const [name, root] of [['n4', 'idx-n4'], ['n8', 'idx-n8'], ['il', 'idx-il'], ['edge', 'idx-edge']]) {
  test(`${name}: inspect, inspect -json (NumPaths shifted by this folder's depth)`, () => {
    const depthHere = dir.split('/').filter(Boolean).length;
    const shift = depthHere - 4;  // the vectors were made four levels below /
    const j = JSON.parse(run(['-r', root, 'inspect', '-json']));
    const want = JSON.parse(vec(`${name}/inspect.json`));
    want.NumPaths += shift;
    j.Root = path.basename(j.Root);
    assert.equal(j, want);
    const txt = run(['-r', root, 'inspect']).replace(/nodes/, '').split('\n');
    const wantTxt = vec(`${name}/inspect.txt`).replace(/nodes/, '').split('\n');
    wantTxt[0] = wantTxt[0];
    assert.is(txt.length, wantTxt.length);
    for (let i = 0; i < txt.length; i++) {
      if (i === 0) assert.ok(txt[0].endsWith(`${root}:`));
      else if (i === 2) assert.is(txt[2], `\t- ${want.NumPaths}  in path tree`);
      else assert.is(txt[i], wantTxt[i]);
    }
  });

  test(`${name}: extract orders (Go 1.19 tie order), -b, sigma 0/1/3`, () => {
    const files = fs.readdirSync(path.join(V, name)).map((f) => f.replace(/\.gz$/, ''));
    for (const f of files) {
      const m = /^extract(-b)?(?:-sigma(\d))?\.txt$/.exec(f);
      if (!m) continue;
      const args = ['-r', root, 'extract'];
      if (m[1]) args.push('-b');
      if (m[2] !== undefined) args.push('-sigma', m[2]);
      assert.is(run(args), vec(`${name}/${f}`), `${name}/${f}`);
    }
  });
}

test('extract -json: the items of dupi\'s concatenated arrays, as one valid JSON array', () => {
  for (const [name, root, flags] of [['n4', 'idx-n4', []], ['edge', 'idx-edge', ['-sigma', '0']]] as const) {
    const file = name === 'n4' ? 'n4/extract.json-concat' : 'edge/extract-sigma0.json-concat';
    const concat = vec(file);
    const items = JSON.parse('[' + concat.split('\n][\n').join(',\n') .replace(/^\[\n?/, '').replace(/\n?\]$/, '') + ']');
    const got = JSON.parse(run(['-r', root, 'extract', '-json', ...flags]));
    assert.equal(got, items, file);
  }
});

const GROUP = /^(?=text:\n''')/m;

for (const [name, root] of [['n4', 'idx-n4'], ['n8', 'idx-n8'], ['il', 'idx-il'], ['edge', 'idx-edge']]) {
  test(`${name}: unblot and unblot -all (all blots in one call; groups compared as a multiset)`, () => {
    const blots = vec(`${name}/unblot-blots.txt`).trim().split('\n');
    for (const [file, flag] of [['unblot.txt', []], ['unblot-all.txt', ['-all']]] as const) {
      const want = vec(`${name}/${file}`).split(/^### .*\n/m).join('').split(GROUP).filter(Boolean).sort();
      const got = run(['-r', root, 'unblot', ...flag, ...blots]).split(GROUP).filter(Boolean).sort();
      assert.ok(want.length > 0);
      assert.equal(got, want, `${name} ${file}`);
    }
  });

  test(`${name}: like (all files in one call; documents compared as sets)`, () => {
    const files = vec(`${name}/like-files.txt`).trim().split('\n');
    const want = vec(`${name}/like.txt`).split(/^(?=like )/m);
    const got = run(['-r', root, 'like', ...files]).split(/^(?=like )/m);
    assert.is(want.length, files.length);
    assert.is(got.length, files.length);
    files.forEach((f, i) => {
      const g = got[i].split('\n');
      const w = want[i].split('\n');
      assert.is(g[0], w[0]);
      assert.equal(g.slice(1).sort(), w.slice(1).sort(), f);
    });
  });
}

test('index -a (append) gives the same index as one run; index -t 8 fails; an existing root is refused', () => {
  const names = fs.readdirSync(path.join(dir, 'corpus')).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  // walk order: 'edge' (a folder) sorts between the easy-ham and planted files
  const files = names.filter((n) => !n.startsWith('.')).map((n) => path.join('corpus', n));
  run(['-r', 'idx-a', 'index', ...files.slice(0, 200)]);
  run(['-r', 'idx-a', 'index', '-a', ...files.slice(200)]);
  const one = run(['-r', 'idx-n4', 'extract', '-sigma', '0']);
  assert.ok(one.length > 1000);
  assert.is(run(['-r', 'idx-a', 'extract', '-sigma', '0']), one);
  const r = cli(dir, ['dupi', '-r', 'idx-t8', 'index', '-t', '8', 'corpus/edge']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /inconsistent sequence config/);
  const r2 = cli(dir, ['dupi', '-r', 'idx-n4', 'index', 'corpus/edge']);
  assert.is(r2.code, 1);
  assert.match(r2.stderr, /idx-n4/);
});

test('index reads every file whole in the walk order: a file larger than a read batch, empty files, many batches, Go byte order of names', () => {
  const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => `w${(i * 7919 + seed) % 5003}`).join(' ');
  const root = path.join(dir, 'sizes');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  const files: Record<string, string> = {
    'a.txt': words(400_000, 1),  // ~2.6 MB: larger than a read batch of the default cap and of -memory 1M
    'b.txt': '',
    'c.txt': words(50, 2),
    '\u00e9.txt': words(60, 3),
    '\ufb00.txt': words(70, 4),  // U+FB00 sorts after U+1F600 in UTF-16 (a surrogate pair) but before it in UTF-8
    '\u{1F600}.txt': words(80, 5),
    '.hidden': words(90, 6),
    'sub/d.txt': words(100, 7) + ' ' + words(50, 2),
  };
  for (const [n, t] of Object.entries(files)) fs.writeFileSync(path.join(root, n), t);
  for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(root, 'sub', `m${String(i).padStart(3, '0')}`), words(200 + i, i));
  const want: string[] = [];
  const walk = (d: string) => {
    const names = fs.readdirSync(d).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const n of names) {
      if (n.startsWith('.')) continue;
      const p = path.join(d, n);
      if (fs.statSync(p).isDirectory()) walk(p);
      else want.push(p);
    }
  };
  walk(root);
  assert.ok(want.indexOf(path.join(root, '\ufb00.txt')) < want.indexOf(path.join(root, '\u{1F600}.txt')));
  run(['-r', 'idx-sizes', 'index', 'sizes']);
  run(['-r', 'idx-sizes-1m', 'index', '-memory', '1M', 'sizes']);
  for (const ix of ['idx-sizes', 'idx-sizes-1m']) {
    const docs = JSON.parse(fs.readFileSync(path.join(dir, ix, 'docs.json'), 'utf8')) as { Path: string; Start: number; End: number }[];
    assert.equal(docs.map((d) => d.Path), ['', ...want], ix);
    assert.equal(docs.map((d) => d.End), [0, ...want.map((p) => fs.statSync(p).size)], ix);
  }
  const extract = run(['-r', 'idx-sizes', 'extract', '-sigma', '0']);
  assert.ok(extract.includes('sub/d.txt') && extract.includes('c.txt'));  // c.txt's text is repeated in d.txt
  assert.is(run(['-r', 'idx-sizes-1m', 'extract', '-sigma', '0']), extract);
  // a file that cannot be opened (a dangling link: listed, not followed by the walk) stops the run, named
  fs.symlinkSync(path.join(dir, 'nowhere'), path.join(root, 'sub', 'x-dangling'));
  const r = cli(dir, ['dupi', '-r', 'idx-sizes-bad', 'index', 'sizes']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /^neardup dupi: cannot open '.*sizes\/sub\/x-dangling': No such file or directory\n$/);
});

test.run();
