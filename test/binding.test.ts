// Behaviour of the binding: argument errors, worker termination mid-batch, memory over many batches,
// concurrency, and the event loop during a big batch.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { shingleHashes, shingleHashesSync, type ShingleHashOptions } from '../lib/index';
import { native } from '../lib/native/addon';
import { int, randomText, rng } from './reference/random';
import { plain } from './helpers/parity';

const test = suite('binding');

type Kind = 'TypeError' | 'RangeError';
interface Case { texts: unknown; options?: unknown; kind: Kind; message: RegExp }

const buf = Buffer.from('hello world');
const BAD: Case[] = [
  // texts
  { texts: undefined, kind: 'TypeError', message: /texts to be an array of strings or Buffers, or \{ data, offsets \}/ },
  { texts: null, kind: 'TypeError', message: /texts/ },
  { texts: 42, kind: 'TypeError', message: /texts/ },
  { texts: 'a string', kind: 'TypeError', message: /texts/ },
  { texts: buf, kind: 'TypeError', message: /texts/ },
  { texts: [1], kind: 'TypeError', message: /texts\[0\] to be a string or a Uint8Array/ },
  { texts: ['ok', null], kind: 'TypeError', message: /texts\[1\]/ },
  { texts: ['ok', 'ok', {}], kind: 'TypeError', message: /texts\[2\]/ },
  { texts: [new Uint16Array(2)], kind: 'TypeError', message: /texts\[0\]/ },
  { texts: [new Int8Array(2)], kind: 'TypeError', message: /texts\[0\]/ },
  { texts: [new DataView(new ArrayBuffer(2))], kind: 'TypeError', message: /texts\[0\]/ },
  // eslint-disable-next-line no-sparse-arrays
  { texts: ['a', , 'b'], kind: 'TypeError', message: /texts\[1\]/ },
  { texts: {}, kind: 'TypeError', message: /texts\.data to be a Uint8Array/ },
  { texts: { data: 'abc', offsets: new Uint32Array([0, 3]) }, kind: 'TypeError', message: /texts\.data/ },
  { texts: { data: new Uint16Array(3), offsets: new Uint32Array([0, 3]) }, kind: 'TypeError', message: /texts\.data/ },
  { texts: { data: buf }, kind: 'TypeError', message: /texts\.offsets to be a Uint32Array or BigUint64Array/ },
  { texts: { data: buf, offsets: [0, 3] }, kind: 'TypeError', message: /texts\.offsets/ },
  { texts: { data: buf, offsets: new Int32Array([0, 3]) }, kind: 'TypeError', message: /texts\.offsets/ },
  { texts: { data: buf, offsets: new Float64Array([0, 3]) }, kind: 'TypeError', message: /texts\.offsets/ },
  { texts: { data: buf, offsets: new BigInt64Array([0n, 3n]) }, kind: 'TypeError', message: /texts\.offsets/ },
  { texts: { data: buf, offsets: new Uint32Array(0) }, kind: 'RangeError', message: /texts\.offsets must have at least one element/ },
  { texts: { data: buf, offsets: new Uint32Array([0, 5, 3]) }, kind: 'RangeError', message: /non-decreasing.*index 2/ },
  { texts: { data: buf, offsets: new Uint32Array([0, 12]) }, kind: 'RangeError', message: /at most data\.length.*index 1/ },
  { texts: { data: buf, offsets: new BigUint64Array([0n, 1n << 40n]) }, kind: 'RangeError', message: /at most data\.length/ },
  // options
  ...(['x', 5, null, [], () => 1, true] as unknown[]).map((o): Case => ({ texts: ['a'], options: o, kind: 'TypeError', message: /Expected options to be an object, got / })),
  { texts: ['a'], options: { unit: 'byte' }, kind: 'RangeError', message: /Option 'unit' must be one of 'char', 'word', got 'byte'/ },
  { texts: ['a'], options: { unit: 1 }, kind: 'TypeError', message: /Expected option 'unit' to be one of/ },
  ...([0, 4097, 1.5, NaN, -1, Infinity, -0.5, 2 ** 32] as unknown[]).map((n): Case => ({ texts: ['a'], options: { n }, kind: 'RangeError', message: /Option 'n' must be an integer from 1 to 4096/ })),
  ...(['5', 5n, null, true] as unknown[]).map((n): Case => ({ texts: ['a'], options: { n }, kind: 'TypeError', message: /Expected option 'n' to be a number/ })),
  { texts: ['a'], options: { split: 'comma' }, kind: 'RangeError', message: /Option 'split' must be one of 'whitespace', 'nonword'/ },
  { texts: ['a'], options: { split: true }, kind: 'TypeError', message: /Expected option 'split'/ },
  ...(['lowercase', 'stripPunctuation', 'foldWhitespace', 'dedupe'].flatMap((k) =>
    (['yes', 1, null, {}] as unknown[]).map((v): Case => ({ texts: ['a'], options: { [k]: v }, kind: 'TypeError', message: new RegExp(`Expected option '${k}' to be a boolean`) })))),
  { texts: ['a'], options: { short: 'all' }, kind: 'RangeError', message: /Option 'short' must be one of 'whole', 'none'/ },
  { texts: ['a'], options: { short: 0 }, kind: 'TypeError', message: /Expected option 'short'/ },
  { texts: ['a'], options: { hash: 'sha256' }, kind: 'RangeError', message: /Option 'hash' must be one of 'fast64', 'murmur3_32', 'murmur3_64', 'sha1_32', 'md5_64'/ },
  { texts: ['a'], options: { hash: 3 }, kind: 'TypeError', message: /Expected option 'hash'/ },
  ...([-1, 1.5, 2 ** 53, NaN, -Infinity] as unknown[]).map((seed): Case => ({ texts: ['a'], options: { seed }, kind: 'RangeError', message: /Option 'seed' must be a non-negative safe integer or a bigint/ })),
  ...([-1n, 1n << 64n] as unknown[]).map((seed): Case => ({ texts: ['a'], options: { seed }, kind: 'RangeError', message: /Option 'seed' must be a bigint from 0 to 2\^64-1/ })),
  ...(['1', null, {}] as unknown[]).map((seed): Case => ({ texts: ['a'], options: { seed }, kind: 'TypeError', message: /Expected option 'seed' to be a number or a bigint/ })),
];

