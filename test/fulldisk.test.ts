// A full disk: every writer fails with a clear ERR_NEARDUP_IO error naming the file, leaves the previous file
// under the final name untouched, and leaves no temporary file behind. Uses a 64 KiB tmpfs (needs root and
// mount permission, as on CI; skipped with a message elsewhere).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { LshIndex, SimhashIndex } from '../lib/index';
import { cli } from './cli-helper';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-full-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]).status === 0;
if (!mounted) console.log(`  (fulldisk: cannot mount a tmpfs here; skipped)`);
const t = mounted ? test : test.skip;

function prepare(name: string): string {
  for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f), { force: true });
  const p = path.join(dir, name);
  fs.writeFileSync(p, 'previous contents');
  return p;
}

async function expectNoSpace(save: Promise<void>, name: RegExp) {
  try {
    await save;
    assert.unreachable('save should fail');
  } catch (e) {
    assert.is((e as { code?: string }).code, 'ERR_NEARDUP_IO');
    assert.match((e as Error).message, /No space left on device/);
    assert.match((e as Error).message, name);
  }
}

function assertIntact(p: string) {
  assert.is(fs.readFileSync(p, 'utf8'), 'previous contents', 'the previous file is untouched');
  assert.equal(fs.readdirSync(dir), [path.basename(p)], 'no temporary file is left behind');
}

t('neardup minhash -o on a full disk', () => {
  const out = prepare('out.hash');
  const input = Array.from({ length: 200 }, (_, i) => JSON.stringify({ text: `document number ${i} with some words` })).join('\n');
  const r = cli(os.tmpdir(), ['minhash', '--profile', 'doubri-v1', '--format', 'doubri', '-o', out], input);
  assert.is(r.code, 1);
  assert.match(r.stderr, /No space left on device/);
  assert.match(r.stderr, /out\.hash/);
  assertIntact(out);
});

t('SimhashIndex.save on a full disk', async () => {
  const out = prepare('index.simh');
  const n = 20000;
  const ids = new BigUint64Array(n), fps = new BigUint64Array(n);
  for (let i = 0; i < n; i++) { ids[i] = BigInt(i); fps[i] = BigInt.asUintN(64, BigInt(i) * 0x9e3779b97f4a7c15n); }
  const index = new SimhashIndex({ blocks: 6, distance: 3 });
  index.insert(ids, fps);
  try {
    await expectNoSpace(index.save(out), /index\.simh/);
  } finally {
    index.close();
  }
  assertIntact(out);
});

t('LshIndex.save on a full disk', async () => {
  const out = prepare('index.lsh');
  const n = 2000, k = 128;
  const sig = new Uint32Array(n * k);
  for (let i = 0; i < sig.length; i++) sig[i] = Math.imul(i + 1, 2654435761) >>> 0;
  const index = new LshIndex({ numPerm: k, b: 16, r: 8 });
  await index.insert(Array.from({ length: n }, (_, i) => i), sig);
  try {
    await expectNoSpace(index.save(out), /index\.lsh/);
  } finally {
    index.close();
  }
  assertIntact(out);
});

function jsonlCorpus(n: number): string {
  return Array.from({ length: n }, (_, i) => JSON.stringify({ text: `document number ${i} with some words` })).join('\n') + '\n';
}

t('neardup dedup --flags / --kept on a full disk: names the file and ENOSPC, the old file stays', () => {
  const input = path.join(os.tmpdir(), `neardup-full-input-${process.pid}.jsonl`);
  fs.writeFileSync(input, jsonlCorpus(40000));  // 80 KB of flags, more than the 64 KiB disk
  try {
    for (const opt of ['--flags', '--kept']) {
      const out = prepare('out.txt');
      const r = cli(os.tmpdir(), ['dedup', input, opt, out]);
      assert.is(r.code, 1, r.stderr);
      assert.match(r.stderr, /No space left on device \(ENOSPC\)/);
      assert.match(r.stderr, /out\.txt/);
      assert.not.match(r.stderr, /internal error|    at /);
      assertIntact(out);
    }
  } finally {
    fs.rmSync(input, { force: true });
  }
});

t('standard output on a full disk: "standard output" and ENOSPC, no stack trace', () => {
  prepare('x');
  const out = path.join(dir, 'stdout.txt');
  const fd = fs.openSync(out, 'w');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, path.join(__dirname, '..', 'lib', 'cli', 'main.ts'), 'minhash'],
    { input: jsonlCorpus(2000), stdio: ['pipe', fd, 'pipe'] });
  fs.closeSync(fd);
  const stderr = r.stderr.toString();
  assert.is(r.status, 1, stderr);
  assert.match(stderr, /standard output: No space left on device \(ENOSPC\)/);
  assert.not.match(stderr, /internal error|    at /);
});

test.after(() => {
  if (mounted) spawnSync('umount', [dir]);
  fs.rmSync(dir, { recursive: true, force: true });
});

test.run();
