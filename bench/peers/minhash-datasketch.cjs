// neardup's side of the datasketch MinHash rows of bench/peers.ts: minhash() with the datasketch profile
// (128 values, seed 1; word 5-grams or, with 'char', code-point 5-grams of the lowercased text), one thread.
//   node bench/peers/minhash-datasketch.cjs word|char IN.jsonl OUT.u32
// OUT.u32 gets the signatures (u32 LE, document-major); prints the CPU seconds of the call (JSON).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { minhash, setThreads } = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));

async function main() {
  const [unit, src, dst] = process.argv.slice(2);
  const texts = fs.readFileSync(src, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).text);
  setThreads(1);
  const c0 = process.cpuUsage();
  const r = await minhash(texts, { profile: 'datasketch', ...(unit === 'char' ? { unit: 'char' } : {}) });
  const c = process.cpuUsage(c0);
  fs.writeFileSync(dst, Buffer.from(r.signatures.buffer, r.signatures.byteOffset, r.signatures.byteLength));
  console.log(JSON.stringify({ cpu: Number(((c.user + c.system) / 1e6).toFixed(4)), docs: r.count }));
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
