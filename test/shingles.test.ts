// Parity: the native shingle stream against the pure-TS reference (test/reference/) on seeded random
// inputs, every option combination, every hash kind, every input form, sync and async.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { packTexts, shingleHashes, shingleHashesSync, type ShingleHashOptions, type ShingleHashKind } from '../lib/index';
import { refShingles } from './reference/text';
import { decodeUtf8 } from './reference/utf8';
import { int, noiseBytes, pick, randomBytes, randomText, rng } from './reference/random';
import { FORMS, expectSame, inForm, plain, reference } from './helpers/parity';

const HASHES: readonly ShingleHashKind[] = ['fast64', 'murmur3_32', 'murmur3_64', 'sha1_32', 'md5_64'];
const test = suite('shingles');

/** Texts of awkward lengths (in code points) around n, plus random ones; some as invalid-UTF-8 Buffers. */
function corpus(seed: number, n: number, count = 14): Array<string | Uint8Array> {
  const r = rng(seed);
  const out: Array<string | Uint8Array> = ['', ' ', '\u0000'];
  for (const len of [1, 2, n - 1, n, n + 1, 127, 128]) {
    if (len < 0) continue;
    out.push(randomText(r, len));
    out.push(randomBytes(r, len));
  }
  for (let i = 0; i < count; i++) {
    const len = int(r, 0, 3 * n + 20);
    const k = r();
    out.push(k < 0.5 ? randomText(r, len) : k < 0.85 ? randomBytes(r, len) : noiseBytes(r, len));
  }
  return out;
}

function check(texts: Array<string | Uint8Array>, o: ShingleHashOptions, label: string): void {
  const want = reference(texts, o);
  expectSame(plain(shingleHashesSync(texts, o)), want, texts, label);
}

test('the reference decoder agrees with TextDecoder (random bytes, every invalid form)', () => {
  const r = rng(1);
  const td = new TextDecoder('utf-8', { ignoreBOM: true });
  for (let i = 0; i < 3000; i++) {
    const b = i % 2 ? noiseBytes(r, int(r, 0, 40)) : randomBytes(r, int(r, 0, 40), 0.3);
    const want = Array.from(td.decode(b), (c) => c.codePointAt(0)!);
    assert.equal(decodeUtf8(b).cps, want, b.toString('hex'));
  }
});

test('char n=1 on invalid UTF-8 gives one shingle per decoded code point (native = reference = TextDecoder)', () => {
  const r = rng(2);
  const td = new TextDecoder('utf-8', { ignoreBOM: true });
  const docs = Array.from({ length: 300 }, () => noiseBytes(r, int(r, 0, 30)));
  const res = shingleHashesSync(docs, { n: 1, hash: 'murmur3_32' });
  docs.forEach((d, i) => assert.is(res.offsets[i + 1] - res.offsets[i], [...td.decode(d)].length));
  check(docs, { n: 1, hash: 'murmur3_32' }, 'noise n=1');
});

test('a Buffer and the string decoded from it give the same hashes', () => {
  const r = rng(3);
  const bufs = Array.from({ length: 200 }, () => randomBytes(r, int(r, 0, 40), 0.2));
  for (const o of [{ n: 3 }, { unit: 'word' as const, n: 2 }, { n: 4, lowercase: true, stripPunctuation: true }]) {
    const a = plain(shingleHashesSync(bufs, o));
    const b = plain(shingleHashesSync(bufs.map((x) => x.toString('utf8')), o));
    assert.equal(a.hashes, b.hashes);
    assert.equal(a.offsets, b.offsets);
  }
});

test('every text option combination, both units, n in {1,2,3,5,8} (rotating hash kinds and dedupe)', () => {
  let k = 0;
  for (const unit of ['char', 'word'] as const)
    for (const split of unit === 'word' ? (['whitespace', 'nonword'] as const) : ([undefined] as const))
      for (const lowercase of [false, true])
        for (const stripPunctuation of [false, true])
          for (const foldWhitespace of [false, true])
            for (const short of ['whole', 'none'] as const)
              for (const n of [1, 2, 3, 5, 8]) {
                k++;
                const o: ShingleHashOptions = {
                  unit, split, lowercase, stripPunctuation, foldWhitespace, short, n,
                  hash: HASHES[k % HASHES.length], dedupe: k % 3 === 0, seed: k % 2 ? k * 7919 : BigInt(k) << 40n,
                };
                check(corpus(1000 + k, n, 8), o, JSON.stringify(o, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)));
              }
});

