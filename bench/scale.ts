// The staged (distributed) dedup against one `neardup dedup` run, in one run, alternating: a prefix of the
// generated noisy corpus (default all of /work/data/noisy-1g.jsonl) cut into 8 input files, through
//   single   neardup dedup FILES --flags --kept-dir
//   local    neardup dedup FILES ... --work W --shards 2 (every stage in one process, one after the other)
//   bullmq-1 / bullmq-2   the same through 1 / 2 `neardup worker` processes on a private redis-server
// Reports wall seconds (median of --reps), the overhead ratio over `single`, CPU seconds of the submitting
// process and of the worker processes, and the bytes each stage read and wrote (stage files; inputs and final
// outputs not counted) with its task seconds and CPU seconds, against the single run's phases (reading and
// signing, finish, outputs: NEARDUP_DEDUP_TIMING), and the workers' CPU outside their tasks (the workers are
// started before the first repetition; their start-up is shown apart). Checks that every
// run's flags equal single's. The corpus is generated (bench/dedup-noisy-corpus.ts, 1000 MB) when FILE does
// not exist. --baseline DIR: the same modes also through another build (a checkout with dist/ and build/,
// e.g. main), alternating with this one in each repetition (its modes are named base-*). --worker-threads T:
// one more mode, bullmq-2-tT, two workers with --threads T each (by default a worker's pool takes every core,
// so two workers on one machine run twice as many threads as cores). --only M,M: run only these modes (single
// is always run: the ratios are over it).
//   node --import tsx bench/scale.ts [--corpus FILE] [--mb 1000] [--reps 1] [--shards 2] [--baseline DIR]
//     [--worker-threads T] [--only local,bullmq-2]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { machine } from './corpus';
import { cpuOf, cut, freePort, median, waitFor } from './scale-common';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const corpus = opt('corpus', '/work/data/noisy-1g.jsonl');
const mb = Number(opt('mb', '1000'));
const reps = Number(opt('reps', '1'));
const shards = Number(opt('shards', '2'));
const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const workerThreads = argv.includes('--worker-threads') ? Number(opt('worker-threads', '')) : undefined;
const only = argv.includes('--only') ? new Set(['single', ...opt('only', '').split(',')]) : undefined;
const baseline = argv.includes('--baseline') ? path.join(path.resolve(opt('baseline', '')), 'dist', 'cli', 'main.js') : undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-scale-'));

interface Run { wall: number; cpu: number; workerCpu: number; summary: Record<string, unknown>; phases: { phase: string; cpu_seconds: number }[] }

function runCli(main: string, args: string[]): Run {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, main, ...args],
    { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, NEARDUP_DEDUP_TIMING: '1' } });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')}: ${r.stderr}`);
  const err = r.stderr.trim().split('\n');
  const [u, s] = err.pop()!.split(' ').map(Number);
  const phases = err.filter((l) => l.startsWith('{"phase"')).map((l) => JSON.parse(l) as { phase: string; cpu_seconds: number });
  return { wall, cpu: u + s, workerCpu: 0, summary: JSON.parse(r.stdout) as Record<string, unknown>, phases };
}

