// MinHash: the three profiles against the reference vectors of the original tools (byte for byte), the
// pure-TS reference on random inputs, the API's forms (async, sync, stream, shingle sets), files, errors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  datasketchPermutations, minhash, minhashOfShingles, minhashStream, minhashSync, packTexts, readSignatureFile,
  signatureAt, SignatureWriter, NeardupError,
} from '../lib/index';
import { datasketchRef, doubriRef, fastRef, pyShingles } from './reference/minhash';

const VECTORS = path.join(__dirname, 'fixtures', 'vectors');
const DOUBRI = path.join(VECTORS, 'doubri-v1');
const DS = path.join(VECTORS, 'datasketch-legacy', 'vectors.json');

function jsonlTexts(file: string): string[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => JSON.parse(l).text as string);
}

function bytesOf(a: Uint32Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

// ---------------- doubri-v1 ----------------

for (const group of ['groupA', 'groupB', 'edge']) {
  test(`doubri-v1: ${group}.hash byte for byte (async, sync, packed)`, async () => {
    const texts = jsonlTexts(path.join(DOUBRI, `${group}.jsonl`));
    const want = fs.readFileSync(path.join(DOUBRI, `${group}.hash`));
    const r = await minhash(texts, { profile: 'doubri-v1' });
    assert.is(r.numPerm, 800);
    assert.is(r.count, texts.length);
    assert.is(want.readBigUInt64LE(8), BigInt(texts.length));
    assert.ok(bytesOf(r.signatures).equals(want.subarray(24)), 'signatures differ from doubri');
    const s = minhashSync(packTexts(texts), { profile: 'doubri-v1' });
    assert.ok(bytesOf(s.signatures).equals(want.subarray(24)));
  });
}

test('doubri-v1: SignatureWriter writes the .hash doubri wrote', async () => {
  const texts = jsonlTexts(path.join(DOUBRI, 'groupB.jsonl'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-mh-'));
  const file = path.join(dir, 'groupB.hash');
  const w = new SignatureWriter(file, { format: 'doubri', numPerm: 800, profile: 'doubri-v1' });
  // Two batches, to check appending.
  w.append((await minhash(texts.slice(0, 33), { profile: 'doubri-v1' })).signatures);
  w.append((await minhash(texts.slice(33), { profile: 'doubri-v1' })).signatures);
  assert.is(w.commit(), texts.length);
  assert.ok(fs.readFileSync(file).equals(fs.readFileSync(path.join(DOUBRI, 'groupB.hash'))));
  const back = readSignatureFile(file);
  assert.is(back.format, 'doubri');
  assert.is(back.count, texts.length);
  fs.rmSync(dir, { recursive: true });
});

// ---------------- datasketch (1.x legacy) ----------------

interface DsCase { shingles: 'word5' | 'char5'; num_perm: number; seed: number; signatures: number[][] }
const ds = JSON.parse(fs.readFileSync(DS, 'utf8')) as {
  texts: string[]; word5_shingles: string[][]; char5_shingles_first14: string[][]; cases: DsCase[];
};

/** permutations_first8 with exact 64-bit values (JSON.parse would round them to doubles). */
function permutationsFirst8(): Record<string, { a: bigint[]; b: bigint[] }> {
  const raw = fs.readFileSync(DS, 'utf8');
  const start = raw.indexOf('"permutations_first8"');
  let i = raw.indexOf('{', start), depth = 0, end = i;
  for (; end < raw.length; end++) {
    if (raw[end] === '{') depth++;
    else if (raw[end] === '}' && --depth === 0) break;
  }
  const quoted = raw.slice(i, end + 1).replace(/(\d{10,})/g, '"$1"');
  const obj = JSON.parse(quoted) as Record<string, { a: string[]; b: string[] }>;
  const out: Record<string, { a: bigint[]; b: bigint[] }> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = { a: v.a.map(BigInt), b: v.b.map(BigInt) };
  return out;
}

test('datasketch: permutations_first8 for every seed in the vectors', () => {
  const perms = permutationsFirst8();
  assert.equal(Object.keys(perms).sort(), ['1', '12345', '42']);
  for (const [seed, want] of Object.entries(perms)) {
    const got = datasketchPermutations(Number(seed), 8);
    assert.equal(Array.from(got.a), want.a, `a for seed ${seed}`);
    assert.equal(Array.from(got.b), want.b, `b for seed ${seed}`);
  }
});

for (const c of ds.cases) {
  test(`datasketch: ${c.shingles} k=${c.num_perm} seed=${c.seed}: every signature from text`, async () => {
    const unit = c.shingles === 'word5' ? 'word' : 'char';
    const r = await minhash(ds.texts, { profile: 'datasketch', unit, n: 5, numPerm: c.num_perm, seed: c.seed });
    assert.is(c.signatures.length, ds.texts.length);
    for (let i = 0; i < ds.texts.length; i++)
      assert.equal(Array.from(signatureAt(r, i)), c.signatures[i], `text ${i}`);
  });
  test(`datasketch: ${c.shingles} k=${c.num_perm} seed=${c.seed}: every given shingle list`, () => {
    const lists = c.shingles === 'word5' ? ds.word5_shingles : ds.char5_shingles_first14;
    const r = minhashOfShingles(lists, { profile: 'datasketch', numPerm: c.num_perm, seed: c.seed });
    for (let i = 0; i < lists.length; i++)
      assert.equal(Array.from(signatureAt(r, i)), c.signatures[i], `list ${i}`);
  });
}

test('datasketch: the Python-compatible tokenizer gives the vectors\' shingle lists', async () => {
  for (let i = 0; i < ds.texts.length; i++)
    assert.equal(new Set(pyShingles(ds.texts[i], 'word', 5, true)), new Set(ds.word5_shingles[i]), `text ${i}`);
});

// ---------------- native vs the pure-TS reference on random inputs ----------------

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    s ^= s + Math.imul(s ^ (s >>> 7), 61);
    return ((s ^ (s >>> 14)) >>> 0) / 4294967296;
  };
}
const ALPHABET = ['a', 'b', 'c', 'A', 'B', ' ', ' ', '\t', '\n', 'é', 'ß', '日', '本', '😀', '\u3000', 'x', 'y', '.'];
function randomText(r: () => number, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)];
  return s;
}
const LENGTHS = [0, 1, 3, 4, 5, 6, 7, 15, 16, 17, 31, 64, 127, 128, 300];

