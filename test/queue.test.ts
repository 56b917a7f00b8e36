// dedup on BullMQ (docs/scale.md): a real redis-server on a loopback port of its own, 1 and 2 `neardup worker`
// processes, `neardup dedup --work --redis` against the single-process outputs; a worker killed (SIGKILL) in
// the middle of a task: the task is taken again (stalled-job recovery) and the outputs are still identical.
// Chunk-similarity parts and passage-index parts (`passages index --shards --redis`, a worker killed in the
// middle of a part too) against the local build.
// Skipped with a message when redis-server is not installed (CI installs it: .ci/run).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { freePort, waitFor } from './helpers/processes';

const test = suite('queue');
const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');
const haveRedis = spawnSync('redis-server', ['--version']).status === 0;
if (!haveRedis && process.env.NEARDUP_REQUIRE_REDIS) throw new Error('redis-server is missing (CI installs the Debian package redis-server)');
let dir = '';
let redis: ChildProcess | undefined;
let url = '';
const workers: ChildProcess[] = [];
const workerLogs = new Map<ChildProcess, string>();
const INPUTS = ['a.jsonl', 'b.jsonl', 'c.jsonl'];
const OUTS = ['flags', 'clusters', 'kept'] as const;

async function startWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const w = spawn(process.execPath, [MAIN, 'worker', '--redis', url, '--queue', 'test', '--lock-duration', '1500'],
    { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  workers.push(w);
  workerLogs.set(w, '');
  w.stderr!.on('data', (d) => workerLogs.set(w, workerLogs.get(w) + String(d)));
  await waitFor(w, /serving queue/, 'worker');
  return w;
}

function stopWorkers(): Promise<void> {
  const all = workers.splice(0).filter((w) => w.exitCode === null && w.signalCode === null);
  return Promise.all(all.map((w) => new Promise<void>((resolve) => { w.once('exit', () => resolve()); w.kill('SIGTERM'); }))).then(() => undefined);
}

function submit(work: string, opts: string[], extra: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [MAIN, 'dedup', ...INPUTS, ...opts, ...OUTS.flatMap((o) => [`--${o}`, `q.${o}`]), '--work', work, '--redis', url, '--queue', 'test', '--shards', '2', ...extra],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function reference(opts: string[]): Record<string, unknown> {
  const r = spawnSync(process.execPath, [MAIN, 'dedup', ...INPUTS, ...opts, ...OUTS.flatMap((o) => [`--${o}`, `ref.${o}`])], { cwd: dir, encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function same(what: string, ref: Record<string, unknown>, got: { code: number | null; stdout: string; stderr: string }) {
  assert.is(got.code, 0, `${what}: ${got.stderr}`);
  const s = JSON.parse(got.stdout) as Record<string, unknown>;
  for (const o of OUTS) assert.ok(fs.readFileSync(path.join(dir, `ref.${o}`)).equals(fs.readFileSync(path.join(dir, `q.${o}`))), `${what}: --${o} differs`);
  for (const k of ['documents', 'kept', 'duplicates', 'clusters', 'candidate_pairs', 'reported_pairs', 'input_bytes']) assert.equal(s[k], ref[k], `${what}: ${k}`);
}

test.before(async () => {
  if (!haveRedis) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-queue-'));
  const lines = zlib.gunzipSync(fs.readFileSync(path.join(root, 'test', 'fixtures', 'corpora', 'spamassassin.jsonl.gz'))).toString('utf8').split('\n').slice(0, 900);
  fs.writeFileSync(path.join(dir, 'a.jsonl'), lines.slice(0, 300).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'b.jsonl'), lines.slice(300, 600).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'c.jsonl'), [...lines.slice(600, 900), ...lines.slice(50, 120)].join('\n') + '\n');
  fs.mkdirSync(path.join(dir, 'redis'));
  await startRedis(await freePort());
});

async function startRedis(port: number): Promise<void> {
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', path.join(dir, 'redis'), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitFor(redis, /Ready to accept connections/, 'redis-server');
  url = `redis://127.0.0.1:${port}`;
}

/** Waits until WORK/paused-STAGE-0 names the worker that holds that task; returns its pid. */
/** The worker running the paused task, and the process the task runs in (the worker's sandboxed child). */
async function pausedTask(work: string, stage: string): Promise<{ worker: number; task: number }> {
  const marker = path.join(work, `paused-${stage}-0`);
  const t0 = Date.now();
  while (!fs.existsSync(marker) || fs.readFileSync(marker, 'utf8') === '') {
    assert.ok(Date.now() - t0 < 60_000, `no worker started ${stage} 0/2`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const [worker, task] = fs.readFileSync(marker, 'utf8').split(' ').map(Number);
  return { worker, task };
}

/** Whether a process runs (a zombie, ended but not yet reaped by whoever adopted it, does not). */
const alive = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] !== 'Z';
  } catch {
    return false;
  }
};

test.after(async () => {
  await stopWorkers();
  if (redis && redis.exitCode === null) {
    const r = redis;
    await new Promise<void>((resolve) => { r.once('exit', () => resolve()); r.kill('SIGTERM'); });
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('1 and 2 worker processes: dedup --redis writes the single-process outputs (verified and --fast)', async () => {
  if (!haveRedis) {
    console.log('  (skipped: redis-server is not installed; apt-get install redis-server)');
    return;
  }
  const first = await startWorker({ NEARDUP_PROGRESS: 'json' });
  for (const opts of [[], ['--fast']]) {
    const ref = reference(opts);
    same(`1 worker ${opts.join(' ')}`, ref, await submit(`w1${opts.join('')}`, opts));
  }
  // the worker's log (issue 28): a start and an end line per task, the end with its seconds and CPU seconds
  const events = workerLogs.get(first)!.split('\n').filter((l) => l.startsWith('{"progress":"worker"')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const starts = events.filter((e) => e.event === 'start'), ends = events.filter((e) => e.event === 'end');
  assert.ok(starts.length >= 7 && ends.length === starts.length, `${starts.length} start and ${ends.length} end lines`);
  assert.ok(ends.some((e) => e.task === 'signatures'), JSON.stringify(ends.map((e) => e.task)));
  for (const e of ends) assert.ok(typeof e.seconds === 'number' && typeof e.cpu_seconds === 'number' && e.cpu_seconds >= 0, JSON.stringify(e));
  await startWorker();
  for (const opts of [[], ['--fast']]) {
    const ref = reference(opts);
    same(`2 workers ${opts.join(' ')}`, ref, await submit(`w2${opts.join('')}`, opts));
  }
  await startWorker();
  const ref = reference([]);
  same('3 workers', ref, await submit('w3', []));
  await stopWorkers();
});

test('neardup exact --redis (2 workers, --shards 3): the single run\'s outputs, byte for byte', async () => {
  if (!haveRedis) return;
  await startWorker();
  await startWorker();
  const outs = ['--flags', 'x.flags', '--clusters', 'x.clusters', '--kept', 'x.kept'];
  const ref = spawnSync(process.execPath, [MAIN, 'exact', ...INPUTS, '--normalize', 'lowercase,words', ...outs.map((o) => o.replace(/^x\./, 'xref.'))], { cwd: dir, encoding: 'utf8' });
  assert.is(ref.status, 0, ref.stderr);
  const got = await run(['exact', ...INPUTS, '--normalize', 'lowercase,words', ...outs, '--work', 'wx', '--redis', url, '--queue', 'test', '--shards', '3']);
  assert.is(got.code, 0, got.stderr);
  for (const o of ['flags', 'clusters', 'kept']) assert.ok(fs.readFileSync(path.join(dir, `xref.${o}`)).equals(fs.readFileSync(path.join(dir, `x.${o}`))), `--${o} differs`);
  const s = JSON.parse(got.stderr.trim().split('\n').pop()!) as Record<string, unknown>;
  assert.ok((s.duplicates as number) >= 70, `the copies of lines 50..119 are found: ${JSON.stringify(s)}`);
  await stopWorkers();
});

test('a worker killed (SIGKILL) in the middle of a task: retried elsewhere, outputs identical', async () => {
  if (!haveRedis) return;
  const ref = reference([]);
  for (const stage of ['signatures', 'buckets', 'verify', 'clusters']) {
    const work = path.join(dir, `wk-${stage}`);
    // both workers pause in the first run of each task of the stage; the one holding shard 0 is killed
    const env = { NEARDUP_TEST_PAUSE: `${stage}:4000` };
    await startWorker(env);
    await startWorker(env);
    const run = submit(work, []);
    const { worker: pid, task } = await pausedTask(work, stage);
    const victim = workers.find((w) => w.pid === pid)!;
    assert.ok(victim, 'the paused task runs in one of our workers');
    assert.ok(task !== pid && alive(task), 'the task runs in a child process of the worker');
    victim.kill('SIGKILL');
    // the task's process goes with its worker (no orphan finishes the task beside its retry)
    for (const t0 = Date.now(); alive(task); await new Promise((r) => setTimeout(r, 50)))
      assert.ok(Date.now() - t0 < 5000, `the task's process ${task} outlived its killed worker`);
    if (stage === 'clusters') await startWorker();  // the survivor may hold nothing else: make sure one is free
    same(`killed in ${stage}`, ref, await run);
    await stopWorkers();
  }
});

test('a task that fails (an input changed after the signatures stage): the submitter fails naming the shard and file', async () => {
  if (!haveRedis) return;
  const sub = path.join(dir, 'changed');
  fs.mkdirSync(sub, { recursive: true });
  const inputs = INPUTS.map((f) => path.join(sub, f));
  INPUTS.forEach((f, k) => fs.copyFileSync(path.join(dir, f), inputs[k]));
  const work = path.join(sub, 'w');
  await startWorker({ NEARDUP_TEST_PAUSE: 'filter:2000' });
  const p = spawn(process.execPath, [MAIN, 'dedup', ...inputs, '--kept-dir', path.join(sub, 'kept'), '--work', work, '--redis', url, '--queue', 'test', '--shards', '2'],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  p.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
  await pausedTask(work, 'filter');
  fs.appendFileSync(inputs[0], '{"text":"added after the signatures stage"}\n');
  const code = await exited;
  assert.is(code, 1, stderr);
  assert.match(stderr, /filter shard 0\/2: the input '[^']*a\.jsonl' has changed since the signatures stage/);
  assert.not.ok(fs.existsSync(path.join(sub, 'kept', 'a.jsonl')), 'no kept file from a failed shard');
  await stopWorkers();
});

test('similar build --parts 3 --redis: parts counted by 2 worker processes, the table of a local build', async () => {
  if (!haveRedis) return;
  const top = (index: string) => {
    const r = spawnSync(process.execPath, [MAIN, 'similar', 'top', '--index', index], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.is(r.status, 0, r.stderr);
    return r.stdout;
  };
  const build = (index: string, extra: string[]) => spawnSync(process.execPath, [MAIN, 'similar', 'build', 'a.jsonl', 'b.jsonl', '--index', index, '--k', '20', ...extra],
    { cwd: dir, encoding: 'utf8' });
  const local = build('sim-local', []);
  assert.is(local.status, 0, local.stderr);
  await startWorker();
  await startWorker();
  const queued = build('sim-queued', ['--parts', '3', '--redis', url, '--queue', 'test']);
  assert.is(queued.status, 0, queued.stderr);
  const want = top('sim-local');
  assert.ok(want.split('\n').length > 300, 'the corpus has similar documents');
  assert.is(top('sim-queued'), want);
  assert.equal(fs.readdirSync(path.join(dir, 'sim-queued')).filter((f) => /^pairs-/.test(f)), [], 'the parts\' pairs files are removed');
  await stopWorkers();
});

/** Every file under d (relative path -> bytes). */
function tree(d: string): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(d, rel), { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(rel, e.name));
      else m.set(path.join(rel, e.name), fs.readFileSync(path.join(d, rel, e.name)));
    }
  };
  walk('');
  return m;
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [MAIN, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('passages index --shards 3 --redis: parts and key ranges built by 2 worker processes (one killed mid-part, one mid-range), the index of a single run', async () => {
  if (!haveRedis) return;
  const ref = spawnSync(process.execPath, [MAIN, 'passages', 'index', '-o', 'pix-ref', ...INPUTS], { cwd: dir, encoding: 'utf8' });
  assert.is(ref.status, 0, ref.stderr);
  const want = tree(path.join(dir, 'pix-ref'));
  const check = (what: string, d: string) => {
    const got = tree(path.join(dir, d));
    assert.equal([...got.keys()].sort(), [...want.keys()].sort(), `${what}: the same files`);
    for (const [k, v] of want) assert.ok(v.equals(got.get(k)!), `${what}: ${k} differs`);
  };
  await startWorker();
  await startWorker();
  const q = await run(['passages', 'index', '-o', 'pix-q', ...INPUTS, '--work', 'wpix-q', '--shards', '3', '--redis', url, '--queue', 'test']);
  assert.is(q.code, 0, q.stderr);
  check('2 workers', 'pix-q');
  await stopWorkers();
  // both workers pause in the first run of each part (key range); the one holding part (range) 0 is killed,
  // another runs it again
  for (const stage of ['passages-part', 'passages-lists']) {
    const work = path.join(dir, `wpix-k-${stage}`), out = `pix-k-${stage}`;
    const env = { NEARDUP_TEST_PAUSE: `${stage}:4000` };
    await startWorker(env);
    await startWorker(env);
    const pending = run(['passages', 'index', '-o', out, ...INPUTS, '--work', work, '--shards', '2', '--redis', url, '--queue', 'test']);
    const { worker: pid, task } = await pausedTask(work, stage);
    const victim = workers.find((w) => w.pid === pid)!;
    assert.ok(victim, `the paused ${stage} task runs in one of our workers`);
    victim.kill('SIGKILL');
    for (const t0 = Date.now(); alive(task); await new Promise((r) => setTimeout(r, 50)))
      assert.ok(Date.now() - t0 < 5000, `the ${stage} task's process ${task} outlived its killed worker`);
    await startWorker();
    const k = await pending;
    assert.is(k.code, 0, k.stderr);
    check(`a worker killed in ${stage}`, out);
    assert.equal(fs.readdirSync(work).filter((f) => /^part-|^lists-|^neardup-spill/.test(f)), [], 'the parts and ranges are removed');
    await stopWorkers();
  }
});

test('Redis going away mid-run: the submitter fails naming Redis; rerun once it is back: the same outputs', async () => {
  if (!haveRedis) return;
  const ref = reference([]);
  const work = path.join(dir, 'wk-redis-lost');
  await startWorker({ NEARDUP_TEST_PAUSE: 'buckets:3000' });
  const run = submit(work, [], ['--redis-wait', '2']);
  await pausedTask(work, 'buckets');
  const port = Number(new URL(url).port);
  const r = redis!;
  await new Promise<void>((resolve) => { r.once('exit', () => resolve()); r.kill('SIGKILL'); });
  const t0 = Date.now();
  const failed = await Promise.race([run, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the submitter still waits 60 s after Redis went away')), 60_000).unref())]);
  assert.is.not(failed.code, 0, 'the submitter must fail while Redis is away');
  assert.match(failed.stderr, /lost the connection to Redis at redis:\/\/127\.0\.0\.1:\d+/);
  assert.ok(Date.now() - t0 < 30_000, `the submitter took ${Date.now() - t0} ms to give up (--redis-wait 2)`);
  await startRedis(port);  // empty: the jobs of the first run are gone
  same('rerun after Redis came back', ref, await submit(work, []));
  await stopWorkers();
});

test('Redis restarted empty mid-run (within --redis-wait): the submitter fails naming Redis, not waits forever; the rerun: the same outputs', async () => {
  if (!haveRedis) return;
  const ref = reference([]);
  const work = path.join(dir, 'wk-redis-empty');
  await startWorker({ NEARDUP_TEST_PAUSE: 'buckets:3000' });
  const run = submit(work, []);  // the default --redis-wait (30 s): the outage is shorter
  await pausedTask(work, 'buckets');
  const port = Number(new URL(url).port);
  const r = redis!;
  await new Promise<void>((resolve) => { r.once('exit', () => resolve()); r.kill('SIGKILL'); });
  const t0 = Date.now();
  await startRedis(port);  // at once, and empty: the stage's jobs and their events are gone
  const failed = await Promise.race([run, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the submitter still waits 60 s after Redis came back empty')), 60_000).unref())]);
  assert.is.not(failed.code, 0, 'the submitter must fail: no completion can arrive');
  assert.match(failed.stderr, /Redis at redis:\/\/127\.0\.0\.1:\d+ no longer holds the tasks of stage buckets/);
  assert.ok(Date.now() - t0 < 25_000, `the submitter took ${Date.now() - t0} ms to notice`);
  same('rerun on the empty Redis', ref, await submit(work, []));
  await stopWorkers();
});

test('every output option through a BullMQ worker (--shards 3, one shard without files): the single run\'s bytes', async () => {
  if (!haveRedis) return;
  await startWorker();
  const inputs = ['a.jsonl', 'c.jsonl'];
  const sets: [string, string[], (p: string) => string[]][] = [
    ['plain', [], (p) => ['--clusters', `${p}.clusters`, '--pairs', `${p}.pairs`, '--kept-dir', `${p}.kd`]],
    ['ids', [], (p) => ['--id-field', 'id', '--flags', `${p}.flags`, '--clusters', `${p}.clusters`, '--pairs', `${p}.pairs`, '--removed-ids', `${p}.removed`, '--kept', `${p}.kept`]],
    ['ids --fast', ['--fast'], (p) => ['--id-field', 'id', '--pairs', `${p}.pairs`, '--removed-ids', `${p}.removed`]],
  ];
  const files = (p: string) => {
    const m = new Map<string, Buffer>();
    for (const f of fs.readdirSync(dir)) if (f.startsWith(`${p}.`) && fs.statSync(path.join(dir, f)).isFile()) m.set(f.slice(p.length), fs.readFileSync(path.join(dir, f)));
    if (fs.existsSync(path.join(dir, `${p}.kd`))) for (const f of fs.readdirSync(path.join(dir, `${p}.kd`))) m.set(`kd/${f}`, fs.readFileSync(path.join(dir, `${p}.kd`, f)));
    return m;
  };
  for (const [k, [name, opts, outs]] of sets.entries()) {
    const ref = await run(['dedup', ...inputs, ...opts, ...outs(`o${k}-ref`)]);
    assert.is(ref.code, 0, ref.stderr);
    const got = await run(['dedup', ...inputs, ...opts, ...outs(`o${k}-q`), '--work', `wo${k}`, '--redis', url, '--queue', 'test', '--shards', '3', '--band-shards', '2']);
    assert.is(got.code, 0, `${name}: ${got.stderr}`);
    const want = files(`o${k}-ref`), have = files(`o${k}-q`);
    assert.ok(want.size >= 2, `${name}: outputs written`);
    assert.equal([...have.keys()].sort(), [...want.keys()].sort(), `${name}: the same files`);
    for (const [f, v] of want) assert.ok(v.equals(have.get(f)!), `${name}: ${f} differs`);
    assert.ok(want.get('.removed') === undefined || want.get('.removed')!.length > 0, `${name}: duplicates removed`);
    for (const c of ['documents', 'duplicates', 'reported_pairs']) assert.equal(JSON.parse(got.stdout)[c], JSON.parse(ref.stdout)[c], `${name}: ${c}`);
  }
  await stopWorkers();
});

test('Redis unreachable from the start: dedup --redis reports it and exits non-zero when --redis-wait is over (no handle keeps it alive)', async () => {
  if (!haveRedis) return;
  const port = await freePort();  // nothing listens there
  const t0 = Date.now();
  // 18 s: longer than the clients' first retries, whose delay then grows past 5 s (an outage measured by the
  // gaps between their errors never ended there: the submitter waited forever)
  const r = await Promise.race([
    run(['dedup', 'a.jsonl', '--flags', 'unreach.flags', '--work', 'wk-unreach', '--redis', `redis://127.0.0.1:${port}`, '--shards', '2', '--redis-wait', '18']),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('dedup --redis still running 45 s after Redis was found unreachable')), 45_000).unref()),
  ]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /lost the connection to Redis at redis:\/\/127\.0\.0\.1:\d+ for (1[89]|2\d) s \(connect ECONNREFUSED/);
  assert.ok(Date.now() - t0 >= 18_000 && Date.now() - t0 < 35_000, `exited after ${Date.now() - t0} ms`);
  assert.not.ok(fs.existsSync(path.join(dir, 'unreach.flags')));
});

test('neardup worker with Redis down: says once what it waits for, backs off, and serves once Redis is up', async () => {
  if (!haveRedis) return;
  const port = await freePort();
  const w = spawn(process.execPath, [MAIN, 'worker', '--redis', `redis://127.0.0.1:${port}`, '--queue', 'test-down'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  workers.push(w);
  let err = '';
  w.stderr!.on('data', (d) => { err += d; });
  await new Promise((r) => setTimeout(r, 6000));
  const lines = err.split('\n').filter((l) => l);
  assert.equal(lines, [`neardup worker: waiting for Redis at redis://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}); retrying with a growing delay, up to 20 s`]);
  const second = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', path.join(dir, 'redis'), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    await waitFor(w, /is back after \d+ s/, 'worker after Redis came up', 40_000);
    assert.match(err, /serving queue 'test-down'/);
  } finally {
    await stopWorkers();
    await new Promise<void>((resolve) => { second.once('exit', () => resolve()); second.kill('SIGTERM'); });
  }
});

test.run();
