// The API as a good citizen: dedup over packed input and (async) iterables gives the same result as over an
// array; `duplicate` flags match planted exact copies (independent truth: a later exact copy is always a
// duplicate, distinct random texts never are); AbortSignal and progress; the event loop keeps running during
// a large dedup(…, { verify: 'exact' }).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Readable } from 'node:stream';
import { dedup, minhashStream, minhashSync, packTexts, NeardupError, type DedupResult } from '../lib/index';
import { rng } from './reference/random';

/** n distinct random texts of about `len` characters; every 10th slot (from 5) is an exact copy of an earlier one. */
function corpus(n: number, len: number, seed = 7): { texts: string[]; copyOf: Int32Array } {
  const r = rng(seed);
  const texts: string[] = [];
  const copyOf = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    if (i % 10 === 5) {
      copyOf[i] = Math.floor(r() * i);
      texts.push(texts[copyOf[i]]);
      continue;
    }
    const words: string[] = [];
    for (let l = 0; l < len;) {
      const w = Math.floor(r() * 2 ** 31).toString(36);
      words.push(w);
      l += w.length + 1;
    }
    texts.push(words.join(' '));
  }
  return { texts, copyOf };
}

/** The planted truth: document i is a duplicate iff it is a copy of an earlier text (copies of copies included). */
function expectedDuplicate(copyOf: Int32Array): number[] {
  return Array.from(copyOf, (c) => (c >= 0 ? 1 : 0));
}

const same = (a: DedupResult, b: DedupResult) => {
  assert.equal(Array.from(a.representative), Array.from(b.representative));
  assert.equal(Array.from(a.duplicate), Array.from(b.duplicate));
  assert.is(a.duplicates, b.duplicates);
};

test('dedup: duplicate flags match planted copies; representative is the first copy', async () => {
  const { texts, copyOf } = corpus(300, 400);
  const r = await dedup(texts, { verify: 'exact' });
  assert.equal(Array.from(r.duplicate), expectedDuplicate(copyOf));
  assert.is(r.duplicates, expectedDuplicate(copyOf).reduce((a, b) => a + b, 0));
  for (let i = 0; i < texts.length; i++) {
    let first = i;
    while (copyOf[first] >= 0) first = copyOf[first];
    assert.is(r.representative[i], first, `document ${i}`);
  }
});

test('dedup: packed input, Uint8Arrays, iterables, async iterables and streams give the array result', async () => {
  const { texts } = corpus(5000, 120, 11);
  const docs: (string | null)[] = texts.map((t, i) => (i % 97 === 3 ? null : t));
  const base = await dedup(docs, { verify: 'estimate' });
  assert.ok(base.duplicates > 400);
  assert.is(base.representative[3], 3, 'a null slot keeps its number and is kept');
  const full = await dedup(texts, { verify: 'estimate' });
  same(await dedup(packTexts(texts), { verify: 'estimate' }), full);
  same(await dedup(texts.map((t) => Buffer.from(t)), { verify: 'estimate' }), full);
  same(await dedup(new Set(docs).size === docs.length ? new Set(docs) : docs.values(), { verify: 'estimate' }), base);
  async function* gen() {
    for (const d of docs) {
      if (Math.random() < 0.01) await new Promise((r) => setTimeout(r, 0));
      yield d;
    }
  }
  same(await dedup(gen(), { verify: 'estimate' }), base);
  same(await dedup(Readable.from(docs.filter((d) => d !== null)), { verify: 'estimate' }),
    await dedup(docs.filter((d) => d !== null), { verify: 'estimate' }));
  // packed input with a non-zero first offset (a view into a larger buffer), and BigUint64Array offsets
  const p = packTexts(['prefix', ...texts]);
  const view = { data: p.data, offsets: p.offsets.subarray(1) };
  same(await dedup(view, { verify: 'estimate' }), full);
  same(await dedup({ data: p.data, offsets: BigUint64Array.from(p.offsets.subarray(1), BigInt) }, { verify: 'estimate' }), full);
});

test('dedup: bad documents and sources are argument errors', async () => {
  for (const bad of [[1] as unknown, [{}], 42, 'one text', Buffer.from('one text'), { data: new Uint8Array(2), offsets: new Uint32Array([0, 3]) }]) {
    try {
      await dedup(bad as string[]);
      assert.unreachable(`accepted ${JSON.stringify(bad)}`);
    } catch (e) {
      assert.ok(e instanceof TypeError || e instanceof RangeError, String(e));
      assert.is((e as { code?: string }).code, 'ERR_NEARDUP_INVALID_ARGUMENT');
    }
  }
  try {
    await dedup([], { signal: 'stop' as unknown as AbortSignal });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, TypeError);
  }
});

test('dedup: progress after each batch, up to the total', async () => {
  const { texts } = corpus(9000, 60, 3);
  const seen: { documents: number; total?: number; bytes: number }[] = [];
  const r = await dedup(texts, { onProgress: (p) => seen.push({ ...p }) });
  assert.ok(seen.length >= 3, `${seen.length} progress calls`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].documents > seen[i - 1].documents);
  assert.is(seen[seen.length - 1].documents, texts.length);
  assert.ok(seen.every((p) => p.total === texts.length));
  assert.is(seen[seen.length - 1].bytes, packTexts(texts).data.length);
  assert.is(r.representative.length, texts.length);
  // an async iterable: no total
  const s2: (number | undefined)[] = [];
  await dedup((async function* () { yield* texts.slice(0, 5000); })(), { onProgress: (p) => s2.push(p.total) });
  assert.ok(s2.length >= 2 && s2.every((t) => t === undefined));
});

