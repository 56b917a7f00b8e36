// neardup against the peers that can actually be run here, side by side in ONE run on ONE machine: each
// round runs A then B (then B then A in the next round, so drift and warm caches favour neither), and the
// table gives medians and the ratio of medians. Prints Markdown (bench/RESULTS-peers.md holds a run).
//
//   node --import tsx bench/peers.ts --onion /path/to/onion [--doubri-minhash /path/to/doubri-minhash] [--rounds 5]
//
// Rows:
//   * command vs command, whole machine: Onion 1.2 `onion -q FILE` vs `neardup onion -q FILE` on the
//     SpamAssassin corpus as vertical text (41 MB), output to /dev/null; wall time, CPU time (user + sys of
//     the child, from /usr/bin/time) and peak RSS. Then the same pinned to one core (taskset -c 0).
//   * library call vs library call, one thread each (neardup setThreads(1); CPU time of this process):
//     neardup `minhash(texts, { profile: 'fast' })` (char 5-grams x 128) vs npm `bloom-filters` MinHash
//     (its shingles hashed with FNV-1a in JS first, as it takes numbers), both on the same documents;
//     throughput per CPU-second of this process.
//   * doubri 1.0 `doubri-minhash` vs `neardup doubri minhash` (commands), only when a doubri build is given.
// Peers that cannot be run here (datasketch and seomoz simhash are Python packages) are not measured.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { minhash, setThreads } from '../lib/index';
import { loadSpam, toVertical } from '../test/support/vertical';
import { machine, median } from './corpus';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { MinHashFactory } = require('bloom-filters') as {
  MinHashFactory: new (n: number, max: number) => { create(): { bulkLoad(v: number[]): void } };
};

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const rounds = Number(arg('rounds') ?? 5);
const onion = arg('onion');
const doubri = arg('doubri-minhash');
const CLI = path.join(__dirname, '..', 'dist', 'cli', 'main.js');

interface Sample { wall: number; cpu: number; rssMB: number }

