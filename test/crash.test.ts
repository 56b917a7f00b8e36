// Hardening regressions (issue 14): results too large for one ArrayBuffer, worker.terminate() mid-batch,
// loaders that trusted header fields or skipped checksums, NUL bytes in paths, loadSeen() after a push.
// Crafted files are built from real saved files with their CRC-32C fields recomputed, so each check below
// is reached (a checksum mismatch would hide it).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  LshIndex, NeardupError, ParagraphFilter, SignatureWriter, SimhashIndex, DedupSession, doubriSelf, minhash, minhashSync,
  readSignatureFile, shingleHashes, simhashFindAll, simhashFindAllStream, simhashFindAllSync, simhashFingerprints,
} from '../lib/index';
import { native } from '../lib/native/addon';
import { cli } from './cli-helper';
import { TSX_FLAGS } from './support/tsx';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-crash-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const crc = (b: Uint8Array) => native.crc32c(b);

/** Recomputes the payload CRC (offset 32) and header CRC (offset 60) of a common-header file. */
function fixCrcs(b: Buffer): Buffer {
  b.writeUInt32LE(crc(b.subarray(64)), 32);
  b.writeUInt32LE(crc(b.subarray(0, 60)), 60);
  return b;
}
const isCode = (code: string, re?: RegExp) => (e: unknown) =>
  (e as { code?: string }).code === code && (re === undefined || re.test((e as Error).message));
async function rejects(p: Promise<unknown> | (() => unknown), check: (e: unknown) => boolean, what: string) {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    assert.ok(check(e), `${what}: unexpected error ${(e as Error)?.stack ?? e}`);
    return;
  }
  assert.unreachable(`${what}: did not throw`);
}

// ---- results larger than an ArrayBuffer ----------------------------------------------------------------

test('a result larger than one ArrayBuffer is refused with ERR_NEARDUP_RESULT_TOO_LARGE on every result path', async () => {
  const full = native.setMaxResultBytes(require('node:buffer').constants.MAX_LENGTH);
  assert.is(full, require('node:buffer').constants.MAX_LENGTH);
  const docs = Array.from({ length: 50 }, (_, i) => `document number ${i} with some words in it`);
  const sigs = minhashSync(docs, { numPerm: 64 }).signatures;
  const ids = BigUint64Array.from(docs.map((_, i) => BigInt(i)));
  const same = new BigUint64Array(60).fill(12345n);
  const lsh = new LshIndex({ numPerm: 64, b: 8, r: 8 });
  await lsh.insert(ids, sigs);
  await lsh.insert(ids.map((x) => x + 1000n), sigs);
  const six = new SimhashIndex({ distance: 3 });
  six.insert(BigUint64Array.from({ length: 60 }, (_, i) => BigInt(i)), same);
  const pf = new ParagraphFilter();
  const session = new DedupSession({ numPerm: 64, b: 8, r: 8, pairs: true });
  await session.add(docs.concat(docs));
  try {
    native.setMaxResultBytes(256);  // every call below makes a result of more than 256 bytes
    const too = isCode('ERR_NEARDUP_RESULT_TOO_LARGE', /split the batch/);
    await rejects(minhash(docs, { numPerm: 64 }), too, 'minhash');
    await rejects(() => minhashSync(docs, { numPerm: 64 }), too, 'minhashSync');
    await rejects(shingleHashes(docs, { n: 2 }), too, 'shingleHashes');
    await rejects(simhashFingerprints(docs), too, 'simhashFingerprints');
    await rejects(simhashFindAll(same, { distance: 3 }), too, 'simhashFindAll');
    await rejects(() => simhashFindAllSync(same, { distance: 3 }), too, 'simhashFindAllSync');
    await rejects(lsh.queryBatch(sigs), too, 'LshIndex.queryBatch');
    await rejects(() => lsh.candidatePairs(), too, 'LshIndex.candidatePairs');
    await rejects(() => lsh.clusters(), too, 'LshIndex.clusters');
    await rejects(six.findAllMany(same), too, 'SimhashIndex.findAllMany');
    await rejects(() => six.findAll(12345n), too, 'SimhashIndex.findAll');
    await rejects(pf.pushDocuments(docs.map((d) => [d, d + ' x', d + ' y'])), too, 'ParagraphFilter.pushDocuments');
    await rejects(session.finish(), too, 'DedupSession.finish');
  } finally {
    native.setMaxResultBytes(require('node:buffer').constants.MAX_LENGTH);
  }
  // Nothing was left half-built: the same calls work again with the real limit.
  assert.is((await minhash(docs, { numPerm: 64 })).signatures.length, 50 * 64);
  assert.is((await lsh.queryBatch(sigs)).offsets.length, 51);
  assert.is(six.findAll(12345n).length, 60);
  lsh.close();
  six.close();
  pf.close();
});

