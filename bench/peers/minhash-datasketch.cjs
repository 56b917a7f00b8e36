// neardup's side of the datasketch MinHash rows of bench/peers.ts: minhash() with the datasketch profile
// (128 values, seed 1; word 5-grams or, with 'char', code-point 5-grams of the lowercased text), one thread.
//   node bench/peers/minhash-datasketch.cjs word|char|lsh IN.jsonl OUT
// OUT gets the signatures (u32 LE, document-major); prints the CPU seconds of the call (JSON). lsh: the word
// signatures, then the LSH job of datasketch-minhash.py (LshIndex, datasketch profile, threshold 0.8: insert
// every document, key = line number, query every one); OUT gets the candidate pairs "i j" (i < j), sorted.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { minhash, setThreads, LshIndex } = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));

async function main() {
  const [unit, src, dst] = process.argv.slice(2);
  const texts = fs.readFileSync(src, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).text);
  setThreads(1);
  const c0 = process.cpuUsage();
  const r = await minhash(texts, { profile: 'datasketch', ...(unit === 'char' ? { unit: 'char' } : {}) });
  let pairs;
  if (unit === 'lsh') {
    const ix = new LshIndex({ profile: 'datasketch', numPerm: 128, threshold: 0.8 });
    const keys = new BigUint64Array(r.count);
    for (let i = 0; i < r.count; i++) keys[i] = BigInt(i);
    ix.insertSync(keys, r.signatures);
    const q = await ix.queryBatch(r.signatures);
    pairs = [];
    for (let i = 0; i < r.count; i++) {
      for (let j = q.offsets[i]; j < q.offsets[i + 1]; j++) {
        const k = Number(q.ids[j]);
        if (k > i) pairs.push(i * r.count + k);
        else if (k < i) pairs.push(k * r.count + i);
      }
    }
    pairs = [...new Set(pairs)];
  }
  const c = process.cpuUsage(c0);
  if (pairs) {
    const lines = pairs.sort((x, y) => x - y).map((p) => `${Math.floor(p / r.count)} ${p % r.count}\n`);
    fs.writeFileSync(dst, lines.join(''));
  } else fs.writeFileSync(dst, Buffer.from(r.signatures.buffer, r.signatures.byteOffset, r.signatures.byteLength));
  console.log(JSON.stringify({ cpu: Number(((c.user + c.system) / 1e6).toFixed(4)), docs: r.count, ...(pairs ? { pairs: pairs.length } : {}) }));
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
