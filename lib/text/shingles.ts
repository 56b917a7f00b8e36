// lib/text/ - the shingle stream every engine takes (mirror of native/core/text; stands on io/, native/, util/).
// Guarantee: one ShingleOptions, one normalisation and shingling in native/core/text: equal options give equal
// shingles in minhash, simhash, dedup and shingleHashes.
//
// The shingle stream, exposed: text -> normalised units -> shingles -> 32/64-bit hashes.
import { nativeCall, nativeSync, invalidArgument } from '../util/errors';
import { expectTexts } from '../util/validate';
import { native, type TextInput } from '../native/addon';

export type { TextInput, PackedTexts } from '../native/addon';
import type { ClusterUnit, NormalizeForm, ShingleOptions, ShingleHashKind, ShingleHashOptions, WordSplit } from '../native/types';

export type { ClusterUnit, NormalizeForm, ShingleOptions, ShingleHashKind, ShingleHashOptions, WordSplit };

export const NORMALIZE_FORMS: readonly NormalizeForm[] = ['none', 'nfc', 'nfkc', 'nfkc_casefold'];
export const WORD_SPLITS: readonly WordSplit[] = ['whitespace', 'nonword', 'unicode'];
export const CLUSTER_UNITS: readonly ClusterUnit[] = ['chars', 'bigrams'];
/**
 * The word rule of neardup's own dedup (its fast profile): Unicode word boundaries with character bigrams for
 * scripts without spaces, the best of the rules on the held-out multilingual check (bench/RESULTS-languages.md,
 * docs/languages.md). The drop-in profiles keep their tools' rules.
 */
export const NEARDUP_SPLIT: WordSplit = 'unicode';
export const NEARDUP_CJK: ClusterUnit = 'bigrams';

/**
 * The texts after the shingle stream's Unicode normalisation (the `normalize` shingle option), as strings;
 * synchronous, on the calling thread. Invalid UTF-8 in byte inputs becomes U+FFFD (as Buffer.toString does).
 * 'nfc' and 'nfkc' equal String.prototype.normalize('NFC' / 'NFKC'); 'nfkc_casefold' is
 * `[...s.normalize('NFKC')].map((c) => c.toLowerCase()).join('').normalize('NFC')`.
 */
export function normalizeTextSync(texts: TextInput, form: NormalizeForm): string[] {
  const list = NORMALIZE_FORMS.map((f) => `'${f}'`).join(', ');
  if (typeof form !== 'string') throw invalidArgument(TypeError, `Expected form to be one of ${list}, got ${typeof form}`);
  if (!NORMALIZE_FORMS.includes(form)) throw invalidArgument(RangeError, `form must be one of ${list}, got '${form}'`);
  const r = nativeSync(() => native.normalizeTextSync(texts, form));
  const out: string[] = [];
  const data = Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength);
  for (let i = 0; i + 1 < r.offsets.length; i++) out.push(data.toString('utf8', r.offsets[i], r.offsets[i + 1]));
  return out;
}

export interface ShingleHashResult<H extends BigUint64Array | Uint32Array = BigUint64Array | Uint32Array> {
  /** All hashes, document after document. */
  hashes: H;
  /** Document i's hashes are hashes[offsets[i] .. offsets[i+1]); length = documents + 1. */
  offsets: Uint32Array;
  /** Documents that had invalid UTF-8 (decoded with U+FFFD substitution). */
  invalidUtf8Docs: number;
}

/** Options selecting a 32-bit hash: results are Uint32Array. */
export type ShingleHash32Options = ShingleHashOptions & { hash: 'murmur3_32' | 'sha1_32' };
/** Options selecting a 64-bit hash (or none: fast64): results are BigUint64Array. */
export type ShingleHash64Options = ShingleHashOptions & { hash?: 'fast64' | 'murmur3_64' | 'md5_64' };

/**
 * Hashes every shingle of every document, on the native thread pool (the event loop is not blocked).
 * The hash kind types the result: 'murmur3_32' and 'sha1_32' give Uint32Array hashes, the 64-bit kinds (and
 * the default, fast64) BigUint64Array. Byte inputs are read in place and must not be modified until the
 * promise settles. Invalid arguments reject the promise (TypeError/RangeError, code
 * ERR_NEARDUP_INVALID_ARGUMENT); nothing is thrown synchronously.
 */
export function shingleHashes(texts: TextInput, options: ShingleHash32Options): Promise<ShingleHashResult<Uint32Array>>;
export function shingleHashes(texts: TextInput, options?: ShingleHash64Options): Promise<ShingleHashResult<BigUint64Array>>;
export function shingleHashes(texts: TextInput, options?: ShingleHashOptions): Promise<ShingleHashResult>;
export async function shingleHashes(texts: TextInput, options?: ShingleHashOptions): Promise<ShingleHashResult> {
  return nativeCall(native.shingleHashes(texts, options));
}

/** The same, synchronously on the calling thread (single-threaded): for small inputs. Typed as shingleHashes. */
export function shingleHashesSync(texts: TextInput, options: ShingleHash32Options): ShingleHashResult<Uint32Array>;
export function shingleHashesSync(texts: TextInput, options?: ShingleHash64Options): ShingleHashResult<BigUint64Array>;
export function shingleHashesSync(texts: TextInput, options?: ShingleHashOptions): ShingleHashResult;
export function shingleHashesSync(texts: TextInput, options?: ShingleHashOptions): ShingleHashResult {
  return nativeSync(() => native.shingleHashesSync(texts, options));
}

/** Packs texts into one UTF-8 buffer with offsets (the cheapest form to pass to batch calls repeatedly). */
export function packTexts(texts: ReadonlyArray<string | Uint8Array>): { data: Buffer; offsets: Uint32Array } {
  expectTexts(texts, 'texts');
  let total = 0;
  const parts: Uint8Array[] = texts.map((t) => {
    const b = typeof t === 'string' ? Buffer.from(t, 'utf8') : t;
    total += b.byteLength;
    return b;
  });
  if (total > 0xffffffff) throw invalidArgument(RangeError, 'packTexts: more than 4 GiB of text; use BigUint64Array offsets');
  const data = Buffer.allocUnsafe(total);
  const offsets = new Uint32Array(parts.length + 1);
  let at = 0;
  parts.forEach((p, i) => {
    data.set(p, at);
    at += p.byteLength;
    offsets[i + 1] = at;
  });
  return { data, offsets };
}
