// The staged (distributed) dedup against one `neardup dedup` run, in one run, alternating: a prefix of the
// generated noisy corpus (default all of /work/data/noisy-1g.jsonl) cut into 8 input files, through
//   single   neardup dedup FILES --flags --kept-dir
//   local    neardup dedup FILES ... --work W --shards 2 (every stage in one process, one after the other)
//   bullmq-1 / bullmq-2   the same through 1 / 2 `neardup worker` processes on a private redis-server
// Reports wall seconds (median of --reps), the overhead ratio over `single`, CPU seconds of the submitting
// process and of the worker processes, and the bytes each stage read and wrote (stage files; inputs and final
// outputs not counted) with its task seconds. Checks that every run's flags equal single's. The corpus is
// generated (bench/dedup-noisy-corpus.ts, 1000 MB) when FILE does not exist.
//   node --import tsx bench/scale.ts [--corpus FILE] [--mb 1000] [--reps 1] [--shards 2]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { machine } from './corpus';
import { generateNoisyCorpus } from './dedup-noisy-corpus';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const corpus = opt('corpus', '/work/data/noisy-1g.jsonl');
const mb = Number(opt('mb', '1000'));
const reps = Number(opt('reps', '1'));
const shards = Number(opt('shards', '2'));
const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-scale-'));

function cut(): string[] {
  if (!fs.existsSync(corpus)) {
    process.stderr.write(`generating ${corpus} (1000 MB)\n`);
    generateNoisyCorpus(corpus, 1000 * 1e6);
  }
  const data = fs.readFileSync(corpus);
  let end = Math.min(data.length, mb * 1e6);
  while (end < data.length && data[end - 1] !== 0x0a) end++;
  const files: string[] = [];
  let at = 0;
  for (let f = 0; f < 8; f++) {
    let e = Math.min(end, Math.floor((end * (f + 1)) / 8));
    while (e < end && data[e - 1] !== 0x0a) e++;
    const name = path.join(dir, `in${f}.jsonl`);
    fs.writeFileSync(name, data.subarray(at, e));
    files.push(name);
    at = e;
  }
  return files;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)); });
  });
}

function waitFor(p: ChildProcess, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const on = (d: Buffer) => { seen += d; if (re.test(seen)) resolve(); };
    p.stdout?.on('data', on);
    p.stderr?.on('data', on);
    p.once('exit', () => reject(new Error(seen)));
  });
}

interface Run { wall: number; cpu: number; workerCpu: number; summary: Record<string, unknown> }

/** CPU seconds (user + system) a live process has used so far (Linux /proc). */
function cpuOf(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;  // utime, stime in clock ticks (USER_HZ = 100)
}

function runCli(args: string[]): Run {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, MAIN, ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 26 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')}: ${r.stderr}`);
  const [u, s] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  return { wall, cpu: u + s, workerCpu: 0, summary: JSON.parse(r.stdout) as Record<string, unknown> };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const loadStart = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  const files = cut();
  const bytes = files.reduce((s, f) => s + fs.statSync(f).size, 0);
  const port = await freePort();
  fs.mkdirSync(path.join(dir, 'redis'));
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', path.join(dir, 'redis'), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitFor(redis, /Ready to accept connections/);
  const url = `redis://127.0.0.1:${port}`;
  const workers: ChildProcess[] = [];
  const setWorkers = async (n: number) => {
    while (workers.length < n) {
      const w = spawn(process.execPath, [MAIN, 'worker', '--redis', url, '--queue', 'bench'], { stdio: ['ignore', 'pipe', 'pipe'] });
      await waitFor(w, /serving queue/);
      workers.push(w);
    }
  };
  const modes: Record<string, () => Promise<Run>> = {
    single: async () => runCli(['dedup', ...files, '--flags', 'single.flags', '--kept-dir', 'single-kept']),
    local: async () => runCli(['dedup', ...files, '--flags', 'local.flags', '--kept-dir', 'local-kept', '--work', 'w-local', '--shards', String(shards)]),
    'bullmq-1': async () => { await setWorkers(1); return runCli(['dedup', ...files, '--flags', 'bullmq-1.flags', '--kept-dir', 'b1-kept', '--work', 'w-b1', '--shards', String(shards), '--redis', url, '--queue', 'bench']); },
    'bullmq-2': async () => { await setWorkers(2); return runCli(['dedup', ...files, '--flags', 'bullmq-2.flags', '--kept-dir', 'b2-kept', '--work', 'w-b2', '--shards', String(shards), '--redis', url, '--queue', 'bench']); },
  };
  const results: Record<string, Run[]> = {};
  try {
    for (let rep = 0; rep < reps; rep++) {
      for (const [name, fn] of Object.entries(modes)) {
        const before = workers.reduce((t, w) => t + cpuOf(w.pid!), 0);
        const run = await fn();
        run.workerCpu = workers.reduce((t, w) => t + cpuOf(w.pid!), 0) - before;
        (results[name] ??= []).push(run);
        process.stderr.write(`${name} rep ${rep}: ${results[name].at(-1)!.wall.toFixed(1)} s\n`);
        if (name !== 'single') {
          if (!fs.readFileSync(path.join(dir, `${name}.flags`)).equals(fs.readFileSync(path.join(dir, 'single.flags')))) throw new Error(`${name}: flags differ from single`);
        }
      }
    }
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    redis.kill('SIGTERM');
  }
  const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  const base = median(results.single.map((r) => r.wall));
  console.log(`# dedup, staged vs single process (${machine()}; load average at the start ${loadStart}, at the end ${load})\n`);
  console.log(`${(bytes / 1e6).toFixed(0)} MB in 8 files, ${results.single[0].summary.documents} documents, defaults (verified), --shards ${shards}, ${reps} rep(s), median wall\n`);
  const baseCpu = median(results.single.map((r) => r.cpu + r.workerCpu));
  console.log('| mode | wall s (each rep) | wall / single | submitter CPU s | workers CPU s | total CPU s | CPU / single |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, rs] of Object.entries(results)) {
    const w = median(rs.map((r) => r.wall)), c = median(rs.map((r) => r.cpu + r.workerCpu));
    console.log(`| ${name} | ${w.toFixed(1)} (${rs.map((r) => r.wall.toFixed(1)).join(', ')}) | ${(w / base).toFixed(2)} | ${median(rs.map((r) => r.cpu)).toFixed(1)} | ` +
      `${median(rs.map((r) => r.workerCpu)).toFixed(1)} | ${c.toFixed(1)} | ${(c / baseCpu).toFixed(2)} |`);
  }
  const stages = (results.local[Math.floor(results.local.length / 2)].summary.stages as { stage: string; shard: string; read_bytes: number; written_bytes: number; seconds: number }[]);
  console.log('\nStage files read and written (the local run of the middle repetition):\n\n| stage | tasks | read MB | written MB | task seconds (sum) |\n|---|---|---|---|---|');
  const by = new Map<string, { n: number; r: number; w: number; s: number }>();
  for (const s of stages) {
    const e = by.get(s.stage) ?? { n: 0, r: 0, w: 0, s: 0 };
    e.n++; e.r += s.read_bytes; e.w += s.written_bytes; e.s += s.seconds;
    by.set(s.stage, e);
  }
  for (const [k, e] of by) console.log(`| ${k} | ${e.n} | ${(e.r / 1e6).toFixed(1)} | ${(e.w / 1e6).toFixed(1)} | ${e.s.toFixed(1)} |`);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => { console.error(e); fs.rmSync(dir, { recursive: true, force: true }); process.exit(1); });
