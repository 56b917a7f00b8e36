// Dense fingerprint sets in simhash find-all (issue 26): many identical fingerprints and many within a few
// bits of them, where brute force takes milliseconds.
//   nice -n 10 node --import tsx bench/simhash-dense.ts [--before OLD/neardup.node] [--limit SECONDS] [--reps N]
// Each case runs in a child process (one thread, CPU seconds = user + system of the call), A (--before, an
// older build of the addon) and B (this tree's build) alternated, medians of --reps (default 3). A run over
// --limit CPU seconds (default 60, ulimit -t) is stopped and shown as "> limit". Every finished run's pairs are checked
// against a brute force.
//
// Cases: "planted": 300 identical fingerprints plus 300 within 3 bits of them (random flips), k = 3, 5, 8;
// "files": char 5-gram fingerprints (--weighting count, the command's default) of every file under
// node_modules/ (one document per file), k = 3.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { nodeModulesFiles } from './node-modules-files';

const root = path.join(__dirname, '..');

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

// ---- child: node bench/simhash-dense.ts --child ADDON FPS_FILE k m
if (process.argv[2] === '--child') {
  const addon = require(process.argv[3]);
  const buf = fs.readFileSync(process.argv[4]);
  const fps = new BigUint64Array(buf.buffer, buf.byteOffset, buf.length / 8);
  const k = Number(process.argv[5]), m = Number(process.argv[6]);
  addon.setThreads?.(1);
  const t0 = process.cpuUsage();
  const r = addon.simhashFindAllSync(undefined, fps, { blocks: m, distance: k, clusters: false, pairs: true }, 2 ** 28);
  const t = process.cpuUsage(t0);
  // FNV-1a over the pairs, to compare with the brute force
  let h = 0xcbf29ce484222325n;
  for (const x of r.pairs as BigUint64Array) h = BigInt.asUintN(64, (h ^ x) * 0x100000001b3n);
  process.stdout.write(JSON.stringify({ cpu: (t.user + t.system) / 1e6, pairs: r.pairs.length / 2, hash: h.toString() }));
  process.exit(0);
}

function rng(seed: bigint) {
  let s = seed;
  return (): bigint => {
    s = BigInt.asUintN(64, s + 0x9e3779b97f4a7c15n);
    let z = s;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  };
}

function planted(): BigUint64Array {
  const next = rng(26n);
  const base = next();
  const out = new BigUint64Array(600);
  for (let i = 0; i < 300; i++) out[i] = base;
  for (let i = 300; i < 600; i++) {
    let y = base;
    const flips = 1 + Number(next() % 3n);
    for (let f = 0; f < flips; f++) y ^= 1n << (next() % 64n);
    out[i] = y;
  }
  return out;
}

function files(): BigUint64Array {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { simhashFingerprintsSync } = require('../lib/index');
  const texts = nodeModulesFiles(root);
  return simhashFingerprintsSync(texts, { unit: 'char', n: 5, weighting: 'count' });
}

function brute(fps: BigUint64Array, k: number): { pairs: number; hash: string } {
  const lo = new Uint32Array(fps.length), hi = new Uint32Array(fps.length);
  fps.forEach((f, i) => {
    lo[i] = Number(f & 0xffffffffn);
    hi[i] = Number(f >> 32n);
  });
  const pop = (x: number) => {
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  };
  let h = 0xcbf29ce484222325n, n = 0;
  for (let i = 0; i < fps.length; i++)
    for (let j = i + 1; j < fps.length; j++)
      if (pop(lo[i] ^ lo[j]) + pop(hi[i] ^ hi[j]) <= k) {
        h = BigInt.asUintN(64, (h ^ BigInt(i)) * 0x100000001b3n);
        h = BigInt.asUintN(64, (h ^ BigInt(j)) * 0x100000001b3n);
        n++;
      }
  return { pairs: n, hash: h.toString() };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const limit = Number(arg('--limit', '60'));
const reps = Number(arg('--reps', '3'));
const before = process.argv.includes('--before') ? path.resolve(arg('--before', '')) : undefined;
const after = path.join(root, 'build', 'Release', 'neardup.node');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-dense-'));
try {
  const sets: Array<[string, BigUint64Array, number[]]> = [
    ['planted 300 identical + 300 within 3 bits', planted(), [3, 5, 8]],
    ['files: node_modules char 5-grams, count', files(), [3]],
  ];
  console.log(`node ${process.version}, ${os.cpus()[0].model}, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log('| set | n | distinct | k | m | pairs | brute force (JS) s | before CPU-s | after CPU-s |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, fps, ks] of sets) {
    const file = path.join(dir, 'fps.bin');
    fs.writeFileSync(file, Buffer.from(fps.buffer, fps.byteOffset, fps.byteLength));
    const distinct = new Set(fps).size;
    for (const k of ks) {
      const m = k + 3;
      const t0 = process.cpuUsage();
      const want = brute(fps, k);
      const tb = process.cpuUsage(t0);
      const times: Record<string, number[]> = { before: [], after: [] };
      const over: Record<string, boolean> = { before: false, after: false };
      for (let rep = 0; rep < reps; rep++) {
        for (const [label, addon] of [['before', before], ['after', after]] as const) {
          if (addon === undefined || over[label]) continue;
          // ulimit -t: the kernel stops the child after `limit` CPU seconds
          const r = spawnSync('/bin/sh', ['-c', `ulimit -t ${limit}; exec "$@"`, 'sh', process.execPath, '--import', 'tsx', __filename,
            '--child', addon, file, String(k), String(m)], { encoding: 'utf8', env: { ...process.env, NEARDUP_THREADS: '1' } });
          if (r.status !== 0) {
            over[label] = true;
            continue;
          }
          const got = JSON.parse(r.stdout);
          if (got.pairs !== want.pairs || got.hash !== want.hash) throw new Error(`${label} ${name} k=${k}: pairs differ from brute force`);
          if (got.cpu > limit) over[label] = true;
          else times[label].push(got.cpu);
        }
      }
      const show = (l: string) => (l === 'before' && before === undefined ? '' : over[l] ? `> ${limit}` : median(times[l]).toFixed(3));
      console.log(`| ${name} | ${fps.length} | ${distinct} | ${k} | ${m} | ${want.pairs} | ${((tb.user + tb.system) / 1e6).toFixed(2)} | ${show('before')} | ${show('after')} |`);
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
