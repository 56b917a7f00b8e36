// Child-process scenario for test/binding.test.ts: terminate worker threads while a large shingleHashes
// batch is running in them (at several moments), then check that this process still works. Prints "ok N".
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
for (let i = 0; i < 3000; i++) docs.push(doc.subarray(i % 7));
const p = addon.shingleHashes(docs, { n: 5, hash: workerData.hash, dedupe: true });
parentPort.postMessage('started');
p.then(() => parentPort.postMessage('done'), (e) => parentPort.postMessage('rejected ' + e.code));
`;

async function once(delay, hash) {
  const w = new Worker(workerCode, { eval: true, workerData: { root, hash } });
  await new Promise((resolve, reject) => {
    w.once('error', reject);
    w.on('message', (m) => { if (m === 'started') resolve(); });
  });
  await new Promise((r) => setTimeout(r, delay));
  await w.terminate();
}

(async () => {
  let n = 0;
  for (const delay of [0, 5, 30]) {
    for (const hash of ['fast64', 'murmur3_32']) {
      await once(delay, hash);
      n++;
    }
  }
  // Two at once, terminated together.
  await Promise.all([once(2, 'fast64'), once(2, 'murmur3_64')]);
  n += 2;
  const r = await addon.shingleHashes(['hello world'], { n: 5, hash: 'murmur3_32' });
  if (r.hashes.length !== 7) throw new Error('the addon no longer works after terminations');
  process.stdout.write(`ok ${n}\n`);
})().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
