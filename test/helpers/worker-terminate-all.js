// Child-process scenario for test/crash.test.ts: worker.terminate() while a batch of each kind runs in the
// worker (minhash, shingleHashes, ParagraphFilter, LshDedup, LshIndex), at several moments, repeatedly.
// Before the fix the whole process aborted ("terminate called after throwing an instance of
// 'Napi::Error'"). Prints "ok N" when every worker ended, this process survived and the addon still works.
'use strict';
const { Worker } = require('node:worker_threads');
const path = require('node:path');
const root = path.join(__dirname, '..', '..');
const addon = require('node-gyp-build')(root);

const workerCode = `
const { parentPort, workerData } = require('node:worker_threads');
const addon = require('node-gyp-build')(workerData.root);
const docs = [];
const doc = Buffer.alloc(4096, 'abcdefghij klmnopqrstuvwxyz ');
for (let i = 0; i < 2000; i++) docs.push(doc.subarray(i % 7));
const sigs = new Uint32Array(20000 * 128);
for (let i = 0; i < sigs.length; i++) sigs[i] = (i * 2654435761) >>> 0;
let p;
switch (workerData.kind) {
  case 'minhash': p = addon.minhash(docs, { numPerm: 256 }); break;
  case 'shingleHashes': p = addon.shingleHashes(docs, { n: 5, dedupe: true }); break;
  case 'paragraphs': {
    const f = new addon.ParagraphFilter({});
    const texts = docs.map((d, i) => d.toString() + i);
    const offs = new Uint32Array(texts.length + 1);
    for (let i = 0; i <= texts.length; i++) offs[i] = i;
    p = f.pushParagraphs(texts, offs);
    break;
  }
  case 'dedup': {
    const d = new addon.LshDedup({ b: 16, r: 8, numPerm: 128, verify: 'exact', tmp: require('node:os').tmpdir() });
    p = d.add(docs).then(() => d.add(docs)).then(() => d.finish());
    break;
  }
  case 'lsh': {
    const ix = new addon.LshIndex({ numPerm: 128, b: 16, r: 8 });
    const ids = new BigUint64Array(20000);
    for (let i = 0; i < ids.length; i++) ids[i] = BigInt(i);
    p = ix.insert(ids, sigs).then(() => ix.queryBatch(sigs));
    break;
  }
}
parentPort.postMessage('started');
p.then(() => parentPort.postMessage('done'), (e) => parentPort.postMessage('rejected ' + e.code));
`;

async function once(delay, kind) {
  const w = new Worker(workerCode, { eval: true, workerData: { root, kind } });
  await new Promise((resolve, reject) => {
    w.once('error', reject);
    w.on('message', (m) => { if (m === 'started') resolve(); });
  });
  await new Promise((r) => setTimeout(r, delay));
  await w.terminate();
}

(async () => {
  let n = 0;
  const kinds = ['minhash', 'shingleHashes', 'paragraphs', 'dedup', 'lsh'];
  for (let round = 0; round < 2; round++) {
    for (const delay of [0, 3, 15, 60]) {
      for (const kind of kinds) {
        await once(delay, kind);
        n++;
      }
    }
  }
  await Promise.all(kinds.map((k) => once(2, k)));
  n += kinds.length;
  const r = await addon.minhash(['hello world, this is a test'], { numPerm: 16 });
  if (r.signatures.length !== 16) throw new Error('the addon no longer works after terminations');
  process.stdout.write(`ok ${n}\n`);
})().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