function checkError(e: unknown, c: Case, how: string): void {
  const label = `${how} ${String(c.texts instanceof Object ? JSON.stringify(c.texts, (_, v) => (typeof v === 'bigint' ? String(v) : v)) : c.texts)} ${c.options === undefined ? '' : String(JSON.stringify(c.options, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)))}`;
  assert.ok(e instanceof Error, `${label}: not an Error: ${String(e)}`);
  assert.is((e as Error).constructor.name, c.kind, `${label}: ${(e as Error).message}`);
  assert.is((e as { code?: string }).code, 'ERR_NEARDUP_INVALID_ARGUMENT', label);
  assert.match((e as Error).message, c.message, label);
}

test('argument errors (sync): TypeError/RangeError with code ERR_NEARDUP_INVALID_ARGUMENT and a clear message', () => {
  for (const c of BAD) {
    let thrown: unknown = null;
    try {
      shingleHashesSync(c.texts as never, c.options as never);
    } catch (e) {
      thrown = e;
    }
    checkError(thrown, c, 'sync');
  }
});

test('argument errors (async): the promise rejects (nothing thrown synchronously)', async () => {
  for (const c of BAD) {
    let p: Promise<unknown> | null = null;
    try {
      p = shingleHashes(c.texts as never, c.options as never);
    } catch (e) {
      assert.unreachable(`threw synchronously: ${(e as Error).message}`);
    }
    let rejected: unknown = null;
    await p!.then(() => assert.unreachable('resolved'), (e) => { rejected = e; });
    checkError(rejected, c, 'async');
  }
});

test('valid edge arguments are accepted', async () => {
  const ok: Array<[unknown, ShingleHashOptions | undefined]> = [
    [[], undefined], [[], {}], [['a'], { n: 1 }], [['a'], { n: 4096 }], [['a'], { seed: 2 ** 53 - 1 }], [['a'], { seed: (1n << 64n) - 1n }],
    [{ data: buf, offsets: new Uint32Array([0]) }, undefined], [{ data: Buffer.alloc(0), offsets: new BigUint64Array([0n, 0n]) }, undefined],
    [['a'], { unit: undefined, n: undefined, hash: undefined } as ShingleHashOptions], [[new Uint8Array([104, 105])], { n: 1 }],
  ];
  for (const [t, o] of ok) {
    const a = shingleHashesSync(t as never, o);
    const b = await shingleHashes(t as never, o);
    assert.equal(plain(a), plain(b));
  }
  assert.is(shingleHashesSync([], {}).offsets.length, 1);
});

