// Seeded random inputs for the parity tests (tests only).

/** mulberry32: a small, fast, seeded 32-bit PRNG. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
export const int = (r: () => number, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

// Pieces that stress each rule: Python-only spaces (\x1c, \x85), a JS-only "space" (U+FEFF, not a space
// here), punctuation in and out of ASCII ($ and + are symbols, not \p{P}), letters with multi-code-point
// or special lower-case mappings (İ, ẞ, Σ, Ω sign, Kelvin sign, Ǆ), combining marks, digits of other
// scripts, astral letters and emoji, NUL, '_' (a word character).
const PIECES: readonly string[] = [
  'a', 'b', 'Z', 'q', 'x', 'e', ' ', ' ', ' ', '  ', '\t', '\n', '\r\n', '\v', '\f', '\x1c', '\x1f', '\x85', '\xa0',
  '\u1680', '\u2003', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', '\u200b',
  '.', ',', '!', '?', '-', '_', "'", '"', '(', ')', '@', '#', '%', '&', '*', '/', ':', ';', '[', ']', '{', '}',
  '$', '+', '<', '=', '>', '^', '`', '|', '~', '\u00ab', '\u00bb', '\u2014', '\u2026', '\u3001', '\u3002', '\u00bf',
  '\u00e9', 'e\u0301', '\u00df', '\u0130', '\u1e9e', '\u03a3', '\u03c3', '\u03c2', '\u0391\u03a3', '\u2126',
  '\u212a', '\u01c4', '\u0049', '\u0131', '\u0410\u0411', '\u65e5\u672c', '\u30c6\u30ad', '\u0663', '\u2167',
  '\u00bd', '\u0301', '\u0308\u0308', '\ud83d\ude00', '\ud83c\udf89', '\ud835\udd18', '\ud800\udc00', '\u0000',
  '7', '42', 'Hello', 'WORLD', 'caf\u00e9', '\u00c9COLE', '\u0152uvre', 'stra\u00dfe', '\u10a0', '\u0587',
];

/** A random string of about `len` code points built from PIECES. */
export function randomText(r: () => number, len: number): string {
  let s = '';
  let n = 0;
  while (n < len) {
    const p = pick(r, PIECES);
    s += p;
    n += [...p].length;
  }
  return s;
}

// Byte sequences that are not well-formed UTF-8 (each decodes to one or more U+FFFD).
const BAD: readonly number[][] = [
  [0x80], [0xbf], [0xc0], [0xc1, 0x81], [0xc2], [0xe0, 0x80], [0xe0, 0xa0], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xef, 0xbf], [0xf0, 0x8f, 0xbf, 0xbf], [0xf0, 0x9f, 0x98], [0xf4, 0x90, 0x80, 0x80], [0xf5], [0xf8, 0x88],
  [0xfe], [0xff], [0xe2, 0x82], [0xf1, 0x80, 0x80],
];

/** UTF-8 bytes of a random text with invalid sequences spliced in at code point boundaries. */
export function randomBytes(r: () => number, len: number, badRate = 0.1): Buffer {
  const parts: Buffer[] = [];
  let n = 0;
  while (n < len) {
    if (r() < badRate) {
      parts.push(Buffer.from(pick(r, BAD)));
      n++;
    } else {
      const p = pick(r, PIECES);
      parts.push(Buffer.from(p, 'utf8'));
      n += [...p].length;
    }
  }
  return Buffer.concat(parts);
}

/** Fully random bytes (mostly high bytes: exercises the decoder's state machine). */
export function noiseBytes(r: () => number, len: number): Buffer {
  const b = Buffer.alloc(len);
  for (let i = 0; i < len; i++) b[i] = r() < 0.3 ? int(r, 0, 0x7f) : int(r, 0x80, 0xff);
  return b;
}
