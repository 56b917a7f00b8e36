// The command line, run as a user runs it: `node dist/cli/main.js` (build with `npx tsc -p .` first).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { shingleHashesSync, type ShingleHashOptions } from '../lib/index';
import { native } from '../lib/native/addon';
import { NeardupError } from '../lib/util/errors';
import { readJsonl } from '../lib/io/jsonl';

const test = suite('cli');
const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');
let dir = '';

test.before(() => {
  assert.ok(fs.existsSync(MAIN), `${MAIN} is missing: run npx tsc -p . first`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-cli-'));
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], input?: string | Buffer): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [MAIN, ...args], { cwd: dir, input, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 60_000 });
}
const file = (name: string, data: string | Buffer) => {
  fs.writeFileSync(path.join(dir, name), data);
  return name;
};
/** What `neardup shingles` must print for one text: the hashes of shingleHashes as a JSON array. */
function expected(text: string | null, o: ShingleHashOptions): string {
  if (text === null) return '[]';
  const r = shingleHashesSync([text], o);
  return JSON.stringify(Array.from(r.hashes as ArrayLike<number | bigint>, (h) => (typeof h === 'bigint' ? String(h) : h)));
}
const lines = (s: string) => s.split('\n').slice(0, -1);

const TEXTS = ['hello world', 'Ünïcödé 😀 text with émoji 🎉 and NUL \u0000', 'abc', '', 'The quick brown fox', 'x'.repeat(300)];
const jsonl = (texts: string[], field = 'text') => texts.map((t) => JSON.stringify({ id: 1, [field]: t })).join('\n') + '\n';

test('--help, --version, no command, unknown command, bad options', () => {
  const help = cli(['--help']);
  assert.is(help.status, 0);
  assert.match(help.stdout, /Usage: neardup <command>/);
  assert.match(help.stdout, /shingles/);
  const v = cli(['--version']);
  assert.is(v.status, 0);
  assert.is(v.stdout.trim(), JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version);
  assert.is(cli(['-v']).stdout, v.stdout);
  assert.is(cli([]).status, 2);
  const unknown = cli(['frobnicate']);
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  const sh = cli(['shingles', '--help']);
  assert.is(sh.status, 0);
  assert.match(sh.stdout, /Usage: neardup shingles/);
  for (const bad of [['--bogus'], ['--hash', 'sha256'], ['-n', '0'], ['-n', 'x'], ['--unit', 'byte'], ['--seed', '-1'], ['--on-bad-line', 'ignore'], ['--field', '']]) {
    const r = cli(['shingles', ...bad, 'x.jsonl']);
    assert.is(r.status, 2, bad.join(' '));
    assert.match(r.stderr, /^neardup shingles: .*\nRun 'neardup shingles --help' for the options\.\n$/, bad.join(' '));
  }
});

test('shingles on plain JSONL: one line per input line, equal to shingleHashes (64- and 32-bit kinds)', () => {
  const name = file('plain.jsonl', jsonl(TEXTS));
  for (const hash of ['fast64', 'murmur3_32', 'md5_64'] as const) {
    const r = cli(['shingles', '--hash', hash, '--seed', '7', name]);
    assert.is(r.status, 0, r.stderr);
    assert.equal(lines(r.stdout), TEXTS.map((t) => expected(t, { hash, seed: 7 })), hash);
  }
  const o: ShingleHashOptions = { unit: 'word', n: 2, lowercase: true, stripPunctuation: true, dedupe: true, split: 'nonword', hash: 'murmur3_32' };
  const r = cli(['shingles', '--unit', 'word', '-n', '2', '--lowercase', '--strip-punctuation', '--dedupe', '--split', 'nonword', '--hash', 'murmur3_32', name]);
  assert.equal(lines(r.stdout), TEXTS.map((t) => expected(t, o)));
  const big = cli(['shingles', '--seed', '18446744073709551615', name]);
  assert.equal(lines(big.stdout), TEXTS.map((t) => expected(t, { seed: (1n << 64n) - 1n })));
});

