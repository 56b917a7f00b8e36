// SimHash benchmark: the online index (1M random fingerprints, 1M queries) for (6,3) and (5,3), batch
// all-pairs on 1M (5,3), and fingerprinting vs the npm package simhash-js.
//   taskset -c 0 node --import tsx bench/simhash.ts [--quick]
// CPU times are process.cpuUsage() (user + system) around synchronous, single-threaded calls.
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import * as path from 'node:path';
import { sfc32 } from './corpus';
import { SimhashIndex, simhashFindAllSync, simhashFingerprintsSync, runtimeInfo } from '../lib/index';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { SimHash } = require('simhash-js');

const quick = process.argv.includes('--quick');
const N = quick ? 100_000 : 1_000_000;


function cpu<T>(f: () => T): [T, number] {
  const t0 = process.cpuUsage();
  const r = f();
  const t = process.cpuUsage(t0);
  return [r, (t.user + t.system) / 1e6];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const next = sfc32(12345);
const fps = new BigUint64Array(N);
const ids = new BigUint64Array(N);
for (let i = 0; i < N; i++) {
  fps[i] = (BigInt(next()) << 32n) | BigInt(next());
  ids[i] = BigInt(i);
}
// Queries: half are stored fingerprints with 0..3 flipped bits (hits), half fresh random values (misses).
const queries = new BigUint64Array(N);
for (let i = 0; i < N; i++) {
  if (i % 2 === 0) {
    let q = fps[next() % N];
    const flips = next() % 4;
    for (let f = 0; f < flips; f++) q ^= 1n << BigInt(next() % 64);
    queries[i] = q;
  } else queries[i] = (BigInt(next()) << 32n) | BigInt(next());
}

const out: string[] = [];
const log = (s: string) => {
  console.log(s);
  out.push(s);
};
log(`runtime: ${JSON.stringify(runtimeInfo())}, node ${process.version}, N=${N}`);

for (const [m, k] of [[6, 3], [5, 3]]) {
  const runs = { insert: [] as number[], first: [] as number[], all: [] as number[], remove: [] as number[] };
  let bpk = 0, hits = 0, matches = 0;
  for (let rep = 0; rep < (quick ? 1 : 3); rep++) {
    const ix = new SimhashIndex({ blocks: m, distance: k });
    runs.insert.push(cpu(() => ix.insert(ids, fps))[1]);
    const s = ix.stats();
    bpk = s.tableBytes / (s.size * s.tables);
    const [f, tf] = cpu(() => ix.findFirstManySync(queries));
    runs.first.push(tf);
    hits = f.found.reduce((a, b) => a + b, 0);
    const [a, ta] = cpu(() => ix.findAllManySync(queries));
    runs.all.push(ta);
    matches = a.ids.length;
    runs.remove.push(cpu(() => ix.remove(ids))[1]);
    ix.close();
  }
  log(`(${m},${k}) insert ${median(runs.insert).toFixed(3)} s, findFirst ${median(runs.first).toFixed(3)} s, ` +
    `findAll ${median(runs.all).toFixed(3)} s, remove ${median(runs.remove).toFixed(3)} s CPU; ` +
    `${bpk.toFixed(2)} bytes/key/table (+16 bytes/key fingerprint+id); hits ${hits}, matches ${matches}`);
}

{
  const times: number[] = [];
  let pairs = 0;
  for (let rep = 0; rep < (quick ? 1 : 3); rep++) {
    const [r, t] = cpu(() => simhashFindAllSync(fps, { ids, blocks: 5, distance: 3 }));
    times.push(t);
    pairs = r.pairs.length / 2;
  }
  log(`all-pairs (5,3) on ${N}: ${median(times).toFixed(3)} s CPU (1 thread), ${pairs} pairs`);
}

// Fingerprinting: the SpamAssassin corpus.
const corpus = path.join(__dirname, '..', 'test', 'fixtures', 'corpora', 'spamassassin.jsonl.gz');
const texts = zlib.gunzipSync(fs.readFileSync(corpus)).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).text as string);
const bytes = texts.reduce((a, t) => a + Buffer.byteLength(t), 0);
const sub = texts.slice(0, quick ? 300 : 1500);
const subBytes = sub.reduce((a, t) => a + Buffer.byteLength(t), 0);
const mbps = (b: number, s: number) => (b / 1e6 / s).toFixed(1);
const rate: Record<string, number> = {};
for (const [name, opts] of [
  ['neardup seomoz (word 4-grams, MD5)', { profile: 'seomoz' }],
  ['neardup default (word 3-grams, fast64)', {}],
  ['neardup char 4-grams, fast64 (simhash-js shingles)', { unit: 'char', n: 4, lowercase: false, split: 'whitespace' }],
] as const) {
  const t = median([0, 1, 2].map(() => cpu(() => simhashFingerprintsSync(texts, opts as never))[1]));
  rate[name] = bytes / t;
  log(`fingerprint ${name}: ${mbps(bytes, t)} MB/s (${texts.length} docs, ${(bytes / 1e6).toFixed(1)} MB, ${t.toFixed(3)} s)`);
}
{
  const sh = new SimHash();
  const t = median([0, 1, 2].map(() => cpu(() => sub.map((x) => sh.hash(x)))[1]));
  rate['simhash-js'] = subBytes / t;
  log(`fingerprint simhash-js 1.0.0 (char 4-grams, Jenkins, 32-bit): ${mbps(subBytes, t)} MB/s (${sub.length} docs)`);
  for (const name of Object.keys(rate)) if (name !== 'simhash-js') log(`  ratio ${name} / simhash-js: ${(rate[name] / rate['simhash-js']).toFixed(1)}x`);
}
fs.mkdirSync(path.join(__dirname, 'out'), { recursive: true });
fs.writeFileSync(path.join(__dirname, 'out', 'simhash.txt'), out.join('\n') + '\n');
