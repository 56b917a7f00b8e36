// The dedup engine through the library call on packed input (no JSONL parsing): one dedup() of a whole packed
// corpus, timed with the process's CPU clock. bench/dedup.ts runs it as a child process (taskset, threads).
//   node --import tsx bench/dedup-engine.ts pack IN.jsonl OUT.packed       JSONL -> packed file (streamed)
//   node --import tsx bench/dedup-engine.ts run PACKED SETTING [TMP] [DIST]   one run; prints a JSON line
// SETTING: defaults | fast | old (old defaults: --keep-case --fast --clustering components). DIST: the dist/
// folder of the build to measure (default ../dist; another checkout's for A/B). The packed file is the format
// of bench/pack-corpus.ts (u64 LE count, count+1 u64 LE offsets, bytes).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';

export const ENGINE_SETTINGS: Record<string, Record<string, unknown>> = {
  defaults: {},
  fast: { verify: 'none' },
  old: { lowercase: false, verify: 'none', clustering: 'components' },
};

export async function packJsonl(input: string, out: string): Promise<void> {
  // the texts go to a temporary file as they are parsed; the header (count, offsets) then goes first
  const rl = readline.createInterface({ input: fs.createReadStream(input), crlfDelay: Infinity });
  const bytesFile = out + '.bytes.tmp';
  const fd = fs.openSync(bytesFile, 'w');
  const offsets: bigint[] = [0n];
  let at = 0, pending = 0;
  const parts: Buffer[] = [];
  for await (const line of rl) {
    if (!line) continue;
    const b = Buffer.from((JSON.parse(line) as { text: string }).text, 'utf8');
    parts.push(b);
    pending += b.length;
    at += b.length;
    offsets.push(BigInt(at));
    if (pending > 16 << 20) { fs.writeSync(fd, Buffer.concat(parts)); parts.length = 0; pending = 0; }
  }
  fs.writeSync(fd, Buffer.concat(parts));
  fs.closeSync(fd);
  const head = Buffer.alloc(8 + 8 * offsets.length);
  head.writeBigUInt64LE(BigInt(offsets.length - 1), 0);
  offsets.forEach((o, i) => head.writeBigUInt64LE(o, 8 + 8 * i));
  fs.writeFileSync(out + '.tmp', head);
  fs.appendFileSync(out + '.tmp', fs.readFileSync(bytesFile));
  fs.unlinkSync(bytesFile);
  fs.renameSync(out + '.tmp', out);
}

export function loadPacked(file: string): { data: Buffer; offsets: Uint32Array | BigUint64Array } {
  const buf = fs.readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const head = (buf.byteOffset + 8) % 8 === 0 ? buf : Buffer.from(buf.subarray(0, 8 + 8 * (n + 1)));
  const big = new BigUint64Array(head.buffer, head.byteOffset + 8, n + 1);
  const data = buf.subarray(8 + 8 * (n + 1));
  if (Number(big[n]) <= 0xffffffff) return { data, offsets: Uint32Array.from(big, (x) => Number(x)) };
  return { data, offsets: BigUint64Array.from(big) };
}

async function run(file: string, setting: string, tmp: string, dist: string): Promise<void> {
  const { dedup } = require(path.resolve(dist, 'index.js')) as typeof import('../lib/index');
  const packed = loadPacked(file);
  const rss0 = process.memoryUsage().rss;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const r = await dedup(packed, { ...ENGINE_SETTINGS[setting], tmp });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  console.log(JSON.stringify({
    setting, documents: packed.offsets.length - 1, bytes: packed.data.length, wall, cpu: (c.user + c.system) / 1e6,
    peakRssMb: process.resourceUsage().maxRSS / 1024, inputRssMb: rss0 / 2 ** 20, duplicates: r.duplicates,
    candidatePairs: r.candidatePairs, spilledBytes: r.spilledBytes,
  }));
}

if (require.main === module) {
  const [cmd, a, b, c, d] = process.argv.slice(2);
  if (cmd === 'pack') packJsonl(a, b).catch((e) => { console.error(e); process.exit(1); });
  else if (cmd === 'run' && ENGINE_SETTINGS[b]) run(a, b, c ?? require('node:os').tmpdir(), d ?? path.join(__dirname, '..', 'dist')).catch((e) => { console.error(e); process.exit(1); });
  else {
    console.error('usage: dedup-engine.ts pack IN.jsonl OUT.packed | run PACKED defaults|fast|old [TMP] [DIST]');
    process.exit(2);
  }
}
