// close() on LshIndex and DedupSession returns at once while work runs on the pool: the running call still
// settles (with its result or ERR_NEARDUP_CANCELLED), work queued behind it is cancelled, later calls throw
// ERR_NEARDUP_CLOSED, and the native state is freed by the last worker (no crash, no use after free).
// "Returns at once" is checked by ordering, not by time: after close(), a short job that needs several
// round trips through libuv's thread pool (fs.readFile) completes before the long call settles. A close()
// that waited for the running call would let the long call settle first.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { promises as fsp } from 'node:fs';
import { DedupSession, LshIndex, type NeardupError } from '../lib/index';

const probe = () => fsp.readFile(__filename);
const outcome = (p: Promise<unknown>) => p.then(() => 'result', (e: NeardupError) => e.code ?? String(e));

async function closeWhileRunning(start: () => Promise<unknown>, close: () => void): Promise<{ order: string[]; r: string }> {
  const order: string[] = [];
  const pending = outcome(start()).then((r) => {
    order.push('pending settled');
    return r;
  });
  await probe(); // the long call is on a pool thread by now
  close();
  order.push('close returned');
  const p = probe().then(() => order.push('probe done'));
  const r = await pending;
  await p;
  return { order, r };
}

const isClosed = (e: unknown) => (e as NeardupError).code === 'ERR_NEARDUP_CLOSED';

test('LshIndex.close() during a large queryBatch returns at once; queued insert is cancelled', async () => {
  const n = 12000, k = 16;
  const sigs = new Uint32Array(n * k);
  let s = 12345;
  for (let i = 0; i < sigs.length; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    sigs[i] = s % 150; // big buckets: each query returns thousands of ids
  }
  const idx = new LshIndex({ profile: 'fast', numPerm: k, b: 16, r: 1 });
  idx.insertSync(Array.from({ length: n }, (_, i) => i), sigs);
  let queued: Promise<string> = Promise.resolve('');
  const { order, r } = await closeWhileRunning(
    () => {
      const q = idx.queryBatch(sigs);
      return q;
    },
    () => {
      queued = outcome(idx.insert([1_000_000n], sigs.subarray(0, k))); // waits for the query's lock
      idx.close();
    },
  );
  assert.equal(order[0], 'close returned');
  assert.ok(order.indexOf('probe done') < order.indexOf('pending settled'), `close() waited for the running query: ${order}`);
  assert.ok(r === 'result' || r === 'ERR_NEARDUP_CANCELLED', r);
  assert.is(await queued, 'ERR_NEARDUP_CANCELLED');
  assert.throws(() => idx.size, isClosed);
  assert.throws(() => idx.queryBatch(sigs), isClosed);
  idx.close(); // twice is fine
});

test('DedupSession.close() during finish() returns at once; finish still settles', async () => {
  // 2,000 families of 60 near-copies, with words of their own (families that shared words made band buckets of
  // thousands, and so billions of pairs, once buckets were no longer capped): ~3.5M verified pairs
  const n = 120000;
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = i % 2000, a: string[] = [];
    for (let j = 0; j < 30; j++) a.push('w' + (t * 30 + j).toString(36));
    a.push('x' + (i % 3));
    texts.push(a.join(' '));
  }
  const s = new DedupSession({ threshold: 0.5, verify: 'estimate', pairs: true, numPerm: 64 });
  for (let i = 0; i < n; i += 20000) await s.add(texts.slice(i, i + 20000));
  let result: unknown;
  const { order, r } = await closeWhileRunning(
    () => s.finish().then((x) => (result = x)),
    () => s.close(),
  );
  assert.equal(order[0], 'close returned');
  assert.ok(order.indexOf('probe done') < order.indexOf('pending settled'), `close() waited for finish(): ${order}`);
  assert.ok(r === 'result' || r === 'ERR_NEARDUP_CANCELLED', r);
  if (r === 'result') assert.ok((result as { duplicates: number }).duplicates > 0);
  assert.throws(() => s.add(['a']), isClosed);
  await s.finish().then(() => assert.unreachable('finish after close'), (e) => assert.ok(isClosed(e)));
  s.close();
});

test('DedupSession: an add() still waiting in the wrapper when close() is called rejects ERR_NEARDUP_CLOSED', async () => {
  const s = new DedupSession({ threshold: 0.5 });
  const texts = Array.from({ length: 3000 }, (_, i) => `document number ${i % 50} with some words`);
  const a = outcome(s.add(texts));
  const b = outcome(s.add(texts));
  await Promise.resolve();
  s.close();
  const [ra, rb] = await Promise.all([a, b]);
  assert.ok(ra === 'result' || ra === 'ERR_NEARDUP_CANCELLED' || ra === 'ERR_NEARDUP_CLOSED', ra);
  assert.is(rb, 'ERR_NEARDUP_CLOSED');
});

test('DedupSession: add()s issued at once (their encodings finishing out of order) enter in call order; a failed add() fails the session', async () => {
  let x = 7;
  const rnd = () => { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; return x / 2 ** 32; };
  const bases = Array.from({ length: 400 }, (_, i) => Array.from({ length: 10 + (i % 7) * 40 }, () => 'w' + Math.floor(rnd() * 300)));
  const texts = Array.from({ length: 3000 }, (_, i) => bases[i % 400].map((w) => (rnd() < 0.03 ? 'x' + Math.floor(rnd() * 99) : w)).join(' '));
  const one = new DedupSession({ threshold: 0.5, pairs: true });
  await one.add(texts);
  const want = await one.finish();
  one.close();
  assert.ok(want.duplicates > 100);
  const s = new DedupSession({ threshold: 0.5, pairs: true });
  // big batches first: their encoding takes longer than that of the small ones behind them
  const cuts = [0, 1400, 2000, 2050, 2055, 2300, 2900, 3000];
  await Promise.all(cuts.slice(1).map((end, i) => s.add(texts.slice(cuts[i], end))));
  const got = await s.finish();
  s.close();
  assert.equal(Array.from(got.representative), Array.from(want.representative));
  assert.equal(Array.from(got.pairA), Array.from(want.pairA));
  assert.equal(Array.from(got.pairB), Array.from(want.pairB));
  // a batch over the memory budget fails its add(), the ones after it and finish()
  const f = new DedupSession({ memory: 64 * 2 ** 20 });
  const big = 'word '.repeat(250_000);
  const r = await Promise.all([f.add(texts.slice(0, 10)), f.add(['x', big]), f.add(texts.slice(10, 20))].map(outcome));
  assert.equal(r, ['result', 'ERR_NEARDUP_INVALID_INPUT', 'ERR_NEARDUP_INVALID_INPUT']);
  assert.is(await outcome(f.finish()), 'ERR_NEARDUP_INVALID_INPUT');
  f.close();
  // close() with add()s waiting for their turn natively: every one settles
  const c = new DedupSession({});
  const pend = [0, 1, 2, 3].map((k) => outcome(c.add(texts.slice(k * 700, k * 700 + 700))));
  await probe();
  c.close();
  for (const o of await Promise.all(pend)) assert.ok(['result', 'ERR_NEARDUP_CANCELLED', 'ERR_NEARDUP_CLOSED'].includes(o), o);
});

test.run();
