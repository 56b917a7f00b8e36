// Reference normalisers and tokenizers (tests only), written from the rules stated in
// native/core/text/{normalize.h,shingle.h} and lib/text/shingles.ts — deliberately simple, not fast.
import { decodeUtf8, encodeCps } from './utf8';

export interface RefTextOptions {
  unit?: 'char' | 'word';
  n?: number;
  split?: 'whitespace' | 'nonword' | 'unicode';
  cjk?: 'chars' | 'bigrams';
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

// ---- the unicode split (docs/languages.md), from its stated rules, by look-ahead over whole characters rather
// than the core's one-pass state machine.
const MID_LETTER = new Set([0x3a, 0xb7, 0x387, 0x55f, 0x5f4, 0x2027, 0xfe13, 0xfe55, 0xff1a]);
const MID_NUM = new Set([0x2c, 0x3b, 0x37e, 0x589, 0x60c, 0x60d, 0x66c, 0x7f8, 0x2044, 0xfe10, 0xfe14, 0xfe50, 0xfe54, 0xff0c, 0xff1b]);
const MID_NUM_LET = new Set([0x27, 0x2e, 0x2018, 0x2019, 0x2024, 0xfe52, 0xff07, 0xff0e]);
const CLUSTER_RE = /^[\p{L}\p{Nl}]$/u;
const CLUSTER_SCRIPT_RE = /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]$/u;
export type WordClass = 'other' | 'letter' | 'numeric' | 'extend' | 'connector' | 'midLetter' | 'midNum' | 'midNumLet' | 'cluster';
export function wordClass(c: number): WordClass {
  const s = String.fromCodePoint(c);
  if (MID_LETTER.has(c)) return 'midLetter';
  if (MID_NUM.has(c)) return 'midNum';
  if (MID_NUM_LET.has(c)) return 'midNumLet';
  if (CLUSTER_RE.test(s) && CLUSTER_SCRIPT_RE.test(s)) return 'cluster';
  if (/^\p{L}$/u.test(s)) return 'letter';
  if (/^\p{N}$/u.test(s)) return 'numeric';
  if (/^\p{Pc}$/u.test(s)) return 'connector';
  if (/^[\p{M}\p{Cf}]$/u.test(s) && c !== 0x200b) return 'extend';
  return 'other';
}

/**
 * Units of the unicode split: each character takes the extend characters after it; a mid character joins
 * two letters (MidLetter, MidNumLet) or two digits (MidNum, MidNumLet) when it has no extend of its own;
 * letters, digits and connectors next to each other join; a cluster letter is a unit of its own, and a run
 * of them gives overlapping pairs under 'bigrams'.
 */
export function unicodeWords(cps: readonly number[], cjk: 'chars' | 'bigrams' = 'chars'): number[][] {
  interface Ch { cls: WordClass; cps: number[] }
  const chars: Ch[] = [];
  for (const c of cps) {
    const cls = wordClass(c);
    if (cls === 'extend') {
      const prev = chars[chars.length - 1];
      if (prev) prev.cps.push(c);
      else chars.push({ cls: 'other', cps: [c] });  // nothing before it: part of no word
      continue;
    }
    chars.push({ cls, cps: [c] });
  }
  const isMid = (k: WordClass) => k === 'midLetter' || k === 'midNum' || k === 'midNumLet';
  const wordy = (k: WordClass) => k === 'letter' || k === 'numeric' || k === 'connector';
  // a mid character with an extend, or an extend after a separator, belongs to no word
  for (const ch of chars) if ((isMid(ch.cls) || ch.cls === 'other') && ch.cps.length > 1) ch.cls = 'other';
  const joinsByMid = (a: Ch, m: Ch, b: Ch | undefined) => b !== undefined &&
    ((a.cls === 'letter' && b.cls === 'letter' && (m.cls === 'midLetter' || m.cls === 'midNumLet')) ||
     (a.cls === 'numeric' && b.cls === 'numeric' && (m.cls === 'midNum' || m.cls === 'midNumLet')));
  const words: number[][] = [];
  let i = 0;
  while (i < chars.length) {
    const ch = chars[i];
    if (ch.cls === 'cluster') {
      let j = i;
      while (j < chars.length && chars[j].cls === 'cluster') j++;
      const run = chars.slice(i, j).map((x) => x.cps);
      if (cjk === 'chars' || run.length === 1) words.push(...run.map((r) => [...r]));
      else for (let k = 0; k + 1 < run.length; k++) words.push([...run[k], ...run[k + 1]]);
      i = j;
      continue;
    }
    if (!wordy(ch.cls)) { i++; continue; }
    const word = [...ch.cps];
    let j = i + 1;
    for (;;) {
      if (j < chars.length && wordy(chars[j].cls)) { word.push(...chars[j].cps); j++; continue; }
      if (j < chars.length && isMid(chars[j].cls) && joinsByMid(chars[j - 1], chars[j], chars[j + 1])) {
        word.push(...chars[j].cps, ...chars[j + 1].cps);
        j += 2;
        continue;
      }
      break;
    }
    words.push(word);
    i = j;
  }
  return words;
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
    const tokens = o.split === 'unicode' ? unicodeWords(cps, o.cjk ?? 'chars') : splitWords(cps, o.split ?? 'whitespace');
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