test('doubri-v1: native = reference on random texts (and shorter k, other seed)', () => {
  const r = rng(1);
  const texts = LENGTHS.map((n) => randomText(r, n));
  const got = minhashSync(texts, { profile: 'doubri-v1', numPerm: 37 });
  texts.forEach((t, i) => assert.equal(Array.from(signatureAt(got, i)), Array.from(doubriRef(t, 37)), `len ${t.length}`));
});

test('datasketch: native = reference on random texts (word and char, odd k)', () => {
  const r = rng(2);
  const texts = LENGTHS.map((n) => randomText(r, n));
  for (const unit of ['word', 'char'] as const) {
    for (const [k, seed] of [[13, 7], [64, 1]]) {
      const got = minhashSync(texts, { profile: 'datasketch', unit, numPerm: k, seed });
      texts.forEach((t, i) =>
        assert.equal(Array.from(signatureAt(got, i)), Array.from(datasketchRef(pyShingles(t, unit, 5, true), k, seed)), `${unit} ${i}`));
    }
  }
});

test('fast: native = reference on random texts (several k and seeds)', () => {
  const r = rng(3);
  const texts = LENGTHS.map((n) => randomText(r, n));
  for (const [k, seed] of [[16, 0n], [128, 99n], [100, (1n << 63n) + 5n]] as const) {
    const got = minhashSync(texts, { numPerm: k, seed });
    texts.forEach((t, i) =>
      assert.equal(Array.from(signatureAt(got, i)), Array.from(fastRef(pyShingles(t, 'char', 5, false), k, seed)), `k ${k} ${i}`));
  }
});

