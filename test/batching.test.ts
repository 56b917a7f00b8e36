// Documents packed into batches as they come (lib/io/batching.ts): every batch holds exactly the UTF-8 bytes
// Buffer.from gives for its documents, in order, null slots flagged, within the documents and bytes bounds (a
// larger document alone in its batch), from arrays, sync and async iterables alike.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BatchEncoder, encodeBatch, encodedBatches, BATCH_BYTES, BATCH_DOCS, type DocumentInput, type EncodedBatch } from '../lib/io/batching';
import { int, randomText, rng } from './reference/random';

/** The documents a batch holds, decoded back from its bytes (null for a flagged slot). */
function unpack(b: EncodedBatch): (Buffer | null)[] {
  const { data, offsets } = b.packed;
  const out: (Buffer | null)[] = [];
  for (let i = 0; i < b.count; i++) {
    const s = Number(offsets[i]), e = Number(offsets[i + 1]);
    out.push(b.valid && b.valid[i] === 0 ? (assert.is(s, e), null) : Buffer.from(data.subarray(s, e)));
  }
  assert.is(offsets.length, b.count + 1);
  assert.is(Number(offsets[0]), 0);
  assert.is(b.bytes, Number(offsets[b.count]));
  return out;
}

const expected = (d: DocumentInput) => (d === null ? null : typeof d === 'string' ? Buffer.from(d, 'utf8') : Buffer.from(d));

function documents(seed: number, n: number, big = 0): DocumentInput[] {
  const r = rng(seed);
  const docs: DocumentInput[] = [];
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.05) docs.push(null);
    else if (k < 0.1) docs.push('');
    else if (k < 0.2) docs.push(Buffer.from(randomText(r, int(r, 0, 300))));
    else if (k < 0.22) docs.push('\ud800 lone \udfff surrogates ' + randomText(r, 20));
    else if (big && k > 0.995) docs.push('x'.repeat(big) + randomText(r, 10));
    else docs.push(randomText(r, int(r, 0, 2000)));
  }
  return docs;
}

function check(batches: EncodedBatch[], docs: DocumentInput[], maxDocs: number, maxBytes: number) {
  const got = batches.flatMap(unpack);
  assert.is(got.length, docs.length);
  for (let i = 0; i < docs.length; i++) {
    const want = expected(docs[i]), g = got[i];
    assert.ok(want === null ? g === null : g !== null && want.equals(g), `document ${i}`);
  }
  for (const b of batches) {
    assert.ok(b.count >= 1 && b.count <= maxDocs, `batch of ${b.count} documents`);
    if (b.count > 1) assert.ok(b.bytes <= maxBytes, `batch of ${b.bytes} bytes over ${maxBytes}`);
  }
}

test('BatchEncoder: the bytes of Buffer.from, in order, within the bounds; a larger document alone', () => {
  for (const [seed, maxDocs, maxBytes] of [[1, 7, 5000], [2, 1, 100], [3, 100, 1 << 20], [4, 3, 1]] as const) {
    const docs = documents(seed, 600, 8000);
    const enc = new BatchEncoder(maxDocs, maxBytes);
    const batches: EncodedBatch[] = [];
    for (const d of docs) {
      const b = enc.add(d);
      if (b) batches.push(b);
    }
    const last = enc.take();
    if (last) batches.push(last);
    assert.is(enc.take(), undefined);
    check(batches, docs, maxDocs, maxBytes);
  }
});

test('encodedBatches: arrays, sync and async iterables give the same batches', async () => {
  const docs = documents(5, 9000);
  const collect = async (src: Parameters<typeof encodedBatches>[0]) => {
    const out: EncodedBatch[] = [];
    for await (const b of encodedBatches(src)) out.push(b);
    return out;
  };
  const fromArray = await collect(docs);
  check(fromArray, docs, BATCH_DOCS, BATCH_BYTES);
  const sync = await collect((function* () { yield* docs; })());
  const asyncIt = await collect((async function* () { for (const d of docs) yield d; })());
  const bytes = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const same = (x: EncodedBatch, y: EncodedBatch) => x.count === y.count && bytes(x.packed.data).equals(bytes(y.packed.data)) &&
    bytes(x.packed.offsets).equals(bytes(y.packed.offsets));
  assert.ok(fromArray.length > 2);
  for (const other of [sync, asyncIt]) assert.ok(other.length === fromArray.length && other.every((b, i) => same(b, fromArray[i])));
  const one = await encodeBatch(docs);
  check([one], docs, Infinity, Infinity);
});

test('bad documents and sources are refused', async () => {
  assert.throws(() => new BatchEncoder().add(5 as never), /document 0 must be a string/);
  const enc = new BatchEncoder(2, 10);
  enc.add('a');
  enc.add('b');
  assert.throws(() => enc.add({} as never), /document 2 must be a string/);
  await encodeBatch(42 as never).then(() => assert.unreachable(), (e) => assert.match(String(e), /must be an array/));
});

test.run();