test('cli: simhash find-all --ids over a too-large result fails with a clear error (NEARDUP_TEST_MAX_RESULT_BYTES)', () => {
  const input = Array.from({ length: 40 }, (_, i) => `${i} 1234567`).join('\n') + '\n';
  process.env.NEARDUP_TEST_MAX_RESULT_BYTES = '512';
  let r: ReturnType<typeof cli>;
  try {
    r = cli(tmp, ['simhash', 'find-all', '--ids', '--distance', '3'], input);
  } finally {
    delete process.env.NEARDUP_TEST_MAX_RESULT_BYTES;
  }
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /split the batch/);
  assert.not.match(r.stderr, /internal error|Aborted|SIGSEGV/i);
  const ok = cli(tmp, ['simhash', 'find-all', '--ids', '--distance', '3'], input);
  assert.is(ok.code, 0, ok.stderr);
  assert.is(ok.stdout.toString().trim().split('\n').length, 40 * 39 / 2);
});

test('cli: simhash find-all streams its pairs: results capped at 512 bytes still print every pair (chunks of whole first ids)', () => {
  const input = Array.from({ length: 40 }, (_, i) => `${i} 1234567`).join('\n') + '\n';
  process.env.NEARDUP_TEST_MAX_RESULT_BYTES = '512';
  process.env.NEARDUP_TEST_CHUNK_PAIRS = '16';
  let r: ReturnType<typeof cli>;
  try {
    r = cli(tmp, ['simhash', 'find-all', '--ids', '--distance', '3'], input);
  } finally {
    delete process.env.NEARDUP_TEST_MAX_RESULT_BYTES;
    delete process.env.NEARDUP_TEST_CHUNK_PAIRS;
  }
  assert.is(r.code, 0, r.stderr);
  const want: string[] = [];
  for (let a = 0; a < 40; a++) for (let b = a + 1; b < 40; b++) want.push(`${a} ${b}`);
  assert.equal(r.stdout.toString().trim().split('\n'), want.sort((x, y) => {
    const [xa, xb] = x.split(' ').map(Number), [ya, yb] = y.split(' ').map(Number);
    return xa - ya || xb - yb;
  }));
  assert.match(r.stderr, /"pairs":780/);
});

// ---- quadratic outputs: caps and streams -----------------------------------------------------------------

test('simhashFindAll: maxPairs caps the pairs (ERR_NEARDUP_TOO_MANY_RESULTS), clusters without pairs need no cap', async () => {
  const same = new BigUint64Array(200).fill(0xfeedn);  // 19,900 pairs
  const ids = BigUint64Array.from({ length: 200 }, (_, i) => BigInt(1000 - i));
  const too = isCode('ERR_NEARDUP_TOO_MANY_RESULTS', /19899 pairs.*simhashFindAllStream/);
  await rejects(simhashFindAll(same, { ids, maxPairs: 19_899 }), too, 'simhashFindAll');
  await rejects(() => simhashFindAllSync(same, { ids, maxPairs: 19_899 }), too, 'simhashFindAllSync');
  assert.is((await simhashFindAll(same, { ids, maxPairs: 19_900 })).pairs.length, 2 * 19_900);
  assert.is(simhashFindAllSync(same, { maxPairs: 19_900 }).pairs.length, 2 * 19_900);
  const bad = isCode('ERR_NEARDUP_INVALID_ARGUMENT', /maxPairs/);
  await rejects(() => simhashFindAll(same, { maxPairs: -1 }), bad, 'maxPairs -1');
  await rejects(() => simhashFindAllSync(same, { maxPairs: 1.5 }), bad, 'maxPairs 1.5');
  // clusters only: no pairs held, so no cap applies
  const c = await simhashFindAll(same, { ids, clusters: true, pairs: false, maxPairs: 0 });
  assert.is(c.pairs.length, 0);
  assert.equal(Array.from(c.clusters!.offsets), [0, 200]);
  assert.equal(c.clusters!.ids, BigUint64Array.from({ length: 200 }, (_, i) => BigInt(801 + i)));
  assert.equal(simhashFindAllSync(same, { ids, clusters: true, pairs: false }).clusters, c.clusters);
});

