// Reference normalisers and tokenizers (tests only), written from the rules stated in
// native/core/text/{normalize.h,shingle.h} and lib/text/shingles.ts — deliberately simple, not fast.
import { decodeUtf8, encodeCps } from './utf8';

export interface RefTextOptions {
  unit?: 'char' | 'word';
  n?: number;
  split?: 'whitespace' | 'nonword';
  lowercase?: boolean;
  stripPunctuation?: boolean;
  foldWhitespace?: boolean;
  short?: 'whole' | 'none';
  normalize?: 'none' | 'nfc' | 'nfkc' | 'nfkc_casefold';
}

/**
 * The shingle stream's Unicode normalisation, by its definition (docs/FORMAT.md "Text rules"): NFC and NFKC as
 * String.prototype.normalize; nfkc_casefold = NFC of the per-code-point lower-casing (lowerCp) of NFKC.
 */
export function refNormalize(s: string, form: 'none' | 'nfc' | 'nfkc' | 'nfkc_casefold'): string {
  if (form === 'none') return s;
  if (form === 'nfc') return s.normalize('NFC');
  if (form === 'nfkc') return s.normalize('NFKC');
  return String.fromCodePoint(...Array.from(s.normalize('NFKC'), (c) => lowerCp(c.codePointAt(0)!)).flat()).normalize('NFC');
}

// Python's str.isspace(): characters with bidirectional class WS, B or S, or general category Zs.
const PY_SPACE = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
  0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
  0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);
export const isSpace = (c: number): boolean => PY_SPACE.has(c);

const WORD_RE = /^[\p{L}\p{N}_]$/u;
const PUNCT_RE = /^\p{P}$/u;
export const isWord = (c: number): boolean => WORD_RE.test(String.fromCodePoint(c));
export const isPunct = (c: number): boolean => PUNCT_RE.test(String.fromCodePoint(c));

/** Lower-cases one code point without context; U+03A3 (capital sigma) always becomes U+03C3. */
export function lowerCp(c: number): number[] {
  if (c === 0x3a3) return [0x3c3];
  return Array.from(String.fromCodePoint(c).toLowerCase(), (ch) => ch.codePointAt(0)!);
}

/** Code points after lowercasing and punctuation stripping (per code point, in order). */
export function normaliseCps(cps: readonly number[], o: RefTextOptions): number[] {
  const out: number[] = [];
  for (const c of cps) {
    const mapped = o.lowercase ? lowerCp(c) : [c];
    for (const m of mapped) {
      if (o.stripPunctuation && isPunct(m)) continue;
      out.push(m);
    }
  }
  return out;
}

/** Runs of whitespace become one U+0020; leading and trailing whitespace is removed. */
export function foldSpaces(cps: readonly number[]): number[] {
  const out: number[] = [];
  let pending = false;
  for (const c of cps) {
    if (isSpace(c)) {
      pending = true;
      continue;
    }
    if (pending && out.length > 0) out.push(0x20);
    pending = false;
    out.push(c);
  }
  return out;
}

/** Tokens (arrays of code points): str.split() semantics, or maximal runs of word characters. */
export function splitWords(cps: readonly number[], split: 'whitespace' | 'nonword'): number[][] {
  const inToken = split === 'whitespace' ? (c: number) => !isSpace(c) : isWord;
  const tokens: number[][] = [];
  let cur: number[] | null = null;
  for (const c of cps) {
    if (inToken(c)) {
      if (cur === null) {
        cur = [];
        tokens.push(cur);
      }
      cur.push(c);
    } else {
      cur = null;
    }
  }
  return tokens;
}

/** Start positions and lengths (in units) of the shingles of a sequence of `units` units. */
function windows(units: number, n: number, short: 'whole' | 'none'): Array<[number, number]> {
  if (units >= n) return Array.from({ length: units - n + 1 }, (_, i) => [i, n]);
  if (units > 0 && short === 'whole') return [[0, units]];
  return [];
}

function fromCps(cps: readonly number[]): string {
  let s = '';
  for (let i = 0; i < cps.length; i += 4096) s += String.fromCodePoint(...cps.slice(i, i + 4096));
  return s;
}

export interface RefShingles {
  shingles: Uint8Array[];
  invalid: boolean;
}

/** The shingles of one document (its UTF-8 bytes) as UTF-8 byte strings. */
export function refShingles(doc: Uint8Array, o: RefTextOptions = {}): RefShingles {
  const n = o.n ?? 5;
  const short = o.short ?? 'whole';
  const { cps: decoded, invalid } = decodeUtf8(doc);
  const form = o.normalize ?? 'none';
  const raw = form === 'none' ? decoded : Array.from(refNormalize(fromCps(decoded), form), (c) => c.codePointAt(0)!);
  let cps = normaliseCps(raw, o);
  const shingles: Uint8Array[] = [];
  if ((o.unit ?? 'char') === 'char') {
    if (o.foldWhitespace) cps = foldSpaces(cps);
    for (const [s, len] of windows(cps.length, n, short)) shingles.push(encodeCps(cps.slice(s, s + len)));
  } else {
    const tokens = splitWords(cps, o.split ?? 'whitespace');
    for (const [s, len] of windows(tokens.length, n, short)) {
      const joined: number[] = [];
      tokens.slice(s, s + len).forEach((t, k) => {
        if (k > 0) joined.push(0x20);
        joined.push(...t);
      });
      shingles.push(encodeCps(joined));
    }
  }
  return { shingles, invalid };
}
