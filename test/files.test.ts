// The user's files: no command overwrites one of its inputs (however it is named), outputs are complete or
// absent, links and modes survive a save, '-' is standard output everywhere, temporary files and spill
// folders never outlive a run (Ctrl-C, SIGTERM, kill -9 then the next run), a closed pipe exits 141.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { LshIndex, readSignatureFile } from '../lib/index';
import { cli } from './cli-helper';
import { OutputFile, checkFiles, cleanStaleSpill, cleanStaleTemps, makeSpillDir, removeSpillDir, resolveTarget } from '../lib/io/files';

const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');
const TSX = pathToFileURL(require.resolve('tsx')).href;
const ARGV = ['--import', TSX, MAIN];

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-files-'));
let n = 0;
function freshDir(): string {
  const d = path.join(root, `t${n++}`);
  fs.mkdirSync(d);
  return d;
}

function corpus(docs: number, seed = 1): string {
  const lines: string[] = [];
  for (let i = 0; i < docs; i++) {
    const base = (i * 7919 + seed) % Math.max(1, Math.floor(docs / 3));  // about a third are repeats
    lines.push(JSON.stringify({ id: i, text: `document ${base} about topic ${base % 17} with words ${base * 31} and more ${base % 5}` }));
  }
  return lines.join('\n') + '\n';
}

/** Runs the CLI with given stdio file descriptors (stdin/stdout redirected to files). */
function cliFds(cwd: string, args: string[], stdin: number | 'pipe', stdout: number | 'pipe', input?: string) {
  const r = spawnSync(process.execPath, [...ARGV, ...args], { cwd, stdio: [stdin, stdout, 'pipe'], input, maxBuffer: 1 << 28 });
  return { code: r.status ?? -1, stderr: r.stderr.toString(), stdout: r.stdout?.toString() ?? '' };
}

/** Sets a path's modification time `seconds` into the past (a stale entry is at least 5 s old: io::kMinStaleAge). */
function age(p: string, seconds = 60): void {
  const t = new Date(Date.now() - seconds * 1000);
  fs.utimesSync(p, t, t);
}

function snapshot(p: string): { data: Buffer; mode: number } {
  return { data: fs.readFileSync(p), mode: fs.statSync(p).mode };
}

// ---------------------------------------------------------------------------------------------------------
// An output that is an input is refused before anything is read or written.