// Multi-script strings for the unicode split: letters of each script, marks, the UAX #29 mid characters,
// connectors, spaces, punctuation and an invalid byte now and then.
const SCRIPT_PIECES: readonly string[] = [
  'a', 'B', 'z', 'É', '7', '0', "'", '.', ':', ',', ';', '_', ' ', ' ', '\t', '!', '-', '\u2019', '\u00b7', '\uff1a', '\u203f',
  '\u0301', '\u200d', '\u200b', '\u00ad', '中', '文', '字', '〇', '々', 'こ', 'れ', 'テ', 'ー', 'ﾃ', '。', '、', '「',
  'ก', '\u0e34', '\u0e48', 'า', '๓', 'ລ', 'ក', '\u17b6', 'မ', '\u102c', 'ह', '\u093f', '\u0902', '\u094d', '१',
  'ك', '\u064e', '\u060c', '٣', 'Ж', 'я', 'Σ', '한', '국', '😀', '\u{20000}', 'İ',
];
function scriptText(r: () => number, len: number): string | Uint8Array {
  let s = '';
  for (let i = 0; i < len; i++) s += pick(r, SCRIPT_PIECES);
  if (r() < 0.2) return Buffer.concat([Buffer.from(s), Buffer.from([0xe4, 0xb8]), Buffer.from(pick(r, SCRIPT_PIECES))]);
  return s;
}

test('the unicode split equals the reference on random multi-script strings (chars, bigrams; case, punctuation)', () => {
  const r = rng(31);
  const texts: Array<string | Uint8Array> = ['', ' ', "it's", '中文字', 'a\u0301b'];
  for (let i = 0; i < 120; i++) texts.push(scriptText(r, int(r, 0, 40)));
  texts.push(scriptText(r, 3000));  // one long text: ASCII runs, the scratch sizes
  // long mostly-ASCII texts (the 64-byte vector path: mid characters at window edges, a non-ASCII letter,
  // mark or cluster letter now and then)
  const ASCII_PIECES = ['a', 'b', 'Q', 'x', 'e', '1', '9', '0', "'", '.', ',', ':', ';', '_', ' ', ' ', ' ', '  ', '-', '!', '\n'];
  for (let i = 0; i < 24; i++) {
    let s = '';
    const len = int(r, 60, 900);
    for (let k = 0; k < len; k++) s += r() < 0.015 ? pick(r, ['é', '中', '\u0301', '\u2019', 'ก', 'Ж']) : pick(r, ASCII_PIECES);
    texts.push(s);
  }
  // every mid character case at every offset in a 64-byte window (and across two)
  const cases = "ab'cd 12.34 e.f,g 5,6 h:i j_k l''m n.1 Op'Q 7;8 r.s. t:9 ";
  for (let off = 0; off < 64; off++) texts.push('x'.repeat(off % 7) + ' '.repeat(off - (off % 7)) + cases.repeat(4) + (off % 2 ? 'é' : ''));
  let k = 0;
  for (const cjk of ['chars', 'bigrams'] as const)
    for (const lowercase of [false, true])
      for (const stripPunctuation of [false, true])
        for (const n of [1, 2, 3]) {
          k++;
          const o: ShingleHashOptions = { unit: 'word', split: 'unicode', cjk, lowercase, stripPunctuation, n, hash: HASHES[k % HASHES.length], dedupe: k % 3 === 0 };
          check(texts, o, JSON.stringify(o));
        }
});

