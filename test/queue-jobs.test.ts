// The worker trusts no job (lib/scale/queue-task.ts checkJob): anyone who can write to the workers' Redis can add
// jobs, so crafted ones are added to a real redis-server (a loopback port of its own) and must each fail with
// a clear reason, writing nothing: a similar-part whose `out` is outside the index folder (absolute, '..', a
// symbolic link out, another file of the index), bad numbers, unknown kinds and names, a dedup stage that is
// no stage. The worker survives them all and still serves a valid job. Skipped without redis-server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort, waitFor } from './helpers/processes';

const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');
const haveRedis = spawnSync('redis-server', ['--version']).status === 0;
if (!haveRedis && process.env.NEARDUP_REQUIRE_REDIS) throw new Error('redis-server is missing (CI installs the Debian package redis-server)');
const QUEUE = 'jobs-test';
let dir = '';
let url = '';
const procs: ChildProcess[] = [];

test.after(async () => {
  for (const p of procs.reverse()) {
    if (p.exitCode === null && p.signalCode === null) await new Promise<void>((resolve) => { p.once('exit', () => resolve()); p.kill('SIGTERM'); });
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('crafted jobs fail with a clear reason and write nothing; the worker survives and serves valid jobs', async () => {
  if (!haveRedis) {
    console.log('  (skipped: redis-server is not installed; apt-get install redis-server)');
    return;
  }
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-jobs-')));
  fs.mkdirSync(path.join(dir, 'redis'));
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', path.join(dir, 'redis'), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(redis);
  await waitFor(redis, /Ready to accept connections/, 'redis-server');
  url = `redis://127.0.0.1:${port}`;
  // a prepared chunk-similarity build of 2 parts: what a real similar-part job works on
  fs.writeFileSync(path.join(dir, 'docs.jsonl'), Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({ id: i, text: `document ${i} words ${i % 5} ${i % 7} ${i % 3} shared part of the text ${i % 4}` })).join('\n') + '\n');
  const index = path.join(dir, 'ix');
  const prep = spawnSync(process.execPath, [MAIN, 'similar', 'stage', 'prepare', 'docs.jsonl', '--index', index, '--n', '3', '--parts', '2'], { cwd: dir, encoding: 'utf8' });
  assert.is(prep.status, 0, prep.stderr);
  const victim = path.join(dir, 'victim.txt');
  fs.writeFileSync(victim, 'precious');
  fs.symlinkSync(victim, path.join(index, 'pairs-1.ckp'));

  const worker = spawn(process.execPath, [MAIN, 'worker', '--redis', url, '--queue', QUEUE, '--lock-duration', '1500'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(worker);
  await waitFor(worker, /serving queue/, 'worker');

  const { Queue, QueueEvents } = await import('bullmq');
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const queue = new Queue(QUEUE, { connection });
  const events = new QueueEvents(QUEUE, { connection });
  await events.waitUntilReady();
  const runJob = async (name: string, data: unknown): Promise<{ ok: boolean; reason: string }> => {
    const job = await queue.add(name, data, { attempts: 1 });
    try {
      await job.waitUntilFinished(events, 30_000);
      return { ok: true, reason: '' };
    } catch (e) {
      return { ok: false, reason: (e as Error).message };
    }
  };
  // a folder with a (never read) passages plan: the passages jobs' other fields are checked there
  const pw = path.join(dir, 'pw');
  fs.mkdirSync(pw);
  fs.writeFileSync(path.join(pw, 'passages-plan.json'), '{}');
  const part = (extra: Record<string, unknown>) => ({ kind: 'similar-part', index, part: 0, parts: 2, out: path.join(index, 'pairs-0.ckp'), ...extra });
  try {
    const crafted: Array<[string, string, unknown, RegExp]> = [
      ['out: an absolute path elsewhere', 'task', part({ out: victim }), /refused job: out '.*victim\.txt' is outside the job's folder/],
      ['out: ..', 'task', part({ out: `${index}/../victim.txt` }), /refused job: out .* contains '\.\.'/],
      ['out: a symbolic link out', 'task', part({ part: 1, out: path.join(index, 'pairs-1.ckp') }), /refused job: out .* is a symbolic link/],
      ['out: another file of the index', 'task', part({ out: path.join(index, 'MANIFEST') }), /refused job: out .* must be .*pairs-0\.ckp/],
      ['index: a relative path', 'task', part({ index: 'ix' }), /refused job: index 'ix' is not an absolute path/],
      ['memory: negative', 'task', part({ memory: -1 }), /refused job: memory must be an integer/],
      ['memory: a string', 'task', part({ memory: '1G' }), /refused job: memory must be an integer/],
      ['part: out of range', 'task', part({ part: 5 }), /refused job: parts must be an integer from 6/],
      ['tmp: not a folder', 'task', part({ tmp: victim }), /refused job: tmp .* is not a folder/],
      ['an unknown field', 'task', part({ shell: 'rm -rf /' }), /refused job: unknown field 'shell'/],
      ['an unknown kind', 'task', { kind: 'delete-everything', work: dir }, /refused job: unknown job kind "delete-everything"/],
      ['an unknown name', 'evil', part({}), /refused job: unknown job name "evil"/],
      ['data: not an object', 'task', 'x', /refused job: the job data is not an object/],
      ['a dedup stage that is none', 'task', { work: dir, stage: 'rm', shard: 0 }, /refused job: unknown dedup stage "rm"/],
      ['a dedup stage without a plan', 'task', { work: index, stage: 'signatures', shard: 0 }, /refused job: the work folder .* holds no plan\.json/],
      ['a dedup shard that is not a number', 'task', { work: dir, stage: 'signatures', shard: '0; x' }, /refused job: shard must be an integer/],
      ['a passages part without a plan', 'task', { kind: 'passages-part', work: index, part: 0 }, /refused job: the work folder .* holds no passages-plan\.json/],
      ['a passages part: a relative folder', 'task', { kind: 'passages-part', work: 'w', part: 0 }, /refused job: work 'w' is not an absolute path/],
      ['a passages part: part not a number', 'task', { kind: 'passages-part', work: pw, part: 'x' }, /refused job: part must be an integer/],
      ['a passages part: an unknown field', 'task', { kind: 'passages-part', work: pw, part: 0, out: victim }, /refused job: unknown field 'out'/],
      ['passages lists without a plan', 'task', { kind: 'passages-lists', work: index, range: 0 }, /refused job: the work folder .* holds no passages-plan\.json/],
      ['passages lists: range negative', 'task', { kind: 'passages-lists', work: pw, range: -1 }, /refused job: range must be an integer/],
    ];
    for (const [what, name, data, re] of crafted) {
      const r = await runJob(name, data);
      assert.not.ok(r.ok, `${what}: the job succeeded`);
      assert.match(r.reason, re, what);
    }
    assert.is(fs.readFileSync(victim, 'utf8'), 'precious', 'the file outside is untouched');
    assert.not.ok(fs.existsSync(path.join(index, 'pairs-0.ckp')), 'no crafted job wrote a pairs file');
    assert.is(worker.exitCode, null, 'the worker is still running');
    // and a valid job still runs
    const good = await runJob('task', part({}));
    assert.ok(good.ok, good.reason);
    assert.ok(fs.statSync(path.join(index, 'pairs-0.ckp')).size > 0);
  } finally {
    await queue.close();
    await events.close();
  }
});

test.run();
