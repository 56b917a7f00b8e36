// neardup onion against Onion 1.2's own outputs on the whole SpamAssassin corpus as vertical text (41 MB,
// 9.7 M lines): flags per line with defaults, -n 5 -t 0.5, -T 24, and the two-pass mode (hashgen, hashdup,
// -f) with its files checked byte for byte. See test/fixtures/vectors/onion/README.md for how they were made.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { ParagraphFilter, dedupVertical, type ParagraphFilterOptions } from '../lib/index';
import { loadSpam, toVertical } from './support/vertical';

const VEC = path.join(__dirname, 'fixtures', 'vectors', 'onion');
const CLI = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const expected = (f: string) => zlib.gunzipSync(fs.readFileSync(path.join(VEC, f))).toString('latin1');
const asString = (flags: Uint8Array) => Buffer.from(flags.map((x) => 48 + x)).toString('latin1');
const sha256 = (b: Uint8Array) => crypto.createHash('sha256').update(b).digest('hex');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-onion-corpus-'));
const vert = Buffer.from(toVertical(loadSpam()), 'utf8');
const vertFile = path.join(dir, 'spam.vert');
fs.writeFileSync(vertFile, vert);

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const lines = vert.toString('utf8').split('\n');
  return `line ${i + 1} of ${b.length}: got ${a[i]}, Onion ${b[i]}; context ${JSON.stringify(lines.slice(Math.max(0, i - 3), i + 2))}`;
}

function cli(args: string[]): { stdout: Buffer; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { maxBuffer: 1 << 30, cwd: dir });
  assert.is(r.status, 0, r.stderr?.toString());
  return { stdout: r.stdout, stderr: r.stderr.toString() };
}

test('the vertical conversion is the input Onion was run on', () => {
  assert.is(sha256(vert), fs.readFileSync(path.join(VEC, 'spam.vert.sha256'), 'utf8').trim());
});

test('CLI with defaults: identical output to Onion 1.2 (flags, lines and Onion progress lines)', () => {
  const { stdout, stderr } = cli(['onion', vertFile]);
  const want = expected('spam.onion.flags.gz');
  // Rebuild Onion's exact output from the flags and the input lines.
  const lines = vert.toString('latin1').split('\n');
  lines.pop();
  assert.is(lines.length, want.length);
  const out = stdout.toString('latin1');
  const expectedOut = lines.map((l, i) => want[i] + '\t' + l).join('\n') + '\n';
  if (out !== expectedOut) {
    const got = out.split('\n').map((l) => l[0]).join('');
    assert.unreachable(firstDifference(got, want));
  }
  const progress = stderr.trimEnd().split('\n');
  const re = /^\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\] onion: removing duplicates: +\d+ MB processed \( *\d+\.\d\d%\)\t +\d+ MB RAM used$/;
  assert.ok(progress.length >= 2 && progress.every((l) => re.test(l)), stderr);
  assert.match(progress[progress.length - 1], /\(100\.00%\)/);
  assert.is(cli(['onion', '-q', '-s', vertFile]).stderr, '');
});

const API_CASES: [string, ParagraphFilterOptions][] = [
  ['spam.onion-n5-t05.flags.gz', { n: 5, threshold: 0.5 }],
  ['spam.onion-T24.flags.gz', { trimBits: 24 }],
];
for (const [file, o] of API_CASES) {
  test(`API with ngramHash 'onion' ${JSON.stringify(o)}: Onion's flags (${file})`, async () => {
    const flags = asString(await dedupVertical(vert, { ...o, ngramHash: 'onion', keepUniqueShort: false }));
    const want = expected(file);
    assert.is(flags.length, want.length);
    if (flags !== want) assert.unreachable(firstDifference(flags, want));
  });
}

