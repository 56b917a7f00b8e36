// The longest event-loop stall during library calls: a 1 ms timer records the largest gap between its ticks
// (wall) and the largest main-thread CPU time between two ticks (from /proc/self/task/PID/schedstat: the
// time the JS thread itself ran, which another process's load does not inflate). Results: bench/RESULTS.md,
// "Event loop".
//
//   node --import tsx bench/event-loop.ts [--runs 5] [--file F.jsonl] [--mb 200]
//
// Cases: dedup(texts, {verify: 'exact'}) on arrays of strings (the SpamAssassin texts, once and four times);
// dedup() and minhashStream() on an async iterable of a JSONL file's texts (readJsonl's batches, yielded one
// document at a time, as a pipeline would); without --file, a JSONL file of --mb MB of bench/dedup-noisy-corpus.ts
// documents is written to the temporary folder first.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dedup, minhashStream, readJsonl } from '../lib/index';
import { loadTexts, machine, median } from './corpus';
import { generateNoisyCorpus } from './dedup-noisy-corpus';

const args = process.argv.slice(2);
const arg = (name: string) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : undefined; };
const runs = Number(arg('runs') ?? 5);

const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const threadNs = () => Number(fs.readFileSync(schedstat, 'utf8').split(' ')[0]);

async function stall(f: () => Promise<unknown>): Promise<{ wall: number; cpu: number; total: number }> {
  let last = performance.now(), lastCpu = threadNs(), wall = 0, cpu = 0;
  const t = setInterval(() => {
    const now = performance.now(), c = threadNs();
    wall = Math.max(wall, now - last);
    cpu = Math.max(cpu, (c - lastCpu) / 1e6);
    last = now;
    lastCpu = c;
  }, 1);
  const t0 = performance.now();
  await f();
  clearInterval(t);
  return { wall, cpu, total: performance.now() - t0 };
}

function generated(mb: number): string {
  const file = path.join(os.tmpdir(), `neardup-event-loop-${mb}mb.jsonl`);
  if (!fs.existsSync(file)) generateNoisyCorpus(file, mb << 20);
  return file;
}

const fileTexts = (file: string) => (async function* () { for await (const b of readJsonl([file])) yield* b.texts; })();

(async () => {
  const file = arg('file') ?? generated(Number(arg('mb') ?? 200));
  const cases: [string, () => Promise<unknown>][] = [];
  const spam = loadTexts();
  for (const copies of [1, 4]) {
    const texts = Array.from({ length: copies }, () => spam).flat();
    const mbText = (texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / 2 ** 20).toFixed(0);
    cases.push([`dedup(texts, verify exact): ${texts.length} strings, ${mbText} MB (SpamAssassin × ${copies})`, () => dedup(texts, { verify: 'exact' } as never)]);
  }
  const mb = (fs.statSync(file).size / 2 ** 20).toFixed(0);
  cases.push([`dedup(file iterable): ${mb} MB JSONL`, () => dedup(fileTexts(file))]);
  cases.push([`dedup(file iterable, verify exact): ${mb} MB JSONL`, () => dedup(fileTexts(file), { verify: 'exact' } as never)]);
  cases.push([`minhashStream(file iterable): ${mb} MB JSONL`, async () => { for await (const _ of minhashStream(fileTexts(file))) { /* signatures dropped */ } }]);
  console.log(`${machine()}; ${runs} runs each; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
  console.log('| call | longest stall, wall ms: median (range) | longest main-thread CPU between ticks, ms: median (range) | whole call s (median) |');
  console.log('|---|---|---|---|');
  for (const [name, f] of cases) {
    const rs = [];
    for (let i = 0; i < runs; i++) rs.push(await stall(f));
    const fmt = (xs: number[]) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
    console.log(`| ${name} | ${fmt(rs.map((r) => r.wall))} | ${fmt(rs.map((r) => r.cpu))} | ${(median(rs.map((r) => r.total)) / 1000).toFixed(2)} |`);
  }
  console.log(`\nload average after: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
})();
