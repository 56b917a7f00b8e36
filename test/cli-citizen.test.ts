// The command line as a good citizen: --threads on every command, a clear error for a bad NEARDUP_THREADS,
// one-line "did you mean" errors for mistyped options, progress with percentage and ETA (terminal only),
// `paragraphs` telling JSONL from plain text, summaries of `minhash` and `simhash fingerprint`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as zlib from 'node:zlib';
import { cli } from './cli-helper';
import { TSX_FLAGS } from './support/tsx';
import { editDistance, parse } from '../lib/cli/common';
import { Progress, percentEta, setProgressMode } from '../lib/cli/progress';
import { readJsonl } from '../lib/io/jsonl';
import { getThreads, setThreads } from '../lib/index';

let dir = '';
test.before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-cli2-')); });
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
const write = (name: string, data: string | Buffer) => { fs.writeFileSync(path.join(dir, name), data); return name; };
const jsonl = (texts: string[]) => texts.map((t) => JSON.stringify({ text: t })).join('\n') + '\n';

const COMMANDS = [
  ['shingles'], ['minhash'], ['dedup'], ['simhash', 'fingerprint'], ['simhash', 'find-all'], ['paragraphs'], ['onion'],
  ['doubri', 'minhash'], ['doubri', 'init'], ['doubri', 'self'], ['doubri', 'other'], ['doubri', 'apply'],
];

test('the registry: each command module is loaded only when run, and is the command its entry names', () => {
  const { commands } = require('../lib/cli/registry') as typeof import('../lib/cli/registry');
  const mod = (name: string) => path.join(__dirname, '..', 'lib', 'cli', 'commands', `${name}.ts`);
  assert.ok(commands.length >= 12);
  assert.is(new Set(commands.map((c) => c.name)).size, commands.length);
  for (const e of commands) {
    assert.ok(e.summary.length > 10, e.name);
    const c = e.load();
    assert.is(c.name, e.name);
    assert.ok(c.usage.startsWith('Usage: neardup'), e.name);
    assert.ok(require.cache[mod(e.name)] !== undefined, e.name);
  }
  // `neardup --version` loads no command module
  const r = spawnSync(process.execPath, [...TSX_FLAGS, '-e',
    `require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'cli', 'main.ts'))}).main(['--version']).then(() => ` +
    `console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('/cli/commands/')))))`]);
  assert.is(r.status, 0, r.stderr?.toString());
  assert.equal(JSON.parse(r.stdout.toString().trim().split('\n').pop()!), []);
});

test('--threads N is accepted by every command and checked', () => {
  for (const c of COMMANDS) {
    const ok = cli(dir, [...c, '--threads', '2', '--help']);
    assert.is(ok.code, 0, `${c.join(' ')}: ${ok.stderr}`);
    const bad = cli(dir, [...c, '--threads', '0']);
    assert.is(bad.code, 2, c.join(' '));
    assert.match(bad.stderr, /--threads must be from 1 to 256, got 0/);
  }
  const x = cli(dir, ['shingles', '--threads', 'many']);
  assert.match(x.stderr, /--threads must be an integer, got 'many'/);
  const r = cli(dir, ['shingles', '--threads', '1', '--unit', 'word', '-n', '1', '--hash', 'murmur3_32'], jsonl(['hello']));
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.toString(), '[613153351]\n');
});

test('--threads sets the native pool size', () => {
  const before = getThreads();
  try {
    parse(['--threads', '3'], {});
    assert.is(getThreads(), 3);
    parse(['--threads', '1'], {});
    assert.is(getThreads(), 1);
  } finally {
    setThreads(0);
  }
  assert.is(getThreads(), before);
});

test('a bad NEARDUP_THREADS is a clear error', () => {
  const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');
  const TSX = pathToFileURL(require.resolve('tsx')).href;
  for (const v of ['abc', '0', '-2', '1.5', '1000']) {
    const r = spawnSync(process.execPath, ['--import', TSX, MAIN, 'shingles'], {
      cwd: dir, input: jsonl(['x']), env: { ...process.env, NEARDUP_THREADS: v }, encoding: 'utf8',
    });
    assert.is(r.status, 2, v);
    assert.match(r.stderr, new RegExp(`NEARDUP_THREADS must be an integer from 1 to 256, got '${v.replace('.', '\\.')}'`));
  }
  const ok = spawnSync(process.execPath, ['--import', TSX, MAIN, 'shingles', '-n', '1', '--unit', 'word', '--hash', 'murmur3_32'], {
    cwd: dir, input: jsonl(['hello']), env: { ...process.env, NEARDUP_THREADS: '2' }, encoding: 'utf8',
  });
  assert.is(ok.status, 0, ok.stderr);
});