test('simhashFindAllStream: the pairs of simhashFindAll in the same order, in bounded chunks, repeated ids merged', async () => {
  let x = 99n;
  const rnd = () => (x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n));
  const fps = new BigUint64Array(1500);
  for (let i = 0; i < fps.length; i++) fps[i] = i % 4 === 0 ? 0xabcdefn ^ (1n << BigInt(i % 64)) : rnd();
  const ids = BigUint64Array.from({ length: fps.length }, (_, i) => BigInt((i * 7919) % 1200));  // repeats
  for (const o of [{}, { ids }]) {
    const want = (await simhashFindAll(fps, { ...o, distance: 3 })).pairs;
    assert.ok(want.length > 2 * 10_000);
    for (const chunkPairs of [1, 3000, 1 << 20]) {
      const got: bigint[] = [];
      let chunks = 0;
      for await (const { a, b } of simhashFindAllStream(fps, { ...o, distance: 3, chunkPairs })) {
        assert.is(a.length, b.length);
        if (chunkPairs === 3000) assert.ok(a.length <= 3000 + 400, `chunk of ${a.length}`);
        for (let i = 0; i < a.length; i++) got.push(a[i], b[i]);
        chunks++;
      }
      assert.equal(BigUint64Array.from(got), want, `chunkPairs ${chunkPairs}`);
      if (chunkPairs === 1 << 20) assert.is(chunks, 1);
      if (chunkPairs === 3000) assert.ok(chunks > 3);
    }
  }
  const none: unknown[] = [];
  for await (const c of simhashFindAllStream(new BigUint64Array([0n, (1n << 64n) - 1n]))) none.push(c);
  assert.is(none.length, 0);
  await rejects(async () => {
    for await (const _ of simhashFindAllStream(fps, { chunkPairs: 0 })) void _;
  }, isCode('ERR_NEARDUP_INVALID_ARGUMENT', /chunkPairs/), 'chunkPairs 0');
});

// ---- worker.terminate() ---------------------------------------------------------------------------------

test('worker.terminate() during minhash/shingleHashes/ParagraphFilter/dedup/LshIndex batches leaves the process alive', () => {
  const out = execFileSync(process.execPath, [path.join(__dirname, 'helpers', 'worker-terminate-all.js')],
    { encoding: 'utf8', timeout: 240_000, cwd: path.join(__dirname, '..') });
  assert.match(out, /^ok 45$/m);
});

// Issue 25: the scenario above loads the addon on its main thread too, so a Worker's exit never freed the last
// environment that held it and Node never unloaded it. Here only the Workers load it: on the old code each
// termination unloaded the library under the native pool's threads (SIGSEGV under load), and the addon was
// no longer mapped afterwards (the deterministic half of the check, on Linux).
test('worker.terminate() during every async method of the API, the addon loaded in Workers only: the process survives', () => {
  const { CASES } = require('./helpers/api-cases') as typeof import('./helpers/api-cases');
  const out = execFileSync(process.execPath, [...TSX_FLAGS, path.join(__dirname, 'helpers', 'worker-terminate-api.ts'), '1'],
    // 8 pool threads on any machine: more helper tasks per batch, more of them late, a wider window
    { encoding: 'utf8', timeout: 120_000, cwd: path.join(__dirname, '..'), env: { ...process.env, NEARDUP_THREADS: '8' } });
  if (process.platform === 'linux') assert.match(out, /^addon still mapped: yes$/m);
  assert.match(out, new RegExp(`^survived ${CASES.length + 12}$`, 'm'));
});

// ---- loaders --------------------------------------------------------------------------------------------