async function main() {
  const loadStart = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  const files = cut(corpus, mb, dir);
  const bytes = files.reduce((s, f) => s + fs.statSync(f).size, 0);
  const port = await freePort();
  fs.mkdirSync(path.join(dir, 'redis'));
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', path.join(dir, 'redis'), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitFor(redis, /Ready to accept connections/);
  const url = `redis://127.0.0.1:${port}`;
  // each of bullmq-1 and bullmq-2 has its queue and workers (on one queue, bullmq-1's later repetitions would
  // run on bullmq-2's two workers); a run's worker CPU is that of its own workers
  const workers: Record<string, ChildProcess[]> = {};
  const allWorkers = () => Object.values(workers).flat();
  const queueOf: Record<string, string> = {};
  const setWorkers = async (main: string, queue: string, n: number, threads?: number) => {
    const ws = (workers[queue] ??= []);
    while (ws.length < n) {
      const w = spawn(process.execPath, [main, 'worker', '--redis', url, '--queue', queue, ...(threads ? ['--threads', String(threads)] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
      await waitFor(w, /serving queue/);
      ws.push(w);
    }
  };
  const modes: Record<string, () => Promise<Run>> = {};
  // the workers of a mode, started (and idle) before its first run: their start-up is not a run's CPU
  const start: Record<string, () => Promise<void>> = {};
  const startCpu: Record<string, number> = {};
  for (const [prefix, main] of [['', MAIN], ...(baseline ? [['base-', baseline]] : [])] as [string, string][]) {
    const q = (n: number) => `bench${prefix}-${n}`;
    for (const n of [1, 2]) {
      queueOf[`${prefix}bullmq-${n}`] = q(n);
      start[`${prefix}bullmq-${n}`] = () => setWorkers(main, q(n), n);
    }
    Object.assign(modes, {
      [`${prefix}single`]: async () => runCli(main, ['dedup', ...files, '--flags', `${prefix}single.flags`, '--kept-dir', `${prefix}single-kept`]),
      [`${prefix}local`]: async () => runCli(main, ['dedup', ...files, '--flags', `${prefix}local.flags`, '--kept-dir', `${prefix}local-kept`, '--work', `${prefix}w-local`, '--shards', String(shards)]),
      [`${prefix}bullmq-1`]: async () => { return runCli(main, ['dedup', ...files, '--flags', `${prefix}bullmq-1.flags`, '--kept-dir', `${prefix}b1-kept`, '--work', `${prefix}w-b1`, '--shards', String(shards), '--redis', url, '--queue', q(1)]); },
      [`${prefix}bullmq-2`]: async () => { return runCli(main, ['dedup', ...files, '--flags', `${prefix}bullmq-2.flags`, '--kept-dir', `${prefix}b2-kept`, '--work', `${prefix}w-b2`, '--shards', String(shards), '--redis', url, '--queue', q(2)]); },
    });
    if (workerThreads) {
      const name = `${prefix}bullmq-2-t${workerThreads}`, queue = `bench${prefix}-2-t${workerThreads}`;
      queueOf[name] = queue;
      start[name] = () => setWorkers(main, queue, 2, workerThreads);
      modes[name] = async () => { return runCli(main, ['dedup', ...files, '--flags', `${name}.flags`, '--kept-dir', `${name}-kept`, '--work', `w-${name}`, '--shards', String(shards), '--redis', url, '--queue', queue]); };
    }
  }
  if (only) for (const k of Object.keys(modes)) if (!only.has(k.replace(/^base-/, ''))) delete modes[k];
  // the modes alternate: this build's and the baseline's, mode by mode
  const order = Object.keys(modes).filter((k) => !k.startsWith('base-')).flatMap((k) => (modes[`base-${k}`] ? [k, `base-${k}`] : [k]));
  const results: Record<string, Run[]> = {};
  try {
    for (const name of order) {
      if (!start[name]) continue;
      await start[name]();
      startCpu[name] = (workers[queueOf[name]] ?? []).reduce((t, w) => t + cpuOf(w.pid!), 0);
    }
    for (let rep = 0; rep < reps; rep++) {
      for (const name of order) {
        const mine = () => workers[queueOf[name] ?? ''] ?? [];
        const before = mine().reduce((t, w) => t + cpuOf(w.pid!), 0);
        const run = await modes[name]();
        run.workerCpu = mine().reduce((t, w) => t + cpuOf(w.pid!), 0) - before;
        (results[name] ??= []).push(run);
        process.stderr.write(`${name} rep ${rep}: ${run.wall.toFixed(1)} s, ${(run.cpu + run.workerCpu).toFixed(1)} CPU-s\n`);
        if (name !== 'single') {
          if (!fs.readFileSync(path.join(dir, `${name}.flags`)).equals(fs.readFileSync(path.join(dir, 'single.flags')))) throw new Error(`${name}: flags differ from single`);
        }
      }
    }
  } finally {
    for (const w of allWorkers()) w.kill('SIGTERM');
    redis.kill('SIGTERM');
  }
  const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  console.log(`# dedup, staged vs single process (${machine()}; load average at the start ${loadStart}, at the end ${load})\n`);
  console.log(`${(bytes / 1e6).toFixed(0)} MB in 8 files, ${results.single[0].summary.documents} documents, defaults (verified), --shards ${shards}, ${reps} rep(s), medians` +
    `${baseline ? `; base-*: the build in ${path.dirname(path.dirname(path.dirname(baseline)))}, alternating with this one` : ''}\n`);
  console.log('| mode | wall s (each rep) | wall / single | submitter CPU s | workers CPU s | total CPU s (each rep) | CPU / single |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, rs] of Object.entries(results)) {
    const single = results[name.startsWith('base-') ? 'base-single' : 'single'];
    const base = median(single.map((r) => r.wall)), baseCpu = median(single.map((r) => r.cpu + r.workerCpu));
    const w = median(rs.map((r) => r.wall)), c = median(rs.map((r) => r.cpu + r.workerCpu));
    console.log(`| ${name} | ${w.toFixed(1)} (${rs.map((r) => r.wall.toFixed(1)).join(', ')}) | ${(w / base).toFixed(2)} | ${median(rs.map((r) => r.cpu)).toFixed(1)} | ` +
      `${median(rs.map((r) => r.workerCpu)).toFixed(1)} | ${c.toFixed(1)} (${rs.map((r) => (r.cpu + r.workerCpu).toFixed(1)).join(', ')}) | ${(c / baseCpu).toFixed(2)} |`);
  }
  type Task = { stage: string; shard: string; read_bytes: number; written_bytes: number; seconds: number; cpu_seconds?: number };
  const tasksOf = (r: Run) => r.summary.stages as Task[];
  // the workers' CPU outside their tasks (BullMQ: polling, events, module loading), per run
  for (const name of Object.keys(results).filter((k) => k.includes('bullmq') && !k.startsWith('base-'))) {
    const outside = results[name].map((r) => r.workerCpu - tasksOf(r).reduce((t, x) => t + (x.cpu_seconds ?? 0), 0));
    console.log(`\n${name}: workers' CPU outside their tasks: ${outside.map((x) => x.toFixed(2)).join(', ')} s (each rep; ` +
      `the first includes forking the task process); their start-up before the first run: ${startCpu[name]?.toFixed(2)} s`);
  }
  for (const name of ['local', ...(baseline ? ['base-local'] : [])].filter((k) => results[k])) {
    const mid = results[name][Math.floor(results[name].length / 2)];
    console.log(`\nStage files read and written (the ${name} run of the middle repetition; CPU: median over the repetitions):\n\n| stage | tasks | read MB | written MB | task seconds (sum) | task CPU s (sum) |\n|---|---|---|---|---|---|`);
    const by = new Map<string, { n: number; r: number; w: number; s: number }>();
    for (const t of tasksOf(mid)) {
      const e = by.get(t.stage) ?? { n: 0, r: 0, w: 0, s: 0 };
      e.n++; e.r += t.read_bytes; e.w += t.written_bytes; e.s += t.seconds;
      by.set(t.stage, e);
    }
    const cpuOfStage = (st: string) => median(results[name].map((r) => tasksOf(r).filter((t) => t.stage === st).reduce((a, t) => a + (t.cpu_seconds ?? NaN), 0)));
    for (const [k, e] of by) console.log(`| ${k} | ${e.n} | ${(e.r / 1e6).toFixed(1)} | ${(e.w / 1e6).toFixed(1)} | ${e.s.toFixed(1)} | ${cpuOfStage(k).toFixed(2)} |`);
  }
  // the same tasks' CPU in the local process and in the workers, of both builds (median and each repetition)
  const staged = Object.keys(results).filter((k) => k !== 'single' && k !== 'base-single');
  console.log(`\nTask CPU s (sum over a stage's tasks: median (each rep)):\n\n| stage | ${staged.join(' | ')} |\n|---|${staged.map(() => '---|').join('')}`);
  for (const st of [...new Set(tasksOf(results[staged[0]][0]).map((t) => t.stage))]) {
    const cells = staged.map((k) => {
      const each = results[k].map((r) => tasksOf(r).filter((t) => t.stage === st).reduce((a, t) => a + (t.cpu_seconds ?? NaN), 0));
      return `${median(each).toFixed(2)} (${each.map((x) => x.toFixed(2)).join(', ')})`;
    });
    console.log(`| ${st} | ${cells.join(' | ')} |`);
  }
  const phases = results.single.map((r) => r.phases);
  if (phases.every((p) => p.length)) {
    console.log('\nThe single run\'s phases (CPU s, median): ' + phases[0].map((p, k) => `${p.phase} ${median(phases.map((q) => q[k].cpu_seconds)).toFixed(2)}`).join(', '));
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => { console.error(e); fs.rmSync(dir, { recursive: true, force: true }); process.exit(1); });