test('a mistyped option: one line with the nearest option, no usage dump', () => {
  const cases: [string[], string | null][] = [
    [['dedup', '--thresold', '0.5'], '--threshold'],
    [['dedup', '--flag', 'f.txt'], '--flags'],
    [['minhash', '--num-perms', '64'], '--num-perm'],
    [['minhash', '--Profile', 'fast'], '--profile'],
    [['simhash', 'fingerprint', '--wieghting', 'binary'], '--weighting'],
    [['paragraphs', '--drop-al'], '--drop-all'],
    [['doubri', 'apply', '--bogus'], null],
    [['shingles', '--xyzzy'], null],
  ];
  for (const [args, hint] of cases) {
    const r = cli(dir, args);
    assert.is(r.code, 2, args.join(' '));
    const lines = r.stderr.trimEnd().split('\n');
    assert.is(lines.length, 2, r.stderr);
    assert.match(lines[0], `unknown option '${args.find((a) => a.startsWith('--'))}'`);
    if (hint) assert.match(lines[0], `(did you mean ${hint}?)`);
    else assert.not.match(lines[0], 'did you mean');
    assert.match(lines[1], /^Run 'neardup .* --help' for the options\.$/);
  }
  assert.is(editDistance('thresold', 'threshold'), 1);
  assert.is(editDistance('wieghting', 'weighting'), 1);
  assert.is(editDistance('', 'abc'), 3);
});

test('progress: percentage and ETA from the fraction of the input read', () => {
  assert.is(percentEta(0.5, 10), '50.0%  ETA 10s');
  assert.is(percentEta(0.25, 30), '25.0%  ETA 1m30s');
  assert.is(percentEta(0.001, 5), '0.1%');
  assert.is(percentEta(1, 5), '100.0%');
  let out = '';
  const sink = { write: (s: string) => { out += s; return true; } } as unknown as NodeJS.WritableStream;
  setProgressMode('tty');  // the bar, also into this sink (not a terminal)
  try {
    const p = new Progress('neardup test', true, sink);
    p.update({ bytes: 2_000_000, docs: 1000, fraction: 0.4 }, true);
    assert.match(out, /neardup test {2}2\.0 MB {2}.*1,000 docs {2}40\.0% {2}ETA \d+s/);
    const quiet = new Progress('x', false, sink);
    out = '';
    quiet.update({ bytes: 1, fraction: 0.5 }, true);
    assert.is(out, '');
  } finally {
    setProgressMode(null);
  }
});

test('readJsonl reports the fraction of the files read (plain and gzip), up to 1', async () => {
  const texts = Array.from({ length: 4000 }, (_, i) => `document ${i} ${'x'.repeat(i % 200)}`);
  const plain = path.join(dir, write('frac.jsonl', jsonl(texts)));
  const gz = path.join(dir, write('frac.jsonl.gz', zlib.gzipSync(jsonl(texts))));
  for (const files of [[plain], [gz], [plain, gz], [plain, plain]]) {
    const fr: (number | undefined)[] = [];
    for await (const _ of readJsonl(files, { batchBytes: 20_000, onProgress: (_b, f) => fr.push(f) })) { /* */ }
    assert.ok(fr.length > 3);
    for (let i = 1; i < fr.length; i++) assert.ok(fr[i]! >= fr[i - 1]!, `${fr[i]} after ${fr[i - 1]}`);
    assert.is(fr[fr.length - 1], 1);
    if (files[1] === plain) assert.ok(fr.some((f) => f! > 0.3 && f! < 0.7), 'half way after the first file');
  }
});

test('progress appears on a terminal (with a percentage) and never in a pipe', () => {
  const texts = Array.from({ length: 2000 }, (_, i) => `text number ${i} with some words`);
  write('prog.jsonl', jsonl(texts));
  const piped = cli(dir, ['dedup', 'prog.jsonl', '--flags', 'f.txt']);
  assert.is(piped.code, 0, piped.stderr);
  assert.not.match(piped.stderr, '%');
  const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
  if (!hasScript) {
    console.log('  (no `script` command: the terminal half of this test is skipped)');
    return;
  }
  const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');
  const TSX = pathToFileURL(require.resolve('tsx')).href;
  const cmd = [process.execPath, '--import', TSX, MAIN, 'dedup', 'prog.jsonl', '--flags', 'f2.txt'].map((a) => `'${a}'`).join(' ');
  const env = { ...process.env };
  delete env.NEARDUP_PROGRESS;  // npm test sets none; the default (auto) is what is tested here
  const tty = spawnSync('script', ['-qec', cmd, '/dev/null'], { cwd: dir, encoding: 'utf8', timeout: 120_000, env });
  assert.is(tty.status, 0, tty.stdout);
  assert.match(tty.stdout, /neardup dedup .*docs {2}100\.0%/);
  assert.is(fs.readFileSync(path.join(dir, 'f2.txt'), 'utf8'), fs.readFileSync(path.join(dir, 'f.txt'), 'utf8'));
});

