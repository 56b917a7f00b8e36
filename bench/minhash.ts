// MinHash throughput on the SpamAssassin corpus: neardup's three profiles and the npm peers `minhash` and
// `bloom-filters` (MinHash), in one run. Per core: `taskset -c 0 node --import tsx bench/minhash.ts --threads 1`;
// all cores: `node --import tsx bench/minhash.ts`. Prints a Markdown table (medians of --runs runs).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { minhash, setThreads, getThreads, runtimeInfo, type MinHashOptions } from '../lib/index';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { Minhash } = require('minhash') as { Minhash: new (c: { numPerm: number }) => { update(s: string): void; hashvalues: number[] } };
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { MinHashFactory } = require('bloom-filters') as {
  MinHashFactory: new (n: number, max: number) => { create(): { bulkLoad(v: number[]): void } };
};

const args = process.argv.slice(2);
const opt = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const threads = opt('threads', 0);
const runs = opt('runs', 3);
const peerDocs = opt('peer-docs', 150);
if (threads > 0) setThreads(threads);

const corpus = path.join(__dirname, '..', 'test', 'fixtures', 'corpora', 'spamassassin.jsonl.gz');
const texts = zlib.gunzipSync(fs.readFileSync(corpus)).toString('utf8').trimEnd().split('\n').map((l) => JSON.parse(l).text as string);
const buffers = texts.map((t) => Buffer.from(t, 'utf8'));
const totalBytes = buffers.reduce((s, b) => s + b.length, 0);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

interface Row { name: string; docs: number; bytes: number; secs: number; cpu: number }
const rows: Row[] = [];

async function timeNeardup(name: string, options: MinHashOptions, docs: Buffer[]): Promise<void> {
  const bytes = docs.reduce((s, b) => s + b.length, 0);
  // Batches of ~4 MB, as the CLI does; one warm-up run.
  const batches: Buffer[][] = [];
  let cur: Buffer[] = [], size = 0;
  for (const d of docs) {
    cur.push(d);
    size += d.length;
    if (size >= 4 << 20) { batches.push(cur); cur = []; size = 0; }
  }
  if (cur.length) batches.push(cur);
  const once = async () => {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (const b of batches) await minhash(b, options);
    const c = process.cpuUsage(c0);
    return [Number(process.hrtime.bigint() - t0) / 1e9, (c.user + c.system) / 1e6];
  };
  await once();
  const times: number[] = [], cpus: number[] = [];
  for (let i = 0; i < runs; i++) {
    const [w, c] = await once();
    times.push(w);
    cpus.push(c);
  }
  rows.push({ name, docs: docs.length, bytes, secs: median(times), cpu: median(cpus) });
}

function words5(t: string): string[] {
  const w = t.toLowerCase().split(/\s+/).filter(Boolean);
  if (w.length < 5) return w.length ? [w.join(' ')] : [];
  const out: string[] = [];
  for (let i = 0; i + 5 <= w.length; i++) out.push(w.slice(i, i + 5).join(' '));
  return out;
}
function chars5(t: string): string[] {
  const c = Array.from(t.toLowerCase());
  if (c.length < 5) return c.length ? [c.join('')] : [];
  const out: string[] = [];
  for (let i = 0; i + 5 <= c.length; i++) out.push(c.slice(i, i + 5).join(''));
  return out;
}
function strHash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function timePeer(name: string, docs: string[], fn: (t: string) => void): void {
  const bytes = docs.reduce((s, t) => s + Buffer.byteLength(t), 0);
  const times: number[] = [], cpus: number[] = [];
  for (let r = 0; r < runs; r++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (const t of docs) fn(t);
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1e6);
  }
  rows.push({ name, docs: docs.length, bytes, secs: median(times), cpu: median(cpus) });
}

async function main(): Promise<void> {
  const cut = opt('doubri-docs', texts.length);
  await timeNeardup('neardup doubri-v1 (char5 x 800)', { profile: 'doubri-v1' }, buffers.slice(0, cut));
  await timeNeardup('neardup datasketch (word5 x 128)', { profile: 'datasketch' }, buffers);
  await timeNeardup('neardup datasketch (char5 x 128)', { profile: 'datasketch', unit: 'char' }, buffers);
  await timeNeardup('neardup fast (char5 x 128)', { profile: 'fast' }, buffers);
  await timeNeardup('neardup fast (word5 x 128, lowercase)', { profile: 'fast', unit: 'word', lowercase: true }, buffers);
  await timeNeardup('neardup fast (char5 x 512)', { profile: 'fast', numPerm: 512 }, buffers);

  // Peers (pure JS): a prefix of the corpus, they are slow. Shingling included, as for neardup.
  const few = texts.slice(0, peerDocs);
  timePeer('npm minhash (word5 x 128)', few, (t) => {
    const m = new Minhash({ numPerm: 128 });
    for (const s of words5(t)) m.update(s);
  });
  timePeer('npm minhash (char5 x 128)', few.slice(0, Math.max(10, peerDocs / 5)), (t) => {
    const m = new Minhash({ numPerm: 128 });
    for (const s of chars5(t)) m.update(s);
  });
  const factory = new MinHashFactory(128, 0xffffffff);
  timePeer('bloom-filters MinHash (word5 x 128)', few, (t) => {
    const m = factory.create();
    const v = words5(t).map(strHash);
    if (v.length) m.bulkLoad(v);
  });
  timePeer('bloom-filters MinHash (char5 x 128)', few.slice(0, Math.max(10, peerDocs / 5)), (t) => {
    const m = factory.create();
    const v = chars5(t).map(strHash);
    if (v.length) m.bulkLoad(v);
  });

  console.log(`threads: ${getThreads()}, simd: ${runtimeInfo().simd}, corpus: ${texts.length} docs, ${(totalBytes / 1e6).toFixed(1)} MB, runs: ${runs} (median)\n`);
  // Wall-clock rates, and rates per CPU-second (robust when other processes share the cores).
  console.log('| workload | docs | MB | wall s | docs/s | MB/s | CPU s | docs/CPU-s | MB/CPU-s |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  for (const r of rows)
    console.log(`| ${r.name} | ${r.docs} | ${(r.bytes / 1e6).toFixed(2)} | ${r.secs.toFixed(3)} | ${f(r.docs / r.secs)} | ${(r.bytes / 1e6 / r.secs).toFixed(2)} | ${r.cpu.toFixed(3)} | ${f(r.docs / r.cpu)} | ${(r.bytes / 1e6 / r.cpu).toFixed(2)} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
