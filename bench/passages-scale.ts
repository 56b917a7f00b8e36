// The sharded passage-index build (docs/passages.md, "A sharded build") against one `neardup passages index`
// run, in one run, alternating: a prefix of the generated noisy corpus cut into 8 input files, through
//   single    neardup passages index -o DIR FILES
//   local     neardup passages index -o DIR FILES --work W --shards N (the parts one after another, here)
//   bullmq-2  the same with --redis: the parts on 2 `neardup worker` processes (started before the first
//             repetition) on a private redis-server
//   stages    passages stage plan, part 0..N-1, lists 0..K-1 (K = N key ranges), finish as separate
//             processes: each step's CPU, and the bytes it reads and writes
//   stages-k0 the same planned with --key-ranges 0: finish merges the parts' lists itself
// Reports wall and CPU seconds (medians of --reps; CPU of the whole process trees, workers included) and their
// ratios over `single`, and checks that every run's index equals single's, file for file.
//   node --import tsx bench/passages-scale.ts [--corpus FILE] [--mb 1000] [--reps 3] [--shards 2]
// (the key ranges K = --shards)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { machine } from './corpus';
import { cpuOf, cut, freePort, median, waitFor } from './scale-common';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const corpus = opt('corpus', '/work/data/noisy-1g.jsonl');
const mb = Number(opt('mb', '1000'));
const reps = Number(opt('reps', '3'));
const shards = Number(opt('shards', '2'));
const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-pscale-'));
const env = { ...process.env };
delete env.NODE_EXTRA_CA_CERTS;  // parsed by every Node process when set (~0.08 s); neardup opens no TLS connection

interface Step { wall: number; cpu: number; out: string }

function step(args: string[]): Step {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, MAIN, ...args], { cwd: dir, encoding: 'utf8', env, maxBuffer: 1 << 26 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')}: ${r.stderr}`);
  const [u, s] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  return { wall, cpu: u + s, out: r.stdout };
}

/** Bytes of every file under d. */
function bytesUnder(d: string): number {
  let n = 0;
  for (const e of fs.readdirSync(d, { withFileTypes: true, recursive: true })) if (e.isFile()) n += fs.statSync(path.join(e.parentPath ?? e.path, e.name)).size;
  return n;
}