test('paragraphs: JSONL is detected by its first line (file or stdin), plain text stays text', () => {
  const docs = ['alpha beta gamma delta epsilon zeta eta theta\n\nunique one two three four five six seven', 'alpha beta gamma delta epsilon zeta eta theta'];
  const input = jsonl(docs);
  const args = ['paragraphs', '-n', '3', '--no-smoothing'];
  const explicit = cli(dir, [...args, '--format', 'jsonl', write('p.jsonl', input)]);
  assert.is(explicit.code, 0, explicit.stderr);
  const out = explicit.stdout.toString();
  assert.is(out.split('\n').length, 3);
  assert.is(JSON.parse(out.split('\n')[1]).duplicate_paragraphs, 1);
  for (const r of [cli(dir, [...args, write('p.data', input)]), cli(dir, args, input), cli(dir, [...args, write('p2.gz', zlib.gzipSync(input))])]) {
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.toString(), out);
  }
  const text = 'first paragraph with words a b c d\n\nfirst paragraph with words a b c d\n';
  const t = cli(dir, [...args, write('plain.txt', text)]);
  assert.is(t.stdout.toString(), 'first paragraph with words a b c d\n');
  assert.is(cli(dir, args, text).stdout.toString(), 'first paragraph with words a b c d\n');
  // a line starting with '{' that is not JSON is text
  const braces = '{ not json\n\n{ not json\n';
  assert.is(cli(dir, ['paragraphs', '-n', '1', '--no-smoothing'], braces).stdout.toString(), '{ not json\n');
  // vertical text is recognised by its <doc> tag
  const vert = '<doc>\n<p>\na\nb\nc\n</p>\n</doc>\n<doc id="2">\n<p>\na\nb\nc\n</p>\n</doc>\n';
  const v1 = cli(dir, ['paragraphs', '-n', '2', '--no-smoothing', '--format', 'vertical', '--mark'], vert);
  assert.is(v1.code, 0, v1.stderr);
  assert.match(v1.stdout.toString(), /^0\t<doc>\n/);
  assert.is(cli(dir, ['paragraphs', '-n', '2', '--no-smoothing', '--mark'], vert).stdout.toString(), v1.stdout.toString());
  assert.is(cli(dir, ['paragraphs', '-n', '2', '--no-smoothing', '--mark', write('v.data', vert)]).stdout.toString(), v1.stdout.toString());
  const gz = cli(dir, args, zlib.gzipSync(input));
  assert.is(gz.code, 2);
  assert.match(gz.stderr, /gzip on standard input: give --format/);
});

test('minhash and simhash fingerprint print a JSON summary on stderr', () => {
  const name = write('sum.jsonl', `${jsonl(['hello world', 'abc'])}not json\n${jsonl(['x'])}`);
  const m = cli(dir, ['minhash', '--num-perm', '4', '--on-bad-line', 'skip', name]);
  assert.is(m.code, 0, m.stderr);
  const ms = JSON.parse(m.stderr.trim().split('\n').pop()!);
  assert.equal([ms.documents, ms.bad_lines, ms.skipped, ms.num_perm, ms.output, ms.profile], [4, 1, 1, 4, 'stdout', 'fast']);
  assert.is(ms.input_bytes, fs.statSync(path.join(dir, name)).size);
  const f = cli(dir, ['minhash', '--on-bad-line', 'empty', '-o', 'sum.sig', name]);
  const fs2 = JSON.parse(f.stderr.trim().split('\n').pop()!);
  assert.equal([fs2.documents, fs2.bad_lines, fs2.skipped, fs2.output, fs2.format], [4, 1, 0, 'sum.sig', 'neardup']);
  const s = cli(dir, ['simhash', 'fingerprint', '--on-bad-line', 'skip', name]);
  assert.is(s.code, 0, s.stderr);
  const ss = JSON.parse(s.stderr.trim().split('\n').pop()!);
  assert.equal([ss.documents, ss.bad_lines, ss.skipped, ss.profile], [4, 1, 1, 'default']);
  assert.is(s.stdout.toString().trim().split('\n').length, 4);
  const fa = cli(dir, ['simhash', 'find-all', '--distance', '2'], '0\n3\n3\n255\n\n7\n');
  assert.is(fa.code, 0, fa.stderr);
  assert.is(fa.stdout.toString(), '0 3\n3 7\n');
  assert.equal(JSON.parse(fa.stderr.trim()), { ...JSON.parse(fa.stderr.trim()), lines: 5, fingerprints: 4, pairs: 2, distance: 2 });
});

test.run();