test('every hash kind x dedupe x seeds (0, 1, 2^32-1, 2^32+5, 2^63+1, 2^64-1) on char and word shingles', () => {
  const texts = corpus(7, 5, 10);
  for (const hash of HASHES)
    for (const dedupe of [false, true])
      for (const seed of [0, 1, 0xffffffff, 2 ** 32 + 5, (1n << 63n) + 1n, (1n << 64n) - 1n])
        for (const unit of ['char', 'word'] as const) {
          const o = { hash, dedupe, seed, unit, n: unit === 'char' ? 4 : 2 };
          check(texts, o, `${hash} dedupe=${dedupe} seed=${seed} ${unit}`);
        }
});

test('dedupe keeps the first occurrence in order (repetitive texts)', () => {
  const texts = ['abababababab', 'aaaaaaaaaaaa', 'the the the the cat the the', 'xyz'.repeat(50) + 'q', '😀😀😀😀😀😀'];
  for (const hash of HASHES) {
    check(texts, { n: 2, hash, dedupe: true }, `char ${hash}`);
    check(texts, { unit: 'word', n: 1, hash, dedupe: true }, `word ${hash}`);
  }
  // Hand-checked: 'abababababab' with n=2 has shingles ab, ba, ab, ...: 2 distinct in order.
  const r = shingleHashesSync(['abababababab'], { n: 2, hash: 'murmur3_32', dedupe: true });
  const all = shingleHashesSync(['ab', 'ba'], { n: 2, hash: 'murmur3_32' });
  assert.equal(Array.from(r.hashes), Array.from(all.hashes));
});

test('long documents: 10 KiB - 1 bytes (ASCII and non-ASCII, valid and invalid) in every hash kind', () => {
  const r = rng(11);
  const ascii = Buffer.alloc(10 * 1024 - 1);
  for (let i = 0; i < ascii.length; i++) ascii[i] = int(r, 0x20, 0x7e);
  const mixed = Buffer.from(randomText(r, 6000), 'utf8').subarray(0, 10 * 1024 - 1); // may cut a code point
  const bad = randomBytes(r, 6000, 0.05).subarray(0, 10 * 1024 - 1);
  const texts = [ascii, mixed, bad, ascii.toString('latin1')];
  for (const hash of HASHES) check(texts, { n: 5, hash }, `long ${hash}`);
  check(texts, { n: 7, lowercase: true, stripPunctuation: true, foldWhitespace: true, hash: 'fast64', dedupe: true }, 'long normalised');
  check(texts, { unit: 'word', n: 3, split: 'nonword', lowercase: true, hash: 'murmur3_64' }, 'long words');
  check(texts, { n: 4096, hash: 'murmur3_32' }, 'n = 4096 (short rule on 10 KiB)');
});

test('input forms: strings, Buffers and packed {data, offsets} at byteOffset 0/1/16, sync and async', async () => {
  const texts = corpus(21, 4, 30);
  for (const o of [{ n: 4, hash: 'fast64' as const }, { unit: 'word' as const, n: 2, lowercase: true, hash: 'murmur3_32' as const, dedupe: true }]) {
    const want = reference(texts, o);
    for (const form of FORMS) {
      const input = inForm(texts, form);
      expectSame(plain(shingleHashesSync(input, o)), want, texts, `sync ${form}`);
      expectSame(plain(await shingleHashes(input, o)), want, texts, `async ${form}`);
    }
  }
  // packTexts builds the same packed form.
  expectSame(plain(shingleHashesSync(packTexts(texts), { n: 3 })), reference(texts, { n: 3 }), texts, 'packTexts');
});

test('lone surrogates in strings become U+FFFD (as Buffer.from does) and do not count as invalid UTF-8', () => {
  const texts = ['a\ud800b', '\udfffxyz', 'end\ud83d', '\ud83d\ude00ok'];
  const want = reference(texts, { n: 2 });
  const got = plain(shingleHashesSync(texts, { n: 2 }));
  expectSame(got, want, texts, 'surrogates');
  assert.is(got.invalidUtf8Docs, 0);
});

