// Shingle-hash throughput on the SpamAssassin corpus: char 5-grams and word 5-grams, fast64 and murmur3_32,
// per core (1 thread) and with all cores. Run: node --import tsx bench/shingles.ts  (from the repo root)
// For a true per-core figure run it under `taskset -c 0`.
import { packTexts, setThreads, shingleHashes, runtimeInfo, type ShingleHashOptions } from '../lib/index';
import { loadTexts, machine, timeCpu } from './corpus';

async function main() {
  const texts = loadTexts();
  const packed = packTexts(texts);
  const mb = packed.data.byteLength / 1e6;
  console.log(`# shingle hashing — ${machine()}, simd ${runtimeInfo().simd}`);
  console.log(`corpus: ${texts.length} docs, ${mb.toFixed(1)} MB\n`);
  console.log('| shingles | hash | threads | wall s | CPU s | MB/s (wall) | MB/s per CPU-second | shingles/s (wall) |');
  console.log('|---|---|---|---|---|---|---|---|');
  const cases: [string, ShingleHashOptions][] = [
    ['char 5', { unit: 'char', n: 5, hash: 'fast64' }],
    ['char 5', { unit: 'char', n: 5, hash: 'murmur3_32' }],
    ['word 5', { unit: 'word', n: 5, hash: 'fast64' }],
    ['char 5 lowercase+dedupe', { unit: 'char', n: 5, hash: 'fast64', lowercase: true, dedupe: true }],
  ];
  const all = runtimeInfo().defaultThreads;
  for (const [name, opts] of cases) {
    for (const threads of [1, all]) {
      setThreads(threads);
      let count = 0;
      const t = await timeCpu(async () => {
        const r = await shingleHashes(packed, opts);
        count = r.hashes.length;
      });
      console.log(`| ${name} | ${opts.hash} | ${threads} | ${t.wall.toFixed(3)} | ${t.cpu.toFixed(3)} | ${(mb / t.wall).toFixed(0)} | ${(mb / t.cpu).toFixed(0)} | ${(count / t.wall / 1e6).toFixed(1)} M |`);
    }
  }
  setThreads(0);
}

main();
