// The option and result shapes that the binding takes and returns and that the engines publish: declared here,
// on the ground floor, so that the addon's one typed interface (addon.ts) imports no engine. Each engine
// re-exports its own (text/shingles.ts, filter/paragraphs.ts, postings/postings.ts); lib/index.ts exports them
// under the same names as before.

// ---- the shingle stream (text/shingles.ts)

/**
 * Unicode normalisation before shingling: 'none' (the text as it is), 'nfc', 'nfkc' (as
 * String.prototype.normalize), 'nfkc_casefold' (NFC of the per-code-point lower-casing of NFKC: docs/FORMAT.md
 * "Text rules").
 */
export type NormalizeForm = 'none' | 'nfc' | 'nfkc' | 'nfkc_casefold';

/** How words are cut (docs/languages.md). */
export type WordSplit = 'whitespace' | 'nonword' | 'unicode';
/** The word units of scripts written without spaces, under the 'unicode' split. */
export type ClusterUnit = 'chars' | 'bigrams';

/** How documents become shingles. Every engine takes these same options. */
export interface ShingleOptions {
  /** 'char': n-grams of code points (default); 'word': n-grams of words. */
  unit?: 'char' | 'word';
  /** Shingle length in units, 1..4096. Default 5. */
  n?: number;
  /**
   * Word splitting: 'whitespace' (Python's str.split(), default) or 'nonword' (re.split(r'\W+')), or 'unicode'
   * (Unicode word boundaries, UAX #29's word rules; scripts without spaces cut into clusters: `cjk`).
   * docs/languages.md.
   */
  split?: WordSplit;
  /**
   * split 'unicode': the units of Han, Hiragana, Katakana, Thai, Lao, Khmer and Myanmar text, each letter with
   * its marks ('chars', default) or overlapping pairs of them ('bigrams').
   */
  cjk?: ClusterUnit;
  /** Lower-case every code point (Python str.lower() / toLowerCase(), without final sigma). */
  lowercase?: boolean;
  /** Drop punctuation (\p{P}) code points. */
  stripPunctuation?: boolean;
  /** Char unit: collapse whitespace runs to one space and trim. */
  foldWhitespace?: boolean;
  /** Documents with fewer than n units: 'whole' (one shingle of all of it, default) or 'none'. */
  short?: 'whole' | 'none';
  /** Unicode normalisation, before every other step. Default 'none'. */
  normalize?: NormalizeForm;
}

export type ShingleHashKind = 'fast64' | 'murmur3_32' | 'murmur3_64' | 'sha1_32' | 'md5_64';

export interface ShingleHashOptions extends ShingleOptions {
  /**
   * 'fast64' (default, 64-bit), 'murmur3_64' (h1 of MurmurHash3_x64_128), 'md5_64' (first 8 bytes of MD5,
   * big-endian): BigUint64Array. 'murmur3_32' (MurmurHash3_x86_32), 'sha1_32' (first 4 bytes of SHA-1,
   * little-endian): Uint32Array.
   */
  hash?: ShingleHashKind;
  /** Seed for fast64 (64-bit) and murmur3 (low 32 bits). Default 0. */
  seed?: number | bigint;
  /** Keep each distinct hash of a document once, in order of first occurrence. */
  dedupe?: boolean;
}

// ---- paragraph filter (filter/paragraphs.ts)

export interface ParagraphFilterOptions {
  /** n-gram length in tokens (Onion -n). Default 7. */
  n?: number;
  /** A paragraph is a duplicate when (tokens covered by seen n-grams) / tokens > threshold (Onion -t). Default 0.5. */
  threshold?: number;
  /** Also drop short runs of kept paragraphs between duplicates (Onion's default; -m turns it off). Default true. */
  smoothing?: boolean;
  /** Longest run, in tokens, that smoothing drops (Onion -l). Default 20. */
  maxStub?: number;
  /** Repeats inside one document count as seen (Onion). Default true. */
  withinDocument?: boolean;
  /**
   * Never let smoothing drop a document that has no duplicate paragraph at all. Default true (neardup's safe
   * behaviour); Onion 1.2 drops every unique document of <= maxStub tokens (false).
   */
  keepUniqueShort?: boolean;
  /**
   * Drop-all mode: remove every copy of a repeated paragraph, the first one too. Needs two passes over the
   * same input: push it all (the results of this first pass are keep-first decisions, to be ignored), call
   * `startSecondPass()`, push the same input again; the second pass returns the drop-all decisions.
   * Default false (keep-first: the first copy is kept).
   */
  dropAll?: boolean;
  /**
   * The n-gram hash. 'neardup' (default): a well-mixed 64-bit hash. 'onion': Onion 1.2's own buzhash over
   * its table-driven token hash, collisions included, so decisions match Onion's exactly (`neardup onion`;
   * docs/paragraphs.md, "Two hashes"). saveSeen/loadSeen need 'neardup'.
   */
  ngramHash?: 'neardup' | 'onion';
  /** With ngramHash 'onion': keep only the low trimBits bits of each n-gram hash in the seen-set (Onion -T). 1..64, default 64. */
  trimBits?: number;
  /** 'exact' (64-bit hashes, default) or 'approx' (a short chain of blocked Bloom stages, about 1/8 of the memory). */
  seen?: 'exact' | 'approx';
  /** False-positive bound of the approximate seen-set, in (0, 0.5]. Default 0.01. */
  fpRate?: number;
  /**
   * Vertical text: the expected total input bytes, if known (e.g. the file size). Only a sizing hint for the
   * approximate seen-set (its stages are sized from the input rate so far); decisions do not depend on it.
   */
  expectedBytes?: number;
  /** Vertical text: the document and paragraph tag names. Defaults 'doc' and 'p'. */
  docTag?: string;
  parTag?: string;
  /** Vertical text: also format output ('mark': "F\tline", 'strip': kept lines). Default 'none'. */
  output?: 'none' | 'mark' | 'strip';
}