test('dedup: an AbortSignal stops the run with ERR_NEARDUP_ABORTED', async () => {
  const { texts } = corpus(20000, 200, 5);
  const ac = new AbortController();
  let calls = 0;
  const t0 = Date.now();
  try {
    await dedup(texts, { verify: 'exact', signal: ac.signal, onProgress: () => { if (++calls === 1) ac.abort(new Error('enough')); } });
    assert.unreachable('not aborted');
  } catch (e) {
    assert.instance(e, NeardupError);
    assert.is((e as NeardupError).code, 'ERR_NEARDUP_ABORTED');
    assert.is(((e as NeardupError).cause as Error).message, 'enough');
  }
  assert.is(calls, 1, 'no progress after the abort');
  const full = Date.now() - t0;
  // already aborted: rejects before any work
  try {
    await dedup(texts, { signal: AbortSignal.abort() });
    assert.unreachable();
  } catch (e) {
    assert.is((e as NeardupError).code, 'ERR_NEARDUP_ABORTED');
  }
  // an async source that never ends: the abort still settles the call
  const ac2 = new AbortController();
  setTimeout(() => ac2.abort(), 50);
  async function* endless() { for (let i = 0; ; i++) { yield texts[i % texts.length]; if (i % 1000 === 0) await new Promise((r) => setImmediate(r)); } }
  try {
    await dedup(endless(), { signal: ac2.signal });
    assert.unreachable();
  } catch (e) {
    assert.is((e as NeardupError).code, 'ERR_NEARDUP_ABORTED');
  }
  // a source that stalls (waits forever): the abort still settles the call, and the source is told to stop
  const ac3 = new AbortController();
  let returned = false;
  const stalled: AsyncIterable<string> = {
    [Symbol.asyncIterator]: () => ({
      i: 0,
      next() { return this.i++ < 10 ? Promise.resolve({ value: texts[this.i], done: false }) : new Promise<IteratorResult<string>>(() => undefined); },
      return() { returned = true; return Promise.resolve({ value: undefined, done: true }); },
    }),
  };
  setTimeout(() => ac3.abort(), 50);
  try {
    await dedup(stalled, { signal: ac3.signal });
    assert.unreachable();
  } catch (e) {
    assert.is((e as NeardupError).code, 'ERR_NEARDUP_ABORTED');
  }
  await new Promise((r) => setImmediate(r));
  assert.ok(returned, 'the source was told to stop');
  assert.ok(full < 60_000);
});

test('dedup(…, { verify: "exact" }) on a large input leaves the event loop running', async () => {
  // 4096 texts of 16 KB (64 MB): encoding them all at once on the JS thread, as before, stalled the loop for
  // seconds (over 1 s here). The bound is generous (a busy shared machine also delays timers): this is not a benchmark.
  const { texts, copyOf } = corpus(4096, 16_000, 9);
  let last = performance.now(), worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 2);
  try {
    const r = await dedup(texts, { verify: 'exact' });
    assert.equal(Array.from(r.duplicate), expectedDuplicate(copyOf));
  } finally {
    clearInterval(timer);
  }
  if (process.env.NEARDUP_TEST_VERBOSE) console.log(`longest event-loop stall: ${worst.toFixed(0)} ms`);
  assert.ok(worst < 500, `the event loop stalled for ${worst.toFixed(0)} ms`);
});

test('minhashStream: documents from arrays, packed input and async iterables, cut into batches', async () => {
  const { texts } = corpus(6000, 150, 21);
  const docs = texts.map((t, i) => (i % 101 === 7 ? null : t));
  const want = minhashSync(docs.map((d) => d ?? ''), { numPerm: 32 }).signatures;
  for (let i = 0; i < docs.length; i++) if (docs[i] === null) want.fill(0xffffffff, i * 32, (i + 1) * 32);
  const collect = async (src: Parameters<typeof minhashStream>[0]) => {
    const parts: Uint32Array[] = [];
    const progress: number[] = [];
    for await (const r of minhashStream(src, { numPerm: 32, onProgress: (p) => progress.push(p.documents) })) parts.push(r.signatures);
    const all = new Uint32Array(parts.reduce((a, p) => a + p.length, 0));
    let at = 0;
    for (const p of parts) { all.set(p, at); at += p.length; }
    return { all, batches: parts.length, progress };
  };
  const a = await collect(docs);
  assert.ok(a.batches >= 2, `${a.batches} batches`);
  assert.equal(a.all, want);
  assert.is(a.progress[a.progress.length - 1], docs.length);
  assert.equal((await collect((async function* () { yield* docs; })())).all, want);
  assert.equal((await collect(docs.values())).all, want);
  const full = minhashSync(texts, { numPerm: 32 }).signatures;
  assert.equal((await collect(packTexts(texts))).all, full);
  // batches, as before
  assert.equal((await collect([texts.slice(0, 100), texts.slice(100, 250)].values())).all, full.subarray(0, 250 * 32));
  try {
    for await (const _ of minhashStream(['x', ['y']] as unknown as string[], {})) { /* */ }
    assert.unreachable();
  } catch (e) {
    assert.instance(e, TypeError);
  }
  try {
    for await (const _ of minhashStream(docs, { signal: AbortSignal.abort() })) { /* */ }
    assert.unreachable();
  } catch (e) {
    assert.is((e as NeardupError).code, 'ERR_NEARDUP_ABORTED');
  }
});

test.run();