test('raw hash hooks validate their arguments too', () => {
  const bad: Array<[() => unknown, Kind]> = [
    [() => native.hashBytes('sha256' as never, buf), 'RangeError'],
    [() => native.hashBytes(undefined as never, buf), 'TypeError'],
    [() => native.hashBytes('md5', 'abc' as never), 'TypeError'],
    [() => native.hashBytes('murmur3_32', buf, -1), 'RangeError'],
    [() => native.murmur3MinSeq([buf], -1, 8), 'RangeError'],
    [() => native.murmur3MinSeq([buf], 0, 1.5), 'RangeError'],
    [() => native.murmur3MinSeq([buf], 0, 2 ** 21), 'RangeError'],
    [() => native.murmur3MinSeq([buf], '0' as never, 8), 'TypeError'],
    [() => native.murmur3MinSeq(5 as never, 0, 8), 'TypeError'],
  ];
  for (const [f, kind] of bad) {
    try {
      f();
      assert.unreachable(`did not throw: ${f}`);
    } catch (e) {
      assert.is((e as Error).constructor.name, kind, String(f));
      assert.is((e as { code?: string }).code, 'ERR_NEARDUP_INVALID_ARGUMENT');
    }
  }
});

test('terminating worker threads while a large batch runs leaves the process alive and working', () => {
  const out = execFileSync(process.execPath, [path.join(__dirname, 'helpers', 'worker-terminate.js')], { encoding: 'utf8', timeout: 60_000 });
  assert.is(out.trim(), 'ok 8');
});

test('memory: many batches do not grow RSS or external memory without bound', async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  assert.ok(gc, 'run with --expose-gc (tools/run-tests.mjs does)');
  const r = rng(41);
  const texts = Array.from({ length: 200 }, () => randomText(r, 300));
  const bufs = texts.map((t) => Buffer.from(t));
  const ascii = Buffer.alloc(1 << 19, 'abcdefghijklmnopqrstuvwxyz0123456789 ');
  const packed = { data: ascii, offsets: Uint32Array.from({ length: 65 }, (_, i) => i * 8192) };
  const round = async () => {
    // ~4.5 MB of results per round, from every input form, async and sync.
    await shingleHashes(texts, { n: 5 });
    await shingleHashes(bufs, { n: 3, hash: 'murmur3_32', dedupe: true });
    await shingleHashes(packed, { n: 5 });
    shingleHashesSync(bufs, { unit: 'word', n: 2, hash: 'murmur3_64' });
  };
  for (let i = 0; i < 10; i++) await round();
  gc!();
  const before = process.memoryUsage();
  for (let i = 0; i < 60; i++) {
    await round();
    if (i % 10 === 0) gc!();
  }
  gc!();
  await new Promise((res) => setImmediate(res));
  gc!();
  const after = process.memoryUsage();
  const mb = (x: number) => (x / 1048576).toFixed(1);
  // 60 rounds allocate ~270 MB of results; a leak of the results would show here many times over.
  assert.ok(after.external - before.external < 32 << 20, `external grew ${mb(before.external)} -> ${mb(after.external)} MB`);
  assert.ok(after.rss - before.rss < 96 << 20, `rss grew ${mb(before.rss)} -> ${mb(after.rss)} MB`);
});

test('concurrent batches (Promise.all) give the same results as sequential ones', async () => {
  const r = rng(51);
  const sets = Array.from({ length: 8 }, (_, k) => Array.from({ length: 300 + k * 50 }, () => randomText(r, int(r, 0, 200))));
  const opts: ShingleHashOptions[] = [{ n: 5 }, { n: 3, hash: 'murmur3_32' }, { unit: 'word', n: 2, lowercase: true }, { n: 4, dedupe: true, hash: 'sha1_32' }];
  const seq = [];
  for (let i = 0; i < sets.length; i++) seq.push(plain(await shingleHashes(sets[i], opts[i % opts.length])));
  const par = await Promise.all(sets.map((s, i) => shingleHashes(s, opts[i % opts.length])));
  par.forEach((p, i) => assert.equal(plain(p), seq[i], `batch ${i}`));
});

test('the event loop keeps ticking during a big async batch (and does not during the sync twin)', async () => {
  const doc = Buffer.alloc(1 << 20, 'the quick brown fox jumps over the lazy dog ');
  const docs = Array.from({ length: 8 }, (_, i) => doc.subarray(i));
  const opts = { n: 5, hash: 'murmur3_32' as const };
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    const t0 = ticks;
    shingleHashesSync([doc.subarray(0, 1 << 16)], opts);
    assert.is(ticks, t0, 'no tick can happen while the JS thread is blocked');
    const res = await shingleHashes(docs, opts);
    assert.ok(ticks > t0, `the interval never fired during the batch (ticks ${ticks})`);
    assert.is(res.offsets[docs.length], docs.reduce((s, d) => s + d.length - 4, 0));
  } finally {
    clearInterval(timer);
  }
});

test.run();