async function savedLsh(): Promise<Buffer> {
  const ix = new LshIndex({ numPerm: 16, b: 4, r: 4 });
  const sigs = minhashSync(['alpha beta gamma delta', 'alpha beta gamma delta', 'something else entirely'], { numPerm: 16 }).signatures;
  await ix.insert([1, 2, 3], sigs);
  const f = path.join(tmp, 'base.lsh');
  await ix.save(f);
  ix.close();
  return fs.readFileSync(f);
}

test('LshIndex.load() verifies the payload checksum by default (a flipped key bit is not loaded silently)', async () => {
  const good = await savedLsh();
  const f = path.join(tmp, 'flipped.lsh');
  const bad = Buffer.from(good);
  bad[64 + 64] ^= 0x10;  // the first key (payload: a 64-byte preamble, then the keys)
  fs.writeFileSync(f, bad);
  await rejects(() => LshIndex.load(f), isCode('ERR_NEARDUP_CORRUPT', /payload checksum/), 'default load');
  const lazy = LshIndex.load(f, { verify: false });  // documented opt-out for huge trusted files
  lazy.close();
});

test('LshIndex.load() checks the structure behind valid CRCs: a slot out of range, a key listed twice', async () => {
  const good = await savedLsh();
  const n = Number(good.readBigUInt64LE(64 + 32));
  assert.is(n, 3);
  const keys = 64 + 64, dir = keys + 8 * n, dirSlots = dir + 8 * n, table0 = dirSlots + 16;  // 4n bytes of slots, padded to 16
  const f = path.join(tmp, 'stranger.lsh');
  const b = Buffer.from(good);
  b.writeUInt32LE(7, table0 + 8 * n + 4 * (n - 1));  // band table 0: slot 7 of 3 entries
  fs.writeFileSync(f, fixCrcs(b));
  await rejects(() => LshIndex.load(f), isCode('ERR_NEARDUP_CORRUPT', /band table 0 does not hold each entry once/), 'slot out of range');
  const dup = Buffer.from(good);
  dup.writeBigUInt64LE(dup.readBigUInt64LE(keys), keys + 8);  // keys[1] = keys[0], and the directory to match
  dup.writeBigUInt64LE(dup.readBigUInt64LE(keys), dir + 8);
  fs.writeFileSync(f, fixCrcs(dup));
  await rejects(() => LshIndex.load(f), isCode('ERR_NEARDUP_CORRUPT', /key 1 is listed twice/), 'duplicate key');
});

test('loaders refuse header fields the writer cannot produce (CRCs fixed up)', async () => {
  const good = await savedLsh();
  const cases: [string, (b: Buffer) => void, RegExp][] = [
    ['num_perm 2^32-1', (b) => b.writeUInt32LE(0xffffffff, 64 + 8), /num_perm|exceeds/],
    ['reserved preamble word', (b) => b.writeUInt32LE(1, 64 + 28), /reserved/],
    ['key type 2', (b) => b.writeUInt32LE(2, 64 + 20), /key type/],
    ['store flags 4', (b) => b.writeUInt32LE(4, 64 + 24), /store flags/],
    ['header flags', (b) => b.writeUInt32LE(4, 36), /flags/],
    ['header reserved word', (b) => b.writeUInt32LE(7, 56), /reserved/],
    ['header size 72', (b) => b.writeUInt32LE(72, 20), /header size/],
    ['params[0] != n', (b) => b.writeBigUInt64LE(9n, 40), /params/],
  ];
  for (const [name, edit, re] of cases) {
    const b = Buffer.from(good);
    edit(b);
    const f = path.join(tmp, 'crafted.lsh');
    fs.writeFileSync(f, fixCrcs(b));
    await rejects(() => LshIndex.load(f), isCode('ERR_NEARDUP_CORRUPT', re), `LSHI ${name}`);
  }
  // SimHash index: flags and reserved fields.
  const six = new SimhashIndex({ distance: 3 });
  six.insert([1n, 2n], [5n, 6n]);
  const sf = path.join(tmp, 'base.simh');
  six.saveSync(sf);
  six.close();
  const sgood = fs.readFileSync(sf);
  for (const [name, edit] of [['flags', (b: Buffer) => b.writeUInt32LE(1, 36)], ['reserved', (b: Buffer) => b.writeUInt32LE(1, 64 + 24)]] as const) {
    const b = Buffer.from(sgood);
    edit(b);
    fs.writeFileSync(sf, fixCrcs(b));
    await rejects(() => SimhashIndex.open(sf), isCode('ERR_NEARDUP_CORRUPT', new RegExp(name)), `SIMH ${name}`);
  }
});

