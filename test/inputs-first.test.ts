// Inputs are checked before any work (issue 28): every command that reads documents looks at every input
// (exists, not a folder, readable, a format it reads) before it reads the first one, and a failed check
// leaves no output behind: no index folder, no signature file, no flags, nothing on stdout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { checkInputFiles } from '../lib/io/input';

// the built CLI (npm test builds dist/ first), as a user runs it: starts in a fraction of tsx's time
const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
function cli(cwd: string, args: string[]): { code: number; stdout: Buffer; stderr: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd, maxBuffer: 1 << 26, timeout: 60_000, killSignal: 'SIGKILL' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr.toString() };
}

let dir = '';
test.before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-inputs-'));
  // the good first input: enough documents that a command reading it first writes something before the
  // second input is opened (shingles prints as it goes, an index gets its folder)
  const lines: string[] = [];
  for (let i = 0; i < 2000; i++) lines.push(JSON.stringify({ id: i, text: `document ${i} with some words of its own ${i * 7}` }));
  fs.writeFileSync(path.join(dir, 'good.jsonl'), lines.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'data.xz'), Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0, 0, 1, 2, 3]));
  fs.writeFileSync(path.join(dir, 'table.parquet'), Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(16), Buffer.from('PAR1')]));
  fs.mkdirSync(path.join(dir, 'folder'));
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every command that reads documents, with the outputs it would create (relative to dir). */
const COMMANDS: { args: string[]; outputs: string[] }[] = [
  { args: ['dedup', '--flags', 'flags.txt'], outputs: ['flags.txt'] },
  { args: ['minhash', '-o', 'sigs.bin'], outputs: ['sigs.bin'] },
  { args: ['shingles'], outputs: [] },
  { args: ['simhash', 'fingerprint'], outputs: [] },
  { args: ['paragraphs'], outputs: [] },
  { args: ['passages', 'index', '-o', 'pidx'], outputs: ['pidx'] },
  { args: ['passages', 'index', '-o', 'pidx2', '--work', 'pwork', '--shards', '2'], outputs: ['pidx2'] },
  { args: ['similar', 'build', '--index', 'sidx'], outputs: ['sidx'] },
];

const left = (outputs: string[]) => outputs.filter((o) => fs.existsSync(path.join(dir, o)));

for (const [bad, why] of [
  ['missing.jsonl', /cannot open 'missing\.jsonl': No such file or directory/],
  ['folder', /cannot read 'folder': it is a folder/],
  ['data.xz', /data\.xz: xz-compressed input is not read/],
] as const) {
  test(`a bad last input (${bad}) fails every command before it reads the first, and leaves no output`, () => {
    for (const c of COMMANDS) {
      const r = cli(dir, [...c.args, 'good.jsonl', bad]);
      const name = c.args.join(' ');
      assert.is.not(r.code, 0, name);
      assert.match(r.stderr, why, name);
      assert.is(r.stdout.length, 0, `${name}: wrote to stdout before failing`);
      assert.equal(left(c.outputs), [], `${name}: left output behind`);
    }
  });
}

test('commands that read JSONL lines only refuse a Parquet input up front', () => {
  const r = cli(dir, ['similar', 'build', '--index', 'sidx', 'good.jsonl', 'table.parquet']);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /table\.parquet: Parquet input is not read by this command/);
  assert.equal(left(['sidx']), []);
});

test('passages index: a new index that fails on a bad line is removed; an existing one is kept as it was', () => {
  fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"text":"one two three four five six seven eight nine ten"}\nnot json\n');
  const r = cli(dir, ['passages', 'index', '-o', 'fresh', 'bad.jsonl']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /bad\.jsonl:2:/);
  assert.equal(left(['fresh']), []);
  const ok = cli(dir, ['passages', 'index', '-o', 'kept', 'good.jsonl']);
  assert.is(ok.code, 0, ok.stderr);
  const before = fs.readFileSync(path.join(dir, 'kept', 'passages.json'));
  const again = cli(dir, ['passages', 'index', '-o', 'kept', 'bad.jsonl']);
  assert.is(again.code, 1);
  assert.ok(fs.existsSync(path.join(dir, 'kept', 'passages.json')));
  assert.equal(fs.readFileSync(path.join(dir, 'kept', 'passages.json')), before);
  const q = cli(dir, ['passages', 'query', 'kept', 'good.jsonl']);
  assert.is(q.code, 0, q.stderr);
});

test('dedup --memory below the 64 MiB floor of its limits says so on stderr and in the summary', () => {
  const r = cli(dir, ['dedup', 'good.jsonl', '--memory', '1M', '--flags', 'mem-flags.txt']);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stderr, /--memory 1\.0 MiB is below 64\.0 MiB: band keys and signatures spill at 1\.0 MiB/);
  const s = JSON.parse(r.stdout.toString());
  assert.is(s.memory_bytes, 1 << 20);
  assert.is(s.memory_limits_bytes, 64 << 20);
  const big = cli(dir, ['dedup', 'good.jsonl', '--memory', '128M', '--flags', 'mem-flags.txt']);
  assert.not.match(big.stderr, /is below/);
  assert.is(JSON.parse(big.stdout.toString()).memory_limits_bytes, 128 << 20);
  assert.is(JSON.parse(cli(dir, ['dedup', 'good.jsonl', '--flags', 'mem-flags.txt']).stdout.toString()).memory_bytes, null);
});

test('checkInputFiles: standard input and FIFOs are not opened; a missing file is named', () => {
  checkInputFiles(['-']);
  const fifo = path.join(dir, 'fifo');
  try {
    require('node:child_process').execFileSync('mkfifo', [fifo]);
    checkInputFiles([fifo]);  // would block if it opened the FIFO
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;  // no mkfifo: nothing to check
  }
  assert.throws(() => checkInputFiles([path.join(dir, 'nope')]), (e: Error) => /cannot open '.*nope': No such file or directory/.test(e.message));
  assert.throws(() => checkInputFiles([path.join(dir, 'table.parquet')], { parquet: false }), /Parquet input is not read/);
  checkInputFiles([path.join(dir, 'table.parquet')]);
  checkInputFiles([path.join(dir, 'data.xz')], { sniff: false });
});

test.run();
