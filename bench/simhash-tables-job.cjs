'use strict';
// One SimHash tables job in its own process (bench/simhash-tables.ts runs it; so can the peers runner):
//   taskset -c 0 node bench/simhash-tables-job.cjs ADDON M K [N]
// ADDON: a neardup.node (this tree's build/Release/neardup.node, or an older build for A/B).
// Prints one JSON line: {"peer":"neardup","m","k","n","insert","findFirst","findAll","remove","hits","matches",
// "maxRssKb"}. The job: N random
// fingerprints (sfc32, seed 12345: the same values), N queries (even: a stored fingerprint with 0..3 flipped
// bits, odd: fresh random), insert, findFirst and findAll of every query (one batch call each, one thread),
// remove of every id. Times: process CPU seconds (process.cpuUsage) around each call; maxRssKb: the
// process's peak RSS (Node included: the whole job, measured as the C++ driver's).
const [addonPath, mArg, kArg, nArg] = process.argv.slice(2);
if (!addonPath || !mArg || !kArg) {
  process.stderr.write('usage: node bench/simhash-tables-job.cjs ADDON M K [N]\n');
  process.exit(2);
}
const addon = require(require('node:path').resolve(addonPath));
const m = Number(mArg), k = Number(kArg), n = Number(nArg ?? 1_000_000);

function sfc32(seed) {
  let a = seed >>> 0, b = 0x9e3779b9, c = 0x243f6a88, d = 0xb7e15162;
  return () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
}

// The values are written through 32-bit views (little-endian: word 2i is the low half), so that making
// them leaves no BigInt garbage in the heap whose peak RSS is measured.
const next = sfc32(12345);
const fps = new BigUint64Array(n), ids = new BigUint64Array(n), queries = new BigUint64Array(n);
const f32 = new Uint32Array(fps.buffer), i32 = new Uint32Array(ids.buffer), q32 = new Uint32Array(queries.buffer);
for (let i = 0; i < n; i++) {
  f32[2 * i + 1] = next();
  f32[2 * i] = next();
  i32[2 * i] = i;
}
for (let i = 0; i < n; i++) {
  if (i % 2 === 0) {
    const j = next() % n;
    let lo = f32[2 * j], hi = f32[2 * j + 1];
    const flips = next() % 4;
    for (let f = 0; f < flips; f++) {
      const b = next() % 64;
      if (b < 32) lo = (lo ^ (1 << b)) >>> 0;
      else hi = (hi ^ (1 << (b - 32))) >>> 0;
    }
    q32[2 * i] = lo;
    q32[2 * i + 1] = hi;
  } else {
    q32[2 * i + 1] = next();
    q32[2 * i] = next();
  }
}

const cpu = (f) => {
  const t0 = process.cpuUsage();
  const r = f();
  const t = process.cpuUsage(t0);
  return [r, (t.user + t.system) / 1e6];
};
addon.setThreads?.(1);
const ix = new addon.SimhashIndex({ blocks: m, distance: k });
const [, insert] = cpu(() => ix.insert(ids, fps));
let hugePagesKb = null;
try {
  const m1 = /AnonHugePages:\s+(\d+)/.exec(require('node:fs').readFileSync('/proc/self/smaps_rollup', 'utf8'));
  if (m1) hugePagesKb = Number(m1[1]);
} catch {
  // not Linux
}
let [r, findFirst] = cpu(() => ix.findFirstManySync(queries));
let hits = 0;
for (let i = 0; i < n; i++) hits += r.found[i];
r = undefined;
let findAll;
[r, findAll] = cpu(() => ix.findAllManySync(queries));
const matches = r.ids.length;
r = undefined;
const [, remove] = cpu(() => ix.remove(ids));
const maxRssKb = process.resourceUsage().maxRSS;
ix.close();
// How much of the memory is in transparent huge pages (Linux; read after the job: a diagnostic, since the
// index asks for them and the lookups' TLB misses depend on getting them).
const hugeKb = hugePagesKb;
process.stdout.write(JSON.stringify({ peer: 'neardup', m, k, n, insert, findFirst, findAll, remove, hits, matches, maxRssKb, hugeKb }) + '\n');