test("two-pass mode: hashgen and hashdup files are Onion's byte for byte; -f (and -f -T 24) gives Onion's flags", () => {
  cli(['onion', 'hashgen', '-q', '-n', '7', '-o', 'h7.', vertFile]);
  cli(['onion', 'hashdup', '-q', '-o', 'dup7', ...Array.from({ length: 10 }, (_, i) => `h7.${i}`)]);
  const sums = fs.readFileSync(path.join(VEC, 'spam.hashgen-n7.sha256'), 'utf8').trim().split('\n');
  assert.is(sums.length, 11);
  for (const l of sums) {
    const [sum, name] = l.split(/\s+/);
    const mine = name === 'dup7' ? 'dup7' : name.replace('7g.', 'h7.');
    assert.is(sha256(fs.readFileSync(path.join(dir, mine))), sum, name);
  }
  const flagsOf = (out: Buffer) => {
    const s = out.toString('latin1');
    let f = '';
    for (let at = 0; at < s.length; at = s.indexOf('\n', at) + 1) f += s[at];
    return f;
  };
  const a = cli(['onion', '-f', 'dup7', vertFile]);
  assert.match(a.stderr.split('\n')[0], /\] onion: reading hashes: +\d+ MB processed \(100\.00%\)\t/);
  const fa = flagsOf(a.stdout), wa = expected('spam.onion.flags.gz'); // Onion: -f changes nothing here
  if (fa !== wa) assert.unreachable(firstDifference(fa, wa));
  const fb = flagsOf(cli(['onion', '-q', '-T', '24', '-f', 'dup7', vertFile]).stdout);
  const wb = expected('spam.onion-f-T24.flags.gz');
  if (fb !== wb) assert.unreachable(firstDifference(fb, wb));
  assert.ok(fs.readdirSync(dir).every((f) => !f.includes('neardup-tmp')), 'no temporary files left');
});

test('CLI errors: a missing -f file, a hash file with a partial hash, hashdup without input', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir });
  let r = run(['onion', '-q', '-f', 'no-such-file', vertFile]);
  assert.is(r.status, 1);
  assert.match(r.stderr.toString(), /no-such-file/);
  fs.writeFileSync(path.join(dir, 'bad.hashes'), Buffer.alloc(12));
  r = run(['onion', '-q', '-f', 'bad.hashes', vertFile]);
  assert.is(r.status, 1);
  assert.match(r.stderr.toString(), /bad\.hashes.*partial hash at byte offset 8/);
  r = run(['onion', 'hashdup', 'bad.hashes']);
  assert.is(r.status, 1);
  assert.match(r.stderr.toString(), /not a multiple of 8/);
  r = run(['onion', 'hashdup']);
  assert.is(r.status, 2);
  r = run(['onion', 'hashdup', '-o', 'bad.hashes', 'bad.hashes']);
  assert.is(r.status, 1);
  assert.match(r.stderr.toString(), /refusing to overwrite an input/);
  assert.is(fs.statSync(path.join(dir, 'bad.hashes')).size, 12);
});

async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  let err: unknown = null;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof Error, 'expected a rejection');
  assert.match((err as Error).message, re);
}

test("API: ngramHash 'onion' options are checked", async () => {
  assert.throws(() => new ParagraphFilter({ trimBits: 32 }), RangeError);
  assert.throws(() => new ParagraphFilter({ ngramHash: 'onion', trimBits: 0 }), RangeError);
  assert.throws(() => new ParagraphFilter({ ngramHash: 'onion', trimBits: 65 }), RangeError);
  const plain = new ParagraphFilter();
  await rejects(plain.addDuplicateNgrams(new Uint8Array(8)), /ngramHash: 'onion'/);
  plain.close();
  const f = new ParagraphFilter({ ngramHash: 'onion' });
  await rejects(f.addDuplicateNgrams(new Uint8Array(9)), /8 bytes each/);
  assert.is(await f.addDuplicateNgrams(new Uint8Array(16)), 1); // two zero hashes: one key
  await rejects(f.saveSeen(path.join(dir, 'x.seen')), /not available/);
  await f.pushVertical('<doc>\na\n</doc>\n', false);
  await rejects(f.addDuplicateNgrams(new Uint8Array(8)), /before the first document/);
  f.close();
});

test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

test.run();