test('gzip input (detected by magic, any name), stdin, several files, --field, CRLF, final line without newline', () => {
  const data = jsonl(TEXTS);
  const want = TEXTS.map((t) => expected(t, { hash: 'murmur3_32' }));
  const gz = file('data.jsonl.gz', zlib.gzipSync(data));
  const gzOddName = file('data.txt', zlib.gzipSync(data));
  for (const f of [gz, gzOddName]) assert.equal(lines(cli(['shingles', '--hash', 'murmur3_32', f]).stdout), want, f);
  assert.equal(lines(cli(['shingles', '--hash', 'murmur3_32'], data).stdout), want, 'stdin');
  assert.equal(lines(cli(['shingles', '--hash', 'murmur3_32', '-'], zlib.gzipSync(data)).stdout), want, 'gzip stdin');
  const plainName = file('p.jsonl', data);
  assert.equal(lines(cli(['shingles', '--hash', 'murmur3_32', plainName, gz]).stdout), [...want, ...want], 'two files');
  const body = file('body.jsonl', jsonl(TEXTS, 'body'));
  assert.equal(lines(cli(['shingles', '--hash', 'murmur3_32', '--field', 'body', body]).stdout), want, '--field');
  const crlf = file('crlf.jsonl', data.replace(/\n/g, '\r\n'));
  assert.equal(lines(cli(['shingles', '--hash', 'murmur3_32', crlf]).stdout), want, 'CRLF');
  const noNl = file('nonl.jsonl', data.slice(0, -1));
  assert.equal(lines(cli(['shingles', '--hash', 'murmur3_32', noNl]).stdout), want, 'final line without newline');
  const noNlGz = file('nonl.gz', zlib.gzipSync(data.slice(0, -1)));
  assert.equal(lines(cli(['shingles', '--hash', 'murmur3_32', noNlGz]).stdout), want, 'gzip, final line without newline');
  const empty = cli(['shingles', file('empty.jsonl', '')]);
  assert.is(empty.status, 0);
  assert.is(empty.stdout, '');
});

test('bad lines: error names file:line; skip and empty keep line i = output line i', () => {
  const good = (t: string) => JSON.stringify({ text: t });
  const rows: Array<[string | Buffer, string | null]> = [
    [good('first line'), 'first line'],
    ['not json', null],
    ['[1, 2]', null],
    ['"a string"', null],
    [JSON.stringify({ body: 'no text field' }), null],
    [JSON.stringify({ text: 5 }), null],
    [JSON.stringify({ text: null }), null],
    [JSON.stringify({ text: { a: 1 } }), null],
    ['', null],
    [Buffer.concat([Buffer.from('{"text":"bad '), Buffer.from([0xff, 0xfe]), Buffer.from(' utf8"}')]), null],
    [good('last line'), 'last line'],
  ];
  const data = Buffer.concat(rows.flatMap(([l]) => [Buffer.from(l), Buffer.from('\n')]));
  const name = file('bad.jsonl', data);
  const reasons = [/not valid JSON/, /not a JSON object/, /not a JSON object/, /field 'text' is missing/, /field 'text' is number, expected a string/,
    /field 'text' is null/, /field 'text' is object/, /empty line/, /invalid UTF-8 near byte 13/];
  // error (the default): stops at the first bad line, naming it.
  const r = cli(['shingles', '--hash', 'murmur3_32', name]);
  assert.is(r.status, 1);
  assert.match(r.stderr, /bad\.jsonl:2: not valid JSON/);
  return (async () => {
    // Each bad line on its own, after a good one, through readJsonl (in process: no spawn per case): a
    // NeardupError with code, file and line, and a message naming file:line and the reason.
    for (const [k, [l]] of rows.slice(1, -1).entries()) {
      const one = path.join(dir, `one${k}.jsonl`);
      fs.writeFileSync(one, Buffer.concat([Buffer.from(good('ok') + '\n'), Buffer.from(l), Buffer.from('\n')]));
      let err: unknown = null;
      try {
        for await (const _ of readJsonl([one], { onBadLine: 'error' })) void _;
      } catch (e) {
        err = e;
      }
      assert.instance(err, NeardupError, `row ${k + 1}`);
      const ne = err as NeardupError;
      assert.is(ne.code, 'ERR_NEARDUP_BAD_LINE');
      assert.is(ne.file, one);
      assert.is(ne.line, 2);
      assert.ok(ne.message.startsWith(`${one}:2: `), ne.message);
      assert.match(ne.message, reasons[k], `row ${k + 1}: ${ne.message}`);
      // skip keeps the slot as null, empty as ''
      for (const mode of ['skip', 'empty'] as const) {
        const got: Array<string | null> = [];
        for await (const b of readJsonl([one], { onBadLine: mode })) got.push(...b.texts);
        assert.equal(got, ['ok', mode === 'skip' ? null : ''], `row ${k + 1} ${mode}`);
      }
    }
  for (const mode of ['skip', 'empty']) {
    const s = cli(['shingles', '--hash', 'murmur3_32', '--on-bad-line', mode, name]);
    assert.is(s.status, 0, s.stderr);
    assert.equal(lines(s.stdout), rows.map(([, t]) => expected(t, { hash: 'murmur3_32' })), mode);
  }
  // A bad line in the second file is named with that file and its own line number.
  const second = file('second.jsonl', good('a') + '\n' + good('b') + '\n{oops\n');
  const e2 = cli(['shingles', file('first.jsonl', good('x') + '\n'), second]);
  assert.is(e2.status, 1);
  assert.match(e2.stderr, /second\.jsonl:3: not valid JSON/);
  })();
});

