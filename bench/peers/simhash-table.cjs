// neardup's side of the SimHash table rows of bench/peers.ts: the job of bench/peers/seomoz-table.cc with
// SimhashIndex (ids 0..N-1), one thread, timed with this process's CPU clock around each synchronous call.
//   node bench/peers/simhash-table.cjs BLOCKS DISTANCE FINGERPRINTS QUERIES
// Prints the same JSON line as the C++ driver (hits, matches and the checksum agree when both are right).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { SimhashIndex, setThreads } = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));

const [m, k, fpFile, qFile] = process.argv.slice(2);
const u64 = (file) => {
  const b = fs.readFileSync(file);
  return new BigUint64Array(b.buffer, b.byteOffset, b.length / 8);
};
const fps = u64(fpFile);
const queries = u64(qFile);
const ids = new BigUint64Array(fps.length);
for (let i = 0; i < fps.length; i++) ids[i] = BigInt(i);
setThreads(1);
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

const ix = new SimhashIndex({ blocks: Number(m), distance: Number(k) });
const t0 = cpu();
ix.insert(ids, fps);
const t1 = cpu();
const first = ix.findFirstManySync(queries);
const t2 = cpu();
const all = ix.findAllManySync(queries);
const t3 = cpu();
ix.remove(ids);
const t4 = cpu();
const tables = ix.stats().tables;
ix.close();

let hits = 0;
for (const f of first.found) hits += f;
const mask = (1n << 64n) - 1n;
let checksum = 0n;
for (let q = 0; q < queries.length; q++) {
  const w = BigInt(2 * q + 1);
  for (let j = all.offsets[q]; j < all.offsets[q + 1]; j++) checksum = (checksum + fps[Number(all.ids[j])] * w) & mask;
}
const s = (x) => Number(x.toFixed(4));
console.log(JSON.stringify({ tables, insert: s(t1 - t0), find_first: s(t2 - t1), find_all: s(t3 - t2), remove: s(t4 - t3),
  hits, matches: all.ids.length, checksum: String(checksum) }));