test('seen-set loader: an 80-byte file announcing a huge initial capacity is refused, not allocated', async () => {
  // Approximate set with no stages: header + u64 S = 0 + u64 C0.
  const b = Buffer.alloc(80);
  Buffer.from([0x4e, 0x44, 0x55, 0x50, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.write('PSEN', 8, 'latin1');
  b.writeUInt32LE(2, 12);
  b.writeUInt32LE(0x01020304, 16);
  b.writeUInt32LE(64, 20);
  b.writeBigUInt64LE(16n, 24);
  b.writeUInt32LE(1, 36);  // approximate
  b.writeBigUInt64LE(5n, 40);  // n
  b.writeDoubleLE(0.01, 48);
  b.writeBigUInt64LE(0n, 64);
  for (const [cap, ok] of [[2n ** 31n, false], [2n ** 40n, false], [32768n, true]] as const) {
    b.writeBigUInt64LE(cap, 72);
    const f = path.join(tmp, `cap-${cap}.psen`);
    fs.writeFileSync(f, fixCrcs(b));
    const pf = new ParagraphFilter({ n: 5, seen: 'approx' });
    if (ok) {
      assert.is((await pf.loadSeen(f)).size, 0);
      await pf.pushDocuments([['one two three four five six seven']]);  // the first stage is allocated now
    } else {
      await rejects(pf.loadSeen(f), isCode('ERR_NEARDUP_CORRUPT', /initial capacity/), `capacity ${cap}`);
    }
    pf.close();
  }
});

test('readSignatureFile verifies both CRCs and the header fields', () => {
  const f = path.join(tmp, 'sig.mhsg');
  const w = new SignatureWriter(f, { numPerm: 8 });
  w.append(minhashSync(['a b c d e f', 'g h i j k l'], { numPerm: 8 }).signatures);
  w.commit();
  const good = fs.readFileSync(f);
  assert.is(readSignatureFile(f).count, 2);
  const flip = (at: number, fix: boolean) => {
    const b = Buffer.from(good);
    b[at] ^= 1;
    fs.writeFileSync(f, fix ? fixCrcs(b) : b);
  };
  flip(64 + 5, false);
  assert.throws(() => readSignatureFile(f), isCode('ERR_NEARDUP_CORRUPT', /payload checksum/));
  flip(good.length - 2, false);  // in the options trailer
  assert.throws(() => readSignatureFile(f), isCode('ERR_NEARDUP_CORRUPT', /payload checksum/));
  flip(44, false);  // count, header CRC not fixed
  assert.throws(() => readSignatureFile(f), isCode('ERR_NEARDUP_CORRUPT', /header checksum/));
  const b = Buffer.from(good);
  b.writeUInt32LE(9, 36);  // unknown profile
  fs.writeFileSync(f, fixCrcs(b));
  assert.throws(() => readSignatureFile(f), isCode('ERR_NEARDUP_CORRUPT', /profile/));
});

test('readSignatureFile reads a file over 2 GiB', () => {
  // A sparse file: 2^29 + 8 records of 1 value (2 GiB + 32 bytes of signatures), all zero but the last.
  if (os.freemem() < 8 * 2 ** 30) {
    console.log('  (skipped: needs 8 GiB of free memory)');
    return;
  }
  const f = path.join(tmp, 'big.mhsg');
  const count = 2 ** 29 + 8;
  const sigBytes = count * 4;
  const trailer = Buffer.from('{"big":true}');
  const h = Buffer.alloc(64);
  Buffer.from([0x4e, 0x44, 0x55, 0x50, 0x0d, 0x0a, 0x1a, 0x0a]).copy(h, 0);
  h.write('MHSG', 8, 'latin1');
  h.writeUInt32LE(1, 12);
  h.writeUInt32LE(0x01020304, 16);
  h.writeUInt32LE(64, 20);
  h.writeBigUInt64LE(BigInt(sigBytes + trailer.length), 24);
  h.writeBigUInt64LE(BigInt(count), 40);
  h.writeBigUInt64LE(1n, 48);
  const last = Buffer.alloc(4);
  last.writeUInt32LE(0xdeadbeef);
  // CRC of the payload: zeros, then the last value, then the trailer (zeros hashed in 64 MiB pieces).
  const zeros = new Uint8Array(64 << 20);
  let c = 0;
  for (let left = sigBytes - 4; left > 0; left -= Math.min(left, zeros.length)) c = native.crc32c(zeros.subarray(0, Math.min(left, zeros.length)), c);
  c = native.crc32c(trailer, native.crc32c(last, c));
  h.writeUInt32LE(c, 32);
  h.writeUInt32LE(crc(h.subarray(0, 60)), 60);
  const fd = fs.openSync(f, 'w');
  try {
    fs.writeSync(fd, h, 0, 64, 0);
    fs.writeSync(fd, last, 0, 4, 64 + sigBytes - 4);
    fs.writeSync(fd, trailer, 0, trailer.length, 64 + sigBytes);
  } finally {
    fs.closeSync(fd);
  }
  try {
    const r = readSignatureFile(f);
    assert.is(r.count, count);
    assert.is(r.signatures.length, count);
    assert.is(r.signatures[count - 1], 0xdeadbeef);
    assert.is(r.signatures[count - 2], 0);
    assert.equal(r.meta, { big: true });
  } finally {
    fs.rmSync(f, { force: true });
  }
});

// ---- NUL bytes in paths ---------------------------------------------------------------------------------

test('a NUL byte in any native save/load path is an ERR_INVALID_ARG_VALUE TypeError, and nothing is written', async () => {
  const victim = path.join(tmp, 'victim');
  const bad = victim + '\0.x';
  const nul = (e: unknown) => e instanceof TypeError && (e as { code?: string }).code === 'ERR_INVALID_ARG_VALUE' && /null bytes/.test(e.message);
  const lsh = new LshIndex({ numPerm: 16, b: 4, r: 4 });
  await rejects(() => lsh.save(bad), nul, 'LshIndex.save');
  await rejects(() => LshIndex.load(bad), nul, 'LshIndex.load');
  lsh.close();
  const six = new SimhashIndex();
  await rejects(() => six.save(bad), nul, 'SimhashIndex.save');
  await rejects(() => six.saveSync(bad), nul, 'SimhashIndex.saveSync');
  await rejects(() => SimhashIndex.open(bad), nul, 'SimhashIndex.open');
  await rejects(() => SimhashIndex.openAsync(bad), nul, 'SimhashIndex.openAsync');
  six.close();
  const pf = new ParagraphFilter();
  await rejects(() => pf.saveSeen(bad), nul, 'ParagraphFilter.saveSeen');
  await rejects(() => pf.loadSeen(bad), nul, 'ParagraphFilter.loadSeen');
  pf.close();
  await rejects(() => new SignatureWriter(bad, { numPerm: 8 }), nul, 'SignatureWriter');
  await rejects(() => doubriSelf([bad], path.join(tmp, 'idx')), nul, 'doubriSelf hash file');
  await rejects(() => doubriSelf([path.join(tmp, 'x.hash')], bad), nul, 'doubriSelf prefix');
  await rejects(async () => new DedupSession({ numPerm: 16, b: 4, r: 4, memory: 1 << 20, tmp: tmp + '\0x' }), nul, 'DedupSession tmp');
  assert.not.ok(fs.existsSync(victim), 'a truncated path was written');
});

// ---- loadSeen after a push ------------------------------------------------------------------------------

test('loadSeen() after documents were pushed is an error, not silent forgetting', async () => {
  const a = new ParagraphFilter({ n: 2 });
  await a.pushDocuments([['one two three four']]);
  const f = path.join(tmp, 'seen.psen');
  await a.saveSeen(f);
  await rejects(a.loadSeen(f), (e) => e instanceof NeardupError && e.code === 'ERR_NEARDUP_INVALID_INPUT' && /before the first push/.test(e.message), 'after push');
  // The filter still knows what it saw.
  const again = await a.pushDocuments([['one two three four']]);
  assert.equal(again.duplicate, [[true]]);
  a.close();
  const b = new ParagraphFilter({ n: 2 });
  assert.is((await b.loadSeen(f)).size, 3);
  b.close();
});

test.run();