export interface ParagraphFilterStats {
  documents: number;
  removedDocuments: number;
  paragraphs: number;
  duplicateParagraphs: number;
  tokens: number;
  removedTokens: number;
  /** Vertical lines read so far. */
  lines: number;
  seenKind: 'exact' | 'approx';
  /** n-grams in the seen-set. */
  seenSize: number;
  /** Bytes of memory held by the seen-set's tables. */
  seenBytes: number;
  /** Approximate set: number of Bloom stages and the false-positive bound of the chain so far. */
  seenStages?: number;
  fpBound?: number;
}

// ---- blots and posting lists (postings/postings.ts)

export type BlotProfile = 'dupi' | 'neardup';
export type WindowHash = 'xor' | 'ordered';

export interface BlotOptions {
  /**
   * 'neardup' (default): current Unicode word characters, invalid UTF-8 bytes separate words, every word
   * counts, window j = words j..j+seqLen-1. 'dupi': go-air/dupi exactly (Unicode 13 tables, last code point
   * dropped, invalid UTF-8 = no blots, word 0 never counted).
   */
  profile?: BlotProfile;
  /** 'ordered' (default for 'neardup'): order-sensitive; 'xor' (dupi's, default for 'dupi'). */
  hash?: WindowHash;
  /** Words per window (per ring when interleaved). Default 10. */
  seqLen?: number;
  /** dupi's interleaved blotter: rings of seqLen words, word k in ring k mod interleave. Default 1. */
  interleave?: number;
  /**
   * Bits of a blot: 32 (default; the 'dupi' profile has no other) or 64 ('neardup' only: words hashed with
   * FNV-1 64, then a 64-bit window hash). Among n distinct windows about n² / 2^(bits+1) pairs share a blot:
   * at 32 bits, 2^33 (2 M distinct windows: ~470 pairs of different windows taken as equal).
   */
  bits?: 32 | 64;
}

export interface BlotResult<B extends Uint32Array | BigUint64Array = Uint32Array> {
  /** All blots of all documents (32-bit, or 64-bit with bits: 64), document i's being blots[docOffsets[i] .. docOffsets[i+1]). */
  blots: B;
  /** Per document i, where its blots start: blots[docOffsets[i] .. docOffsets[i+1]) (length documents + 1). */
  docOffsets: Uint32Array;
  /** Byte range of each blot's text: the hashed words (dupi: the word before the window, then the window). */
  textBegins: Uint32Array;
  /** End (exclusive) of each blot's byte range, in its document's UTF-8 bytes. */
  textEnds: Uint32Array;
  /** dupi's `blot -offsets` ranges (token j .. token j + window of the unfiltered token list). */
  tokenBegins: Uint32Array;
  /** End (exclusive) of each blot's `-offsets` range. */
  tokenEnds: Uint32Array;
}

export interface PostingIndexInfo {
  /** 32 (keys are numbers, Uint32Array) or 64 (keys are bigints, BigUint64Array). */
  keyBits: 32 | 64;
  /** Ids below nextId were given out. */
  nextId: number;
  liveDocs: number;
  segments: number;
  tombstones: number;
  freeIds: number;
  /** Posts and keys summed over segments (before tombstones are dropped). */
  posts: number;
  keys: number;
  /** A streaming append (appender()) is open. */
  appending: boolean;
}

/** @internal Where the indexed documents' texts are: document d = length[d] bytes at offset[d] of files[file[d]]. */
export interface TextSourceArg {
  files: string[];
  file: Uint32Array;
  offset: Float64Array;
  /** Each text's CRC-32C, checked the first time it is read where check[d] is 1 (its list gave one). */
  crc?: Uint32Array;
  check?: Uint8Array;
  length: Uint32Array;
}