/** Runs a command with stdout to /dev/null under /usr/bin/time; wall, user+sys CPU and peak RSS of the child. */
function timeCommand(cmd: string[], stdin?: string): Sample {
  const fmt = path.join(os.tmpdir(), `neardup-peers-time-${process.pid}`);
  const out = fs.openSync('/dev/null', 'w');
  const input = stdin ? fs.openSync(stdin, 'r') : 'ignore';
  const r = spawnSync('/usr/bin/time', ['-o', fmt, '-f', '%e %U %S %M', ...cmd], { stdio: [input, out, 'pipe'] });
  fs.closeSync(out);
  if (typeof input === 'number') fs.closeSync(input);
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed: ${r.stderr?.toString()}`);
  const [e, u, s, m] = fs.readFileSync(fmt, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  fs.rmSync(fmt, { force: true });
  return { wall: e, cpu: u + s, rssMB: m / 1024 };
}

interface Pair { name: string; what: string; a: string; b: string; unit: string; size: number; as: Sample[]; bs: Sample[] }
const pairs: Pair[] = [];

/** Alternates A and B (ABBA...) for `rounds` rounds after one warm-up of each. */
function alternate(p: Omit<Pair, 'as' | 'bs'>, runA: () => Sample, runB: () => Sample): void {
  runA();
  runB();
  const as: Sample[] = [], bs: Sample[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      as.push(runA());
      bs.push(runB());
    } else {
      bs.push(runB());
      as.push(runA());
    }
  }
  pairs.push({ ...p, as, bs });
}

async function timeCall(fn: () => Promise<unknown> | unknown): Promise<Sample> {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await fn();
  const c = process.cpuUsage(c0);
  return { wall: Number(process.hrtime.bigint() - t0) / 1e9, cpu: (c.user + c.system) / 1e6, rssMB: process.resourceUsage().maxRSS / 1024 };
}

function chars5(t: string): string[] {
  const c = Array.from(t.toLowerCase());
  if (c.length < 5) return c.length ? [c.join('')] : [];
  const out: string[] = [];
  for (let i = 0; i + 5 <= c.length; i++) out.push(c.slice(i, i + 5).join(''));
  return out;
}
function fnv1a(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-peers-'));
  try {
    const docs = loadSpam();
    const vert = path.join(dir, 'spam.vert');
    fs.writeFileSync(vert, toVertical(docs));
    const vertBytes = fs.statSync(vert).size;

    if (onion) {
      for (const pin of [false, true]) {
        const pre = pin ? ['taskset', '-c', '0'] : [];
        alternate(
          { name: `paragraph dedup, 41 MB vertical text${pin ? ', one core (taskset -c 0)' : ', whole machine'}`, what: 'command',
            a: '`neardup onion -q`', b: '`onion -q` (Onion 1.2)', unit: 'MB', size: vertBytes },
          () => timeCommand([...pre, process.execPath, CLI, 'onion', '-q', vert]),
          () => timeCommand([...pre, onion, '-q', vert]),
        );
      }
    }

    if (doubri) {
      const jsonl = path.join(dir, 'spam.jsonl');
      fs.writeFileSync(jsonl, docs.slice(0, 1500).map((d) => JSON.stringify(d)).join('\n') + '\n');
      const bytes = docs.slice(0, 1500).reduce((s, d) => s + Buffer.byteLength(d.text), 0);
      alternate(
        { name: 'MinHash doubri-v1 profile (char 5-grams x 800), 1,500 docs, one core', what: 'command',
          a: '`neardup doubri minhash`', b: '`doubri-minhash`', unit: 'MB', size: bytes },
        () => timeCommand(['taskset', '-c', '0', process.execPath, CLI, 'doubri', 'minhash', path.join(dir, 'a.hash')], jsonl),
        () => timeCommand(['taskset', '-c', '0', doubri, path.join(dir, 'b.hash')], jsonl),
      );
    }

    // Library calls in this process (run the benchmark under taskset -c 0 for per-core figures).
    setThreads(1);
    const few = docs.slice(0, Number(arg('peer-docs') ?? 300));
    const texts = few.map((d) => Buffer.from(d.text, 'utf8'));
    const bytes = texts.reduce((s, b) => s + b.length, 0);
    const factory = new MinHashFactory(128, 0xffffffff);
    const samplesA: Sample[] = [], samplesB: Sample[] = [];
    const runA = () => timeCall(async () => {
      for (let i = 0; i < 50; i++) await minhash(texts, { profile: 'fast' }); // 50x: the call is too fast to time once
    });
    const runB = () => timeCall(() => {
      for (const d of few) {
        const m = factory.create();
        const v = chars5(d.text).map(fnv1a);
        if (v.length) m.bulkLoad(v);
      }
    });
    await runA();
    await runB();
    for (let i = 0; i < rounds; i++) {
      if (i % 2 === 0) {
        samplesA.push(await runA());
        samplesB.push(await runB());
      } else {
        samplesB.push(await runB());
        samplesA.push(await runA());
      }
    }
    pairs.push({ name: `MinHash char 5-grams x 128, ${few.length} docs (${(bytes / 1e6).toFixed(2)} MB), 1 thread`, what: 'library call',
      a: "`minhash(texts, { profile: 'fast' })` (x50 per sample)", b: 'npm `bloom-filters` MinHash', unit: 'MB', size: bytes,
      as: samplesA.map((s) => ({ ...s, wall: s.wall / 50, cpu: s.cpu / 50 })), bs: samplesB });

    console.log(`${machine()}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} at the end; ${rounds} rounds (A/B alternating), medians\n`);
    console.log('| workload | kind | A | B | A wall s | B wall s | A CPU s | B CPU s | A peak RSS MB | B peak RSS MB | CPU ratio B/A | wall ratio B/A |');
    console.log('|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const p of pairs) {
      const m = (xs: Sample[], k: keyof Sample) => median(xs.map((x) => x[k]));
      const aw = m(p.as, 'wall'), bw = m(p.bs, 'wall'), ac = m(p.as, 'cpu'), bc = m(p.bs, 'cpu');
      const rss = (xs: Sample[]) => (p.what === 'command' ? m(xs, 'rssMB').toFixed(0) : '–');
      console.log(`| ${p.name} | ${p.what} | ${p.a} | ${p.b} | ${aw.toFixed(3)} | ${bw.toFixed(3)} | ${ac.toFixed(3)} | ${bc.toFixed(3)} | ${rss(p.as)} | ${rss(p.bs)} | ${(bc / ac).toFixed(1)}× | ${(bw / aw).toFixed(1)}× |`);
    }
    console.log('\nAll samples (wall s / CPU s):');
    for (const p of pairs)
      console.log(`- ${p.name}: A ${p.as.map((s) => `${s.wall.toFixed(3)}/${s.cpu.toFixed(3)}`).join(', ')}; B ${p.bs.map((s) => `${s.wall.toFixed(3)}/${s.cpu.toFixed(3)}`).join(', ')}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