/** SHA-256 of every file under d (relative path -> hex). */
function digest(d: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of fs.readdirSync(d, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const f = path.join(e.parentPath ?? e.path, e.name);
    m.set(path.relative(d, f), crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex'));
  }
  return m;
}

async function main() {
  const loadStart = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  const files = cut(corpus, mb, dir).map((f) => path.basename(f));
  const bytes = files.reduce((s, f) => s + fs.statSync(path.join(dir, f)).size, 0);
  const port = await freePort();
  fs.mkdirSync(path.join(dir, 'redis'));
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', path.join(dir, 'redis'), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitFor(redis, /Ready to accept connections/);
  const url = `redis://127.0.0.1:${port}`;
  const workers: ChildProcess[] = [];
  const runs: Record<string, { wall: number; cpu: number }[]> = {};
  type StageRun = { name: string; cpu: number; wall: number; read: number; written: number }[];
  const stageRuns: Record<string, StageRun[]> = { stages: [], 'stages-k0': [] };
  let want: Map<string, string> | undefined;
  const fresh = (d: string) => fs.rmSync(path.join(dir, d), { recursive: true, force: true });
  const check = (name: string, d: string) => {
    const got = digest(path.join(dir, d));
    want ??= got;
    if (got.size !== want.size || [...want].some(([k, v]) => got.get(k) !== v)) throw new Error(`${name}: the index differs from single's`);
  };
  try {
    for (let w = 0; w < 2; w++) {
      const p = spawn(process.execPath, [MAIN, 'worker', '--redis', url, '--queue', 'pbench'], { stdio: ['ignore', 'pipe', 'pipe'], env });
      await waitFor(p, /serving queue/);
      workers.push(p);
    }
    const modes: Record<string, () => Step> = {
      single: () => step(['passages', 'index', '-o', 'ix-single', ...files]),
      local: () => step(['passages', 'index', '-o', 'ix-local', '--work', 'w-local', '--shards', String(shards), ...files]),
      'bullmq-2': () => step(['passages', 'index', '-o', 'ix-bullmq-2', '--work', 'w-bullmq', '--shards', String(shards), '--redis', url, '--queue', 'pbench', ...files]),
    };
    for (let rep = 0; rep < reps; rep++) {
      for (const [name, f] of Object.entries(modes)) {
        fresh(`ix-${name}`);
        const before = workers.reduce((t, w) => t + cpuOf(w.pid!), 0);
        const r = f();
        const workerCpu = name.startsWith('bullmq') ? workers.reduce((t, w) => t + cpuOf(w.pid!), 0) - before : 0;
        (runs[name] ??= []).push({ wall: r.wall, cpu: r.cpu + workerCpu });
        process.stderr.write(`${name} rep ${rep}: ${r.wall.toFixed(1)} s, ${(r.cpu + workerCpu).toFixed(1)} CPU-s\n`);
        check(name, `ix-${name}`);
      }
      // the stages as separate processes, with and without key ranges
      for (const [name, k] of [['stages', shards], ['stages-k0', 0]] as const) {
        fresh(`ix-${name}`);
        fresh(`w-${name}`);
        const st: StageRun = [];
        let s = step(['passages', 'stage', 'plan', '-o', `ix-${name}`, '--work', `w-${name}`, '--shards', String(shards), '--key-ranges', String(k), ...files]);
        st.push({ name: 'plan', cpu: s.cpu, wall: s.wall, read: 0, written: fs.statSync(path.join(dir, `w-${name}`, 'passages-plan.json')).size });
        for (let i = 0; i < shards; i++) {
          s = step(['passages', 'stage', 'part', '--work', `w-${name}`, '--shard', `${i}/${shards}`]);
          const rep = JSON.parse(s.out) as { read_bytes: number };
          st.push({ name: `part ${i}/${shards}`, cpu: s.cpu, wall: s.wall, read: rep.read_bytes, written: bytesUnder(path.join(dir, `w-${name}`, `part-${i}`)) });
        }
        const partBytes = st.reduce((t, x) => t + (x.name.startsWith('part') ? x.written : 0), 0);
        let rangeBytes = 0;
        for (let r = 0; r < k; r++) {
          s = step(['passages', 'stage', 'lists', '--work', `w-${name}`, '--shard', `${r}/${k}`]);
          const rep = JSON.parse(s.out) as { read_bytes: number; written_bytes: number };
          rangeBytes += rep.written_bytes;
          st.push({ name: `lists ${r}/${k}`, cpu: s.cpu, wall: s.wall, read: rep.read_bytes, written: rep.written_bytes });
        }
        // finish reads the parts' texts and document lists (and their postings, or the ranges)
        const partPostings = k === 0 ? 0 : st.reduce((t, x) => t + (x.name.startsWith('lists') ? x.read : 0), 0) / k;
        s = step(['passages', 'stage', 'finish', '--work', `w-${name}`]);
        st.push({ name: 'finish', cpu: s.cpu, wall: s.wall, read: partBytes - partPostings + rangeBytes, written: bytesUnder(path.join(dir, `ix-${name}`)) });
        check(name, `ix-${name}`);
        stageRuns[name].push(st);
        process.stderr.write(`${name} rep ${rep}: ${st.map((x) => `${x.name} ${x.cpu.toFixed(1)}`).join(', ')} CPU-s\n`);
      }
    }
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    redis.kill('SIGTERM');
  }
  const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  console.log(`# passages index, sharded vs single process (${machine()}; load average at the start ${loadStart}, at the end ${load})\n`);
  console.log(`${(bytes / 1e6).toFixed(0)} MB in 8 files, --shards ${shards}, ${reps} rep(s), medians; every index equal to single's, file for file\n`);
  console.log('| mode | wall s (each rep) | wall / single | CPU s (each rep) | CPU / single |\n|---|---|---|---|---|');
  const w0 = median(runs.single.map((r) => r.wall)), c0 = median(runs.single.map((r) => r.cpu));
  const total = (rs: StageRun[]) => rs.map((st) => ({ wall: st.reduce((t, x) => t + x.wall, 0), cpu: st.reduce((t, x) => t + x.cpu, 0) }));
  for (const [name, rs] of [...Object.entries(runs), ['stages (separate processes)', total(stageRuns.stages)] as const,
    ['stages, --key-ranges 0', total(stageRuns['stages-k0'])] as const]) {
    const w = median(rs.map((r) => r.wall)), c = median(rs.map((r) => r.cpu));
    console.log(`| ${name} | ${w.toFixed(1)} (${rs.map((r) => r.wall.toFixed(1)).join(', ')}) | ${(w / w0).toFixed(2)} | ${c.toFixed(1)} (${rs.map((r) => r.cpu.toFixed(1)).join(', ')}) | ${(c / c0).toFixed(2)} |`);
  }
  for (const [name, rs] of Object.entries(stageRuns)) {
    console.log(`\nThe stages as separate processes, ${name === 'stages' ? `${shards} key ranges` : '--key-ranges 0 (finish merges the lists)'} (medians; bytes of the middle repetition):\n\n| step | wall s | CPU s | read MB | written MB |\n|---|---|---|---|---|`);
    const mid = rs[Math.floor(rs.length / 2)];
    mid.forEach((x, k) => {
      console.log(`| ${x.name} | ${median(rs.map((st) => st[k].wall)).toFixed(1)} | ${median(rs.map((st) => st[k].cpu)).toFixed(1)} | ${(x.read / 1e6).toFixed(1)} | ${(x.written / 1e6).toFixed(1)} |`);
    });
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => { console.error(e); fs.rmSync(dir, { recursive: true, force: true }); process.exit(1); });