test('async (thread pool) = sync on a larger batch, Buffers and strings alike', async () => {
  const r = rng(4);
  const texts = Array.from({ length: 500 }, () => randomText(r, Math.floor(r() * 400)));
  for (const profile of ['fast', 'doubri-v1', 'datasketch'] as const) {
    const a = await minhash(texts, { profile });
    const b = minhashSync(texts.map((t) => Buffer.from(t)), { profile });
    assert.ok(bytesOf(a.signatures).equals(bytesOf(b.signatures)), profile);
  }
});

test('minhashStream yields one result per batch', async () => {
  async function* batches() {
    yield ['one two three four five six', 'abc'];
    yield ['another document entirely'];
  }
  const counts: number[] = [];
  for await (const res of minhashStream(batches(), { numPerm: 64 })) counts.push(res.count);
  assert.equal(counts, [2, 1]);
});

test('neardup signature file: header, layout, options trailer', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-mh-'));
  const file = path.join(dir, 'x.mhsg');
  const r = await minhash(['hello world, this is a test', 'another'], { numPerm: 64 });
  const w = new SignatureWriter(file, { numPerm: 64, profile: 'fast', meta: { profile: 'fast', seed: 5n } });
  w.append(r.signatures);
  w.commit();
  const raw = fs.readFileSync(file);
  assert.is(raw.subarray(0, 8).toString('latin1'), 'NDUP\r\n\x1a\n');
  assert.is(raw.subarray(8, 12).toString('latin1'), 'MHSG');
  assert.ok(raw.subarray(64, 64 + 2 * 64 * 4).equals(bytesOf(r.signatures)));
  const back = readSignatureFile(file);
  assert.is(back.count, 2);
  assert.is(back.numPerm, 64);
  assert.is(back.profile, 'fast');
  assert.equal(back.meta, { profile: 'fast', seed: '5' });
  assert.equal(Array.from(back.signatures), Array.from(r.signatures));
  // A truncated file is refused.
  fs.writeFileSync(file, raw.subarray(0, raw.length - 3));
  assert.throws(() => readSignatureFile(file), (e: unknown) => e instanceof NeardupError && e.code === 'ERR_NEARDUP_CORRUPT');
  fs.rmSync(dir, { recursive: true });
});

test('bad arguments: clear TypeError/RangeError', () => {
  const code = (e: unknown) => (e as { code?: string }).code === 'ERR_NEARDUP_INVALID_ARGUMENT';
  assert.throws(() => minhashSync(['x'], { profile: 'nope' as never }), (e: unknown) => e instanceof RangeError && code(e) && /profile/.test((e as Error).message));
  assert.throws(() => minhashSync(['x'], { numPerm: 0 }), (e: unknown) => e instanceof RangeError && code(e));
  assert.throws(() => minhashSync(['x'], { numPerm: 2000 }), (e: unknown) => e instanceof RangeError && /1024/.test((e as Error).message));
  assert.throws(() => minhashSync(['x'], { profile: 'datasketch', seed: 2 ** 40 }), (e: unknown) => e instanceof RangeError && /2\^32/.test((e as Error).message));
  assert.throws(() => minhashSync([1 as never]), (e: unknown) => e instanceof TypeError);
  assert.throws(() => minhashSync(['x'], { n: 0 }), (e: unknown) => e instanceof RangeError);
  assert.throws(() => minhashOfShingles([['a']], { seed: -1 }), (e: unknown) => e instanceof RangeError);
  assert.throws(() => new SignatureWriter('/nonexistent-dir/x', { numPerm: 4 }), (e: unknown) => e instanceof NeardupError && e.code === 'ERR_NEARDUP_IO');
});

test('empty batch and empty texts', async () => {
  const r = await minhash([], {});
  assert.is(r.count, 0);
  assert.is(r.signatures.length, 0);
  const e = minhashSync([''], { numPerm: 8 });
  assert.equal(Array.from(e.signatures), new Array(8).fill(0xffffffff));
  // doubri: an empty text is the text "EMPTY".
  const d = minhashSync(['', 'EMPTY', 'abc'], { profile: 'doubri-v1' });
  assert.equal(Array.from(signatureAt(d, 0)), Array.from(signatureAt(d, 1)));
  assert.equal(Array.from(signatureAt(d, 2)), Array.from(signatureAt(d, 1)));
});

test.run();