test('dedup --flags / --kept / --clusters / --pairs on the input itself: refused, input untouched', () => {
  const dir = freshDir();
  const d = path.join(dir, 'd.jsonl');
  fs.writeFileSync(d, corpus(50));
  const before = snapshot(d);
  for (const opt of ['--flags', '--kept', '--clusters', '--pairs']) {
    const r = cli(dir, ['dedup', 'd.jsonl', opt, 'd.jsonl']);
    assert.is(r.code, 1, `${opt}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`${opt} 'd\\.jsonl' is the input 'd\\.jsonl'`));
    assert.not.match(r.stderr, /internal error|    at /);
    assert.equal(fs.readFileSync(d), before.data, `${opt} left the input as it was`);
  }
  assert.equal(fs.readdirSync(dir), ['d.jsonl'], 'nothing else was written');
});

test('a hard link, a symbolic link and a ./ spelling of the input count as the input', () => {
  const dir = freshDir();
  const d = path.join(dir, 'd.jsonl');
  fs.writeFileSync(d, corpus(40));
  const before = fs.readFileSync(d);
  fs.linkSync(d, path.join(dir, 'hard.jsonl'));
  fs.symlinkSync('d.jsonl', path.join(dir, 'soft.jsonl'));
  for (const [opt, out] of [['--kept', 'hard.jsonl'], ['--flags', 'soft.jsonl'], ['--clusters', './d.jsonl']]) {
    const r = cli(dir, ['dedup', 'd.jsonl', opt, out]);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /is the input/);
    assert.equal(fs.readFileSync(d), before);
  }
  assert.ok(fs.lstatSync(path.join(dir, 'soft.jsonl')).isSymbolicLink());
  // The other way round: the input given through the link, the output as the real name.
  const r = cli(dir, ['dedup', 'soft.jsonl', '--kept', 'd.jsonl']);
  assert.is(r.code, 1);
  assert.equal(fs.readFileSync(d), before);
});

test('stdin and stdout redirected from/to an input are inputs/outputs too', () => {
  const dir = freshDir();
  const d = path.join(dir, 'd.jsonl');
  fs.writeFileSync(d, corpus(40));
  const before = fs.readFileSync(d);
  // neardup dedup --flags d.jsonl < d.jsonl
  let fd = fs.openSync(d, 'r');
  let r = cliFds(dir, ['dedup', '--flags', 'd.jsonl'], fd, 'pipe');
  fs.closeSync(fd);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /--flags 'd\.jsonl' is the input standard input/);
  assert.equal(fs.readFileSync(d), before);
  // neardup shingles d.jsonl >> d.jsonl (would grow forever)
  fd = fs.openSync(d, 'a');
  r = cliFds(dir, ['shingles', 'd.jsonl'], 'pipe', fd);
  fs.closeSync(fd);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /standard output is the input 'd\.jsonl'/);
  assert.equal(fs.readFileSync(d), before);
});

test('passages query and dupi like/blot refuse a standard output that is one of their inputs', () => {
  const dir = freshDir();
  const d = path.join(dir, 'd.jsonl');
  fs.writeFileSync(d, corpus(20));
  assert.is(cli(dir, ['passages', 'index', '-o', 'pix', 'd.jsonl']).code, 0);
  assert.is(cli(dir, ['dupi', '-r', 'dix', 'index', 'd.jsonl']).code, 0);
  const before = fs.readFileSync(d);
  for (const args of [['passages', 'query', 'pix', 'd.jsonl'], ['dupi', '-r', 'dix', 'like', 'd.jsonl'], ['dupi', '-r', 'dix', 'blot', 'd.jsonl']]) {
    const fd = fs.openSync(d, 'a');
    const r = cliFds(dir, args, 'pipe', fd);
    fs.closeSync(fd);
    assert.is(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /standard output is the input 'd\.jsonl'/);
    assert.equal(fs.readFileSync(d), before);
  }
});

test('every command checks: minhash -o, doubri minhash, paragraphs --save-seen, two outputs in one file', () => {
  const dir = freshDir();
  const d = path.join(dir, 'd.jsonl');
  fs.writeFileSync(d, corpus(30));
  const before = fs.readFileSync(d);
  let r = cli(dir, ['minhash', 'd.jsonl', '-o', 'd.jsonl']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /-o 'd\.jsonl' is the input/);
  r = cli(dir, ['paragraphs', '--format', 'jsonl', 'd.jsonl', '--save-seen', 'd.jsonl']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /--save-seen 'd\.jsonl' is the input/);
  const fd = fs.openSync(d, 'r');
  const r2 = cliFds(dir, ['doubri', 'minhash', 'd.jsonl'], fd, 'pipe');
  fs.closeSync(fd);
  assert.is(r2.code, 1, r2.stderr);
  assert.match(r2.stderr, /is the input standard input/);
  assert.equal(fs.readFileSync(d), before);
  r = cli(dir, ['dedup', 'd.jsonl', '--flags', 'x.txt', '--clusters', 'x.txt']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /--clusters 'x\.txt' and --flags 'x\.txt' are the same file/);
  assert.equal(fs.readdirSync(dir), ['d.jsonl']);
  // --load-seen X --save-seen X is an update of X: allowed (read first, replaced atomically).
  fs.writeFileSync(path.join(dir, 'p.txt'), 'one paragraph here with enough words to count\n');
  r = cli(dir, ['paragraphs', 'p.txt', '--save-seen', 'seen.bin']);
  assert.is(r.code, 0, r.stderr);
  r = cli(dir, ['paragraphs', 'p.txt', '--load-seen', 'seen.bin', '--save-seen', 'seen.bin']);
  assert.is(r.code, 0, r.stderr);
});

test('checkFiles in process: inputs vs outputs by inode, missing files, replaceable inputs, distinct outputs', () => {
  const dir = freshDir();
  const a = path.join(dir, 'a'), b = path.join(dir, 'b');
  fs.writeFileSync(a, 'x');
  fs.writeFileSync(b, 'y');
  fs.linkSync(a, path.join(dir, 'a-hard'));
  const refuse = (plan: Parameters<typeof checkFiles>[0], re: RegExp) => {
    try {
      checkFiles(plan);
      assert.unreachable('should refuse');
    } catch (e) {
      assert.is((e as { code?: string }).code, 'ERR_NEARDUP_INVALID_ARGUMENT');
      assert.match((e as Error).message, re);
    }
  };
  checkFiles({ inputs: [a], outputs: [{ option: '-o', file: b }] });
  checkFiles({ inputs: [a, path.join(dir, 'missing')], outputs: [{ option: '-o', file: path.join(dir, 'new') }] });
  refuse({ inputs: [a], outputs: [{ option: '-o', file: path.join(dir, 'a-hard') }] }, /-o '.*a-hard' is the input/);
  refuse({ inputs: [b, a], outputs: [{ option: '--x', file: b }] }, /--x '.*b' is the input '.*b'/);
  checkFiles({ inputs: [a], outputs: [{ option: '--save', file: a }], replaceable: [a] });
  refuse({ inputs: [], outputs: [{ option: '--p', file: path.join(dir, 'n') }, { option: '--q', file: path.join(dir, '.', 'n') }] }, /same file/);
  fs.symlinkSync('n2', path.join(dir, 'dangling'));
  refuse({ inputs: [], outputs: [{ option: '--p', file: path.join(dir, 'n2') }, { option: '--q', file: path.join(dir, 'dangling') }] }, /same file/);
  assert.is(resolveTarget(path.join(dir, 'dangling')), path.join(dir, 'n2'));
  fs.symlinkSync('loop', path.join(dir, 'loop'));
  assert.throws(() => resolveTarget(path.join(dir, 'loop')), /ELOOP/);
});

test('OutputFile in process: commit replaces atomically, abort keeps the old file, stale temps of dead PIDs go', async () => {
  const dir = freshDir();
  const p = path.join(dir, 'out.txt');
  fs.writeFileSync(p, 'old');
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  fs.writeFileSync(path.join(dir, `.out.txt.neardup-tmp-${dead}-abcdef`), 'stale');
  fs.writeFileSync(path.join(dir, `.out.txt.neardup-tmp-${dead}-XYZ`), 'not our name pattern');
  for (const f of fs.readdirSync(dir)) age(path.join(dir, f));
  const o = OutputFile.open(p);
  const names = fs.readdirSync(dir).sort();
  assert.ok(!names.includes(`.out.txt.neardup-tmp-${dead}-abcdef`), 'stale temp removed');
  const mine = names.filter((f) => f.startsWith(`.out.txt.neardup-tmp-${process.pid}-`));
  assert.is(mine.length, 1);
  assert.match(mine[0], /-[0-9a-f]{16}$/);
  assert.is(fs.statSync(path.join(dir, mine[0])).mode & 0o777, 0o600);
  await o.write('new ');
  await o.write(Buffer.from('data'));
  assert.is(fs.readFileSync(p, 'utf8'), 'old', 'not visible before commit');
  await o.commit();
  assert.is(fs.readFileSync(p, 'utf8'), 'new data');
  const q = OutputFile.open(p);
  await q.write('half');
  q.abort();
  assert.is(fs.readFileSync(p, 'utf8'), 'new data');
  assert.equal(fs.readdirSync(dir).sort(), [`.out.txt.neardup-tmp-${dead}-XYZ`, 'out.txt']);
  assert.is(cleanStaleTemps(dir), 0);
});

// ---------------------------------------------------------------------------------------------------------
// Where outputs go: '-', devices, links, modes.

test("'-' is standard output for dedup outputs (summary then on stderr) and for binary minhash -o", () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(60));
  const a = cli(dir, ['dedup', 'd.jsonl', '--flags', 'flags.txt']);
  assert.is(a.code, 0, a.stderr);
  const b = cli(dir, ['dedup', 'd.jsonl', '--flags', '-']);
  assert.is(b.code, 0, b.stderr);
  assert.is(b.stdout.toString(), fs.readFileSync(path.join(dir, 'flags.txt'), 'utf8'));
  assert.ok(JSON.parse(b.stderr.trim().split('\n').pop()!).documents === 60, 'the summary is on stderr');
  const c = cli(dir, ['minhash', 'd.jsonl', '-o', 'sig.bin']);
  assert.is(c.code, 0, c.stderr);
  const e = cli(dir, ['minhash', 'd.jsonl', '-o', '-']);
  assert.is(e.code, 0, e.stderr);
  assert.equal(e.stdout, fs.readFileSync(path.join(dir, 'sig.bin')), 'the same bytes as the file');
  assert.is(readSignatureFile(path.join(dir, 'sig.bin')).count, 60);
  // doubri minhash '-' too
  const f = cli(dir, ['doubri', 'minhash', '-'], fs.readFileSync(path.join(dir, 'd.jsonl')));
  assert.is(f.code, 0, f.stderr);
  assert.is(f.stdout.subarray(0, 7).toString(), 'MinHash');
  assert.equal(fs.readdirSync(dir).sort(), ['d.jsonl', 'flags.txt', 'sig.bin']);
});

test('an output that is a symbolic link: the target is written, the link stays (JS and native writers)', () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(30));
  fs.mkdirSync(path.join(dir, 'real'));
  fs.writeFileSync(path.join(dir, 'real', 'flags.txt'), 'old');
  fs.symlinkSync('real/flags.txt', path.join(dir, 'flags-link'));
  fs.symlinkSync(path.join(dir, 'real', 'sig.bin'), path.join(dir, 'sig-link'));  // dangling: created there
  let r = cli(dir, ['dedup', 'd.jsonl', '--flags', 'flags-link']);
  assert.is(r.code, 0, r.stderr);
  assert.ok(fs.lstatSync(path.join(dir, 'flags-link')).isSymbolicLink(), 'the link is still a link');
  assert.is(fs.readFileSync(path.join(dir, 'real', 'flags.txt'), 'utf8').split('\n').length, 31);
  r = cli(dir, ['minhash', 'd.jsonl', '-o', 'sig-link']);
  assert.is(r.code, 0, r.stderr);
  assert.ok(fs.lstatSync(path.join(dir, 'sig-link')).isSymbolicLink());
  assert.is(readSignatureFile(path.join(dir, 'real', 'sig.bin')).count, 30);
  assert.equal(fs.readdirSync(path.join(dir, 'real')).sort(), ['flags.txt', 'sig.bin'], 'no temporary file left');
});

test('a link to standard output (like /dev/stdout) is written in place and stays a link', () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(30));
  // Our own link to /proc/self/fd/1 in a temp folder: the same kind of "magic" link as /dev/stdout, without
  // ever risking the machine's /dev/stdout.
  fs.symlinkSync('/proc/self/fd/1', path.join(dir, 'out-link'));
  const ref = cli(dir, ['minhash', 'd.jsonl', '-o', 'ref.bin']);
  assert.is(ref.code, 0, ref.stderr);
  const r = cli(dir, ['minhash', 'd.jsonl', '-o', 'out-link']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.stdout, fs.readFileSync(path.join(dir, 'ref.bin')));
  const f = cli(dir, ['dedup', 'd.jsonl', '--flags', 'out-link']);
  assert.is(f.code, 0, f.stderr);
  assert.match(f.stdout.toString(), /^([01]\n){30}/);
  assert.ok(fs.lstatSync(path.join(dir, 'out-link')).isSymbolicLink());
  // Standard output redirected to a file (> or >>): the link is written through, the redirection kept.
  fs.writeFileSync(path.join(dir, 'log.bin'), 'head:');
  const fd = fs.openSync(path.join(dir, 'log.bin'), 'a');
  const a = cliFds(dir, ['minhash', 'd.jsonl', '-o', 'out-link'], 'pipe', fd);
  fs.closeSync(fd);
  assert.is(a.code, 0, a.stderr);
  assert.equal(fs.readFileSync(path.join(dir, 'log.bin')), Buffer.concat([Buffer.from('head:'), fs.readFileSync(path.join(dir, 'ref.bin'))]));
  assert.ok(fs.lstatSync(path.join(dir, 'out-link')).isSymbolicLink());
  assert.equal(fs.readdirSync(dir).sort(), ['d.jsonl', 'log.bin', 'out-link', 'ref.bin']);
});

test('a FIFO output is written in place (not replaced by a file)', async () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(30));
  const fifo = path.join(dir, 'fifo');
  if (spawnSync('mkfifo', [fifo]).status !== 0) return;
  const child = spawn(process.execPath, [...ARGV, 'dedup', 'd.jsonl', '--clusters', 'fifo'], { cwd: dir, stdio: 'ignore' });
  const chunks: Buffer[] = [];
  for await (const c of fs.createReadStream(fifo)) chunks.push(c as Buffer);
  const code = await new Promise<number>((res) => child.on('close', (c) => res(c ?? -1)));
  assert.is(code, 0);
  assert.is(Buffer.concat(chunks).toString().split('\n').length, 31);
  assert.ok(fs.lstatSync(fifo).isFIFO());
});

test('re-saving keeps the mode of the file replaced (JS writer, signature file, LshIndex.save)', async () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(30));
  for (const [args, out] of [[['dedup', 'd.jsonl', '--flags', 'f.txt'], 'f.txt'], [['minhash', 'd.jsonl', '-o', 's.bin'], 's.bin']] as const) {
    assert.is(cli(dir, [...args]).code, 0);
    fs.chmodSync(path.join(dir, out), 0o600);
    assert.is(cli(dir, [...args]).code, 0);
    assert.is(fs.statSync(path.join(dir, out)).mode & 0o777, 0o600, out);
    fs.chmodSync(path.join(dir, out), 0o640);
    assert.is(cli(dir, [...args]).code, 0);
    assert.is(fs.statSync(path.join(dir, out)).mode & 0o777, 0o640, out);
  }
  const index = new LshIndex({ numPerm: 16, b: 4, r: 4 });
  try {
    const p = path.join(dir, 'i.lsh');
    await index.save(p);
    fs.chmodSync(p, 0o600);
    await index.save(p);
    assert.is(fs.statSync(p).mode & 0o777, 0o600);
    fs.symlinkSync('i.lsh', path.join(dir, 'i-link'));
    await index.save(path.join(dir, 'i-link'));
    assert.ok(fs.lstatSync(path.join(dir, 'i-link')).isSymbolicLink());
  } finally {
    index.close();
  }
  assert.equal(fs.readdirSync(dir).filter((f) => f.startsWith('.')), []);
});

// ---------------------------------------------------------------------------------------------------------
// Temporary files and spill folders.

function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  return new Promise((res) => {
    const t0 = Date.now();
    const tick = () => {
      if (cond()) return res(true);
      if (Date.now() - t0 > ms) return res(false);
      setTimeout(tick, 20);
    };
    tick();
  });
}

function spillDirs(tmp: string): string[] {
  return fs.readdirSync(tmp).filter((f) => f.startsWith('neardup-spill-'));
}

function spillFiles(tmp: string): number {
  return spillDirs(tmp).reduce((s, d) => {
    try { return s + fs.readdirSync(path.join(tmp, d)).length; } catch { return s; }
  }, 0);
}

for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
  test(`${signal} during dedup --memory: exit ${status}, no spill file and no temporary output left`, async () => {
    const dir = freshDir();
    const tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp);
    fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(40000));
    fs.writeFileSync(path.join(dir, 'flags.txt'), 'previous');
    const child = spawn(process.execPath, [...ARGV, 'dedup', 'd.jsonl', '--memory', '1K', '--tmp', tmp, '--flags', 'flags.txt'],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const closed = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    const spilling = await waitFor(() => spillFiles(tmp) > 0, 60000);
    assert.ok(spilling, 'the run spilled');
    child.kill(signal);
    const code = await closed;
    assert.is(code, status, stderr);
    assert.equal(fs.readdirSync(tmp), [], 'the spill folder is gone');
    assert.equal(fs.readdirSync(dir).sort(), ['d.jsonl', 'flags.txt', 'tmp']);
    assert.is(fs.readFileSync(path.join(dir, 'flags.txt'), 'utf8'), 'previous');
  });
}

for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  test(`${signal} during passages pairs --memory: exit ${status}, no spill file left`, async () => {
    const dir = freshDir();
    const tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp);
    fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(40000));
    const ix = cli(dir, ['passages', 'index', '-o', 'pix', 'd.jsonl']);
    assert.is(ix.code, 0, ix.stderr);
    // 1 KiB: the eligible keys in many partitions, one pass over the documents each, a spill file each
    const child = spawn(process.execPath, [...ARGV, 'passages', 'pairs', 'pix', '--memory', '1K', '--tmp', tmp],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const closed = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    const spilling = await waitFor(() => spillFiles(tmp) > 0, 60000);
    assert.ok(spilling, 'the run spilled');
    child.kill(signal);
    const code = await closed;
    assert.is(code, status, stderr);
    assert.equal(fs.readdirSync(tmp), [], 'the spill folder is gone');
  });
}

test('SIGTERM in the middle of a long native step (the counting of similar build): exit 143 within seconds', async () => {
  const dir = freshDir();
  // 40,000 documents of 8 out of 60 stock sentences each: every document shares chunks with thousands of
  // others, so the counting is one native call of many seconds
  let seed = 7;
  const rnd = () => { seed = (seed * 48271) % 2147483647; return seed / 2147483647; };
  const stock = Array.from({ length: 60 }, (_, i) => Array.from({ length: 14 }, (_, w) => `w${(i * 131 + w * 17) % 997}x${w}`).join(' '));
  const lines: string[] = [];
  for (let i = 0; i < 40000; i++) {
    const parts: string[] = [`doc${i}`];
    for (let k = 0; k < 8; k++) parts.push(stock[Math.floor(rnd() * stock.length)]);
    lines.push(JSON.stringify({ id: i, text: parts.join(' . ') }));
  }
  fs.writeFileSync(path.join(dir, 'd.jsonl'), lines.join('\n') + '\n');
  const child = spawn(process.execPath, [...ARGV, 'similar', 'build', 'd.jsonl', '--index', 'ix', '--k', '10'],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NEARDUP_CHUNKS_TIMING: '1' } });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const closed = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
  assert.ok(await waitFor(() => /shared lists (loaded|spilled)/.test(stderr), 120000), `the run got to the counting: ${stderr}`);
  const t0 = Date.now();
  child.kill('SIGTERM');
  const code = await closed;
  const took = Date.now() - t0;
  assert.is(code, 143, stderr);
  assert.not.match(stderr, /counted/, 'the counting was stopped, not finished');
  assert.ok(took < 3000, `exited ${took} ms after SIGTERM`);
});

test('SIGINT while the addon writes minhash -o: exit 130, its temporary file removed, the old file kept', async () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(60000));
  fs.writeFileSync(path.join(dir, 'sig.bin'), 'previous');
  const child = spawn(process.execPath, [...ARGV, 'minhash', '--profile', 'doubri-v1', 'd.jsonl', '-o', 'sig.bin'],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const closed = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
  const temp = () => fs.readdirSync(dir).filter((f) => f.startsWith('.sig.bin.neardup-tmp-'));
  assert.ok(await waitFor(() => temp().length > 0, 60000), "the addon started writing");
  child.kill('SIGINT');
  assert.is(await closed, 130, stderr);
  assert.equal(fs.readdirSync(dir).sort(), ['d.jsonl', 'sig.bin']);
  assert.is(fs.readFileSync(path.join(dir, 'sig.bin'), 'utf8'), 'previous');
});

test('kill -9 while --kept is written: kept.jsonl is the previous file, never a shorter one; the next run cleans up', async () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(150000));
  fs.writeFileSync(path.join(dir, 'kept.jsonl'), 'previous');
  const child = spawn(process.execPath, [...ARGV, 'dedup', 'd.jsonl', '--kept', 'kept.jsonl'], { cwd: dir, stdio: 'ignore' });
  const closed = new Promise<void>((res) => child.on('close', () => res()));
  const temps = () => fs.readdirSync(dir).filter((f) => f.startsWith('.kept.jsonl.neardup-tmp-'));
  const writing = await waitFor(() => temps().length > 0, 120000);
  child.kill('SIGKILL');
  await closed;
  assert.ok(writing, 'the run got to writing --kept');
  assert.is(fs.readFileSync(path.join(dir, 'kept.jsonl'), 'utf8'), 'previous');
  // The next run (any output in that folder) removes the dead run's temporary file (killed just now: aged past
  // the 5 s a stale entry must have, or a fast next run would rightly leave it)
  for (const f of temps()) age(path.join(dir, f));
  const r = cli(dir, ['dedup', 'd.jsonl', '--flags', 'flags.txt']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(temps(), []);
});

test('kill -9 leaves a spill folder and temporary files: the next run removes them (not those of live processes)', async () => {
  const dir = freshDir();
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(40000));
  const child = spawn(process.execPath, [...ARGV, 'dedup', 'd.jsonl', '--memory', '1K', '--tmp', tmp], { cwd: dir, stdio: 'ignore' });
  const closed = new Promise<void>((res) => child.on('close', () => res()));
  assert.ok(await waitFor(() => spillFiles(tmp) > 0, 60000));
  child.kill('SIGKILL');
  await closed;
  const left = spillDirs(tmp);
  assert.is(left.length, 1, 'kill -9 leaves the spill folder (nothing can run)');
  assert.match(left[0], new RegExp(`^neardup-spill-${child.pid}-`));
  // Temporary output names of the dead process (as a killed save leaves them), and of a live one (ours).
  const deadTemp = `.flags.txt.neardup-tmp-${child.pid}-0123456789abcdef`;
  const liveTemp = `.flags.txt.neardup-tmp-${process.pid}-0123456789abcdef`;
  const deadNative = `.s.bin.neardup-tmp-${child.pid}-fedcba9876543210`;
  for (const f of [deadTemp, liveTemp, deadNative]) fs.writeFileSync(path.join(dir, f), 'partial');
  fs.mkdirSync(path.join(tmp, `neardup-spill-${process.pid}-live`));
  for (const f of [deadTemp, liveTemp, deadNative]) age(path.join(dir, f));
  for (const f of spillDirs(tmp)) age(path.join(tmp, f));  // killed just now: older than 5 s for the sweep
  const small = path.join(dir, 'small.jsonl');
  fs.writeFileSync(small, corpus(20));
  let r = cli(dir, ['dedup', 'small.jsonl', '--memory', '1K', '--tmp', tmp, '--flags', 'flags.txt']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(spillDirs(tmp), [`neardup-spill-${process.pid}-live`], 'the dead run\'s folder is gone, the live one stays');
  assert.ok(!fs.existsSync(path.join(dir, deadTemp)));
  assert.ok(fs.existsSync(path.join(dir, liveTemp)));
  // The addon's writer cleans its folder the same way.
  r = cli(dir, ['minhash', 'small.jsonl', '-o', 's.bin']);
  assert.is(r.code, 0, r.stderr);
  assert.ok(!fs.existsSync(path.join(dir, deadNative)));
  fs.rmSync(path.join(dir, liveTemp));
});

test('a live writer in another process is never swept, even under a PID that does not exist here; once it is gone, it is', async () => {
  const dir = freshDir();
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  // Another process writes an output (OutputFile: its temporary file) and holds a spill folder (makeSpillDir),
  // then renames both to names with a PID that does not run here, as a writer in another PID namespace
  // (a container sharing the volume) would look; the locks stay with the open files.
  const child = path.join(dir, 'writer.ts');
  const files = JSON.stringify(path.join(__dirname, '..', 'lib', 'io', 'files.ts'));
  fs.writeFileSync(child, `
    import * as fs from 'node:fs';
    import * as path from 'node:path';
    const { OutputFile, makeSpillDir } = require(${files});
    const o = OutputFile.open(${JSON.stringify(path.join(dir, 'out.txt'))});
    fs.renameSync(o.tmp, ${JSON.stringify(path.join(dir, `.out.txt.neardup-tmp-${dead}-0123456789abcdef`))});
    const d = makeSpillDir(${JSON.stringify(tmp)});
    fs.writeFileSync(path.join(d, 'run-0'), 'spilled');
    fs.renameSync(d, ${JSON.stringify(path.join(tmp, `neardup-spill-${dead}-other`))});
    process.stdout.write('ready\\n');
    setInterval(() => {}, 1000);
  `);
  const w = spawn(process.execPath, ['--import', TSX, child], { stdio: ['ignore', 'pipe', 'inherit'] });
  const closed = new Promise<void>((res) => w.on('close', () => res()));
  let out = '';
  w.stdout!.on('data', (d) => (out += d));
  try {
    assert.ok(await waitFor(() => out.includes('ready'), 60000), 'the writer started');
    const temp = path.join(dir, `.out.txt.neardup-tmp-${dead}-0123456789abcdef`);
    const spill = path.join(tmp, `neardup-spill-${dead}-other`);
    age(temp);
    age(spill);
    assert.is(cleanStaleTemps(dir), 0, 'a locked temporary file stays');
    assert.is(cleanStaleSpill(tmp), 0, 'a locked spill folder stays');
    // the same through the CLI's own sweeps (an output in that folder, a staged output in the temp folder)
    fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(20));
    const r = cli(dir, ['dedup', 'd.jsonl', '--memory', '1K', '--tmp', tmp, '--flags', 'flags.txt']);
    assert.is(r.code, 0, r.stderr);
    assert.ok(fs.existsSync(temp) && fs.existsSync(path.join(spill, 'run-0')));
    // a young unlocked entry of a dead PID stays too (its writer may not have locked it yet)
    const young = path.join(dir, `.out.txt.neardup-tmp-${dead}-fedcba9876543210`);
    fs.writeFileSync(young, '');
    assert.is(cleanStaleTemps(dir), 0);
    w.kill('SIGKILL');
    await closed;
    age(temp);
    age(spill);
    assert.is(cleanStaleTemps(dir), 1, 'the dead writer\'s temporary file goes');
    assert.ok(fs.existsSync(young));
    assert.is(cleanStaleSpill(tmp), 1, 'the dead writer\'s spill folder goes');
    assert.equal(fs.readdirSync(tmp), []);
    // This process's own spill folder: locked while it lives, removed with its lock.
    const mine = makeSpillDir(tmp);
    assert.ok(fs.existsSync(path.join(mine, 'LOCK')));
    removeSpillDir(mine);
    assert.equal(fs.readdirSync(tmp), []);
  } finally {
    w.kill('SIGKILL');
  }
});

test('a failing run (bad input line) leaves no temporary file or spill folder, and the old output', () => {
  const dir = freshDir();
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(200) + 'not json\n');
  fs.writeFileSync(path.join(dir, 'sig.bin'), 'previous');
  let r = cli(dir, ['dedup', 'd.jsonl', '--memory', '1K', '--tmp', tmp, '--flags', 'flags.txt']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /d\.jsonl:201/);
  r = cli(dir, ['minhash', 'd.jsonl', '-o', 'sig.bin']);
  assert.is(r.code, 1);
  assert.equal(fs.readdirSync(tmp), []);
  assert.equal(fs.readdirSync(dir).sort(), ['d.jsonl', 'sig.bin', 'tmp']);
  assert.is(fs.readFileSync(path.join(dir, 'sig.bin'), 'utf8'), 'previous');
});

test('--memory tiny enough to spill every document: bounded open files (ulimit -n 128), same result', () => {
  const dir = freshDir();
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(3000));
  const a = cli(dir, ['dedup', 'd.jsonl', '--clusters', 'mem.txt']);
  assert.is(a.code, 0, a.stderr);
  // One run per document (budget of 1 byte); a low file limit proves runs are not all open at once.
  const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const cmd = `ulimit -n 128 && exec ${[process.execPath, ...ARGV, 'dedup', 'd.jsonl', '--memory', '1', '--tmp', tmp, '--clusters', 'spill.txt'].map(q).join(' ')}`;
  const r = spawnSync('sh', ['-c', cmd], { cwd: dir });
  assert.is(r.status, 0, r.stderr.toString());
  const summary = JSON.parse(r.stdout.toString());
  assert.ok(summary.spilled_bytes > 0);
  assert.ok(summary.runs <= 64, `runs merged down: ${summary.runs}`);
  assert.equal(fs.readFileSync(path.join(dir, 'spill.txt')), fs.readFileSync(path.join(dir, 'mem.txt')));
  assert.equal(fs.readdirSync(tmp), []);
});

// ---------------------------------------------------------------------------------------------------------
// Errors people can act on.

test('a closed stdout pipe: quiet, exit 141 (output was lost)', async () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(20000));
  const child = spawn(process.execPath, [...ARGV, 'minhash', 'd.jsonl'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdout.once('data', () => child.stdout.destroy());  // like `| head -1`
  const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
  assert.is(code, 141);
  assert.is(stderr, '');
});

test('paragraphs and shingles: a closed pipe exits 141 too; a complete run exits 0', async () => {
  const dir = freshDir();
  fs.writeFileSync(path.join(dir, 'd.jsonl'), corpus(20000));
  const child = spawn(process.execPath, [...ARGV, 'shingles', 'd.jsonl'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
  assert.is(code, 141);
  assert.is(cli(dir, ['shingles', 'd.jsonl']).code, 0);
});

test.after(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

test.run();