test('a big async batch (many documents, all cores) equals the sync result and the reference', async () => {
  const r = rng(31);
  const texts = Array.from({ length: 3000 }, (_, i) => (i % 3 ? randomText(r, int(r, 0, 60)) : randomBytes(r, int(r, 0, 60))));
  const o = { n: 3, hash: 'murmur3_32' as const, lowercase: true };
  const a = plain(await shingleHashes(texts, o));
  expectSame(a, plain(shingleHashesSync(texts, o)), texts, 'async vs sync');
  expectSame(a, reference(texts, o), texts, 'async vs reference');
});

// Independent truth from Python: datasketch's vectors hold text.lower().split() word 5-shingles and
// text.lower() char 5-shingles, and hash them with sha1_32.
test('datasketch-legacy: word and char 5-shingles of Python lower()/split()', () => {
  const file = path.join(__dirname, 'fixtures', 'vectors', 'datasketch-legacy', 'vectors.json');
  const v = JSON.parse(fs.readFileSync(file, 'utf8')) as { texts: string[]; word5_shingles: string[][]; char5_shingles_first14: string[][] };
  const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
  v.texts.forEach((t, i) => {
    const ours = refShingles(Buffer.from(t), { unit: 'word', n: 5, lowercase: true }).shingles.map((s) => Buffer.from(s).toString());
    assert.equal(sorted(ours), sorted(v.word5_shingles[i]), `word5 of text ${i}`);
    const nat = shingleHashesSync([t], { unit: 'word', n: 5, lowercase: true, hash: 'sha1_32', dedupe: true });
    const fromList = shingleHashesSync(sorted(v.word5_shingles[i]), { unit: 'char', n: 4096, hash: 'sha1_32' });
    assert.equal([...nat.hashes].sort(), [...fromList.hashes].sort(), `sha1_32 of word5 of text ${i}`);
  });
  v.char5_shingles_first14.forEach((want, i) => {
    const ours = refShingles(Buffer.from(v.texts[i]), { n: 5, lowercase: true }).shingles.map((s) => Buffer.from(s).toString());
    assert.equal(sorted(ours), sorted(want), `char5 of text ${i}`);
  });
});

test('spot facts of the text rules (hand-checked, independent of both implementations)', () => {
  const words = (t: string, o = {}) => refShingles(Buffer.from(t), { unit: 'word', n: 1, ...o }).shingles.map((s) => Buffer.from(s).toString());
  const chars = (t: string, o = {}) => refShingles(Buffer.from(t), { n: 1, ...o }).shingles.map((s) => Buffer.from(s).toString());
  assert.equal(words('a\x1cb\x85c\ufeffd'), ['a', 'b', 'c\ufeffd']); // Python spaces, not U+FEFF
  assert.equal(words("it's a-b_c 42", { split: 'nonword' }), ['it', 's', 'a', 'b_c', '42']);
  assert.equal(chars('\u0130\u03a3', { lowercase: true }), ['i', '\u0307', '\u03c3']);
  assert.equal(chars(' a \t\n b ', { foldWhitespace: true }), ['a', ' ', 'b']);
  assert.equal(chars('a$b.c', { stripPunctuation: true }), ['a', '$', 'b', 'c']);
  assert.equal(refShingles(Buffer.from('abc'), { n: 5, short: 'none' }).shingles.length, 0);
  // The same facts through the native code.
  const nat = (t: string, o: ShingleHashOptions) => Array.from(shingleHashesSync([t], { hash: 'murmur3_32', ...o }).hashes);
  const h = (s: string) => Array.from(shingleHashesSync([s], { hash: 'murmur3_32', n: 4096 }).hashes)[0];
  assert.equal(nat('a\x1cb\x85c\ufeffd', { unit: 'word', n: 1 }), ['a', 'b', 'c\ufeffd'].map(h));
  assert.equal(nat('\u0130\u03a3', { n: 1, lowercase: true }), ['i', '\u0307', '\u03c3'].map(h));
  assert.equal(nat('ΑΣ ΟΔΟΣ', { unit: 'word', n: 2, lowercase: true }), ['ασ οδοσ'].map(h));
});

test.run();