test('nonexistent file, truncated and corrupt gzip: exit 1 with a message naming the file', () => {
  const missing = cli(['shingles', 'does-not-exist.jsonl']);
  assert.is(missing.status, 1);
  assert.match(missing.stderr, /cannot open 'does-not-exist\.jsonl'/);
  const data = zlib.gzipSync(Buffer.from(jsonl(TEXTS.concat(TEXTS, TEXTS))));
  const truncated = cli(['shingles', file('trunc.gz', data.subarray(0, data.length - 12))]);
  assert.is(truncated.status, 1);
  assert.match(truncated.stderr, /cannot read 'trunc\.gz': unexpected end of file/);
  const corrupt = Buffer.from(data);
  for (let i = 12; i < 40; i++) corrupt[i] ^= 0x5a;
  const bad = cli(['shingles', file('corrupt.gz', corrupt)]);
  assert.is(bad.status, 1);
  assert.match(bad.stderr, /cannot read 'corrupt\.gz': /);
  const badCrc = Buffer.from(data);
  badCrc[badCrc.length - 6] ^= 1; // the CRC-32 of the trailer
  const crc = cli(['shingles', file('crc.gz', badCrc)]);
  assert.is(crc.status, 1);
  assert.match(crc.stderr, /cannot read 'crc\.gz': incorrect data check/);
  const dir2 = cli(['shingles', '.']);
  assert.is(dir2.status, 1);
  assert.match(dir2.stderr, /'\.'/);
});

test('lines of 100 MB+: a 101 MiB field before the text, and a 101 MiB text (one word)', () => {
  const name = path.join(dir, 'big.jsonl');
  const fd = fs.openSync(name, 'w');
  const mib = Buffer.alloc(1 << 20, 'x');
  fs.writeSync(fd, '{"text":"first line"}\n{"pad":"');
  for (let i = 0; i < 101; i++) fs.writeSync(fd, mib);
  fs.writeSync(fd, '","text":"hello"}\n{"text":"');
  for (let i = 0; i < 101; i++) fs.writeSync(fd, mib);
  fs.writeSync(fd, '"}\n{"text":"last"}');
  fs.closeSync(fd);
  const r = cli(['shingles', '--hash', 'murmur3_32', '--unit', 'word', 'big.jsonl']);
  assert.is(r.status, 0, r.stderr);
  const word = native.hashBytes('murmur3_32', Buffer.alloc(101 << 20, 'x')).readUInt32LE(0);
  assert.equal(lines(r.stdout), [expected('first line', { hash: 'murmur3_32', unit: 'word' }), expected('hello', { hash: 'murmur3_32', unit: 'word' }),
    `[${word}]`, expected('last', { hash: 'murmur3_32', unit: 'word' })]);
  fs.rmSync(name);
});

test('a long line in char mode is printed in full (1.5 M shingles on one line)', () => {
  const t = 'abcdefghijklmnopqrstuvwxyz0123456789 '.repeat(40000);
  const r = cli(['shingles', '--hash', 'murmur3_32', '--dedupe', file('long.jsonl', JSON.stringify({ text: t }) + '\n')]);
  assert.is(r.status, 0);
  assert.equal(lines(r.stdout), [expected(t, { hash: 'murmur3_32', dedupe: true })]);
  const r2 = cli(['shingles', '--hash', 'murmur3_32', 'long.jsonl']);
  const got = JSON.parse(lines(r2.stdout)[0]) as number[];
  assert.is(got.length, t.length - 4);
  assert.equal(got, Array.from(shingleHashesSync([t], { hash: 'murmur3_32' }).hashes));
});

test.run();
