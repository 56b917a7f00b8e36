// lib/exact/ - exact and key dedup (mirror of native/core/exact): this file (ExactDedup, the URL key
// normalisation). Imports native/, util/ only.
//
// Each document is reduced to a 128-bit hash (MurmurHash3_x64_128) of its text, as it is or normalised with
// the shingle stream's rules (lower-casing, punctuation, whitespace; words re-joined with single spaces),
// after an optional Unicode normalisation (NFC/NFKC, String.prototype.normalize); a document is a duplicate
// of the first earlier document with the same hash. Hashing runs on the native pool; the table holds 20
// bytes per distinct document (at most 4/3 of it in slack) and, beyond `memory`, spills to sorted runs in
// `tmp`. See docs/exact.md.
import { SerialNative } from '../native/serial';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { NeardupError, fromNative, invalidArgument } from '../util/errors';
import { expectString, expectTexts, optionsObject } from '../util/validate';
import { native, type NativeExactDedup, type NativeExactDedupResult, type PackedTexts, type TextInput } from '../native/addon';

export interface ExactDedupOptions {
  /** Unicode normalisation before anything else (default 'none': the text as is). */
  unicode?: 'none' | 'nfc' | 'nfkc';
  /** 'word': the words (split as `split` says) re-joined by single spaces, which also folds whitespace. */
  unit?: 'char' | 'word';
  split?: 'whitespace' | 'nonword';
  lowercase?: boolean;
  stripPunctuation?: boolean;
  /** Runs of whitespace become one space, trimmed at both ends. */
  foldWhitespace?: boolean;
  /** Bytes the table may take before it spills to sorted runs in `tmp` (0, the default: never). */
  memory?: number;
  tmp?: string;
  /** Keep what saveIndex needs (the hashes of the kept documents, also when spilled). */
  indexOut?: boolean;
}

/** What ExactDedup.finish() resolves to. */
export interface ExactDedupResult extends NativeExactDedupResult {
  /** Each document's representative: the number of the first document with its text (its own number when kept), INDEX_MATCH when found in the index. */
  representative: Uint32Array;
  /** Documents added. */
  documents: number;
  /** Documents that are not their own representative (those found in the index included). */
  duplicates: number;
  /** Documents minus duplicates: the groups of equal texts (bad lines count as their own). */
  distinct: number;
  /** Bytes written to sorted runs in `tmp` (0: the table stayed in memory). */
  spilledBytes: number;
  /** Sorted runs written beyond `memory`. */
  runs: number;
  /** The table's memory at its largest, in bytes. */
  tableBytes: number;
  /** Documents found in the index (loadIndex). */
  indexMatched: number;
  /** Those documents (docs), the indexed documents' numbers (indexDocs) and, for an index with ids, their ids (JSON text). */
  indexMatches: { docs: Uint32Array; indexDocs: Float64Array; ids?: string[] };
}

/** Whether the options ask for anything but the text as is (the hash is then of the normalised text). */
export function exactNormalizes(o: ExactDedupOptions): boolean {
  return o.unit === 'word' || Boolean(o.lowercase) || Boolean(o.stripPunctuation) || Boolean(o.foldWhitespace);
}

const decoder = new TextDecoder();

/** The texts after Unicode normalisation (NFC/NFKC), as a packed batch. */
export function unicodeNormalized(texts: TextInput, form: 'NFC' | 'NFKC'): PackedTexts {
  const parts: Buffer[] = [];
  const each = (t: string | Uint8Array) => parts.push(Buffer.from((typeof t === 'string' ? t : decoder.decode(t)).normalize(form), 'utf8'));
  let n: number;
  if (Array.isArray(texts)) {
    n = texts.length;
    for (const t of texts as ReadonlyArray<string | Uint8Array>) each(t);
  } else {
    const p = texts as PackedTexts;
    n = p.offsets.length - 1;
    for (let i = 0; i < n; i++) each(p.data.subarray(Number(p.offsets[i]), Number(p.offsets[i + 1])));
  }
  const offsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + parts[i].length;
  if (offsets[n] !== parts.reduce((a, b) => a + b.length, 0)) throw new RangeError('a batch of more than 4 GiB after Unicode normalisation');
  return { data: Buffer.concat(parts), offsets };
}

/**
 * Exact dedup of a stream of documents, in input order: add() returns each document's representative (the
 * number of the first document with the same text; its own number when it is the first), finish() all of
 * them. Once the table has spilled (`memory`), add() returns 0xfffffffe (PENDING) for the documents that
 * follow and finish() resolves them. Calls are queued and run one after another.
 */
export class ExactDedup extends SerialNative<NativeExactDedup> {
  static readonly PENDING = 0xfffffffe;
  /** The representative of a document found in the index (loadIndex): dedup's INDEX_REPRESENTATIVE. */
  static readonly INDEX_MATCH = 0xffffffff;
  private readonly unicode: 'NFC' | 'NFKC' | undefined;

  constructor(options: ExactDedupOptions = {}) {
    super('the exact dedup');
    optionsObject(options);
    for (const k of ['lowercase', 'stripPunctuation', 'foldWhitespace', 'indexOut'] as const)
      if (options[k] !== undefined && typeof options[k] !== 'boolean') throw invalidArgument(TypeError, `Expected option '${k}' to be a boolean`);
    const u = options.unicode ?? 'none';
    if (u !== 'none' && u !== 'nfc' && u !== 'nfkc') throw invalidArgument(RangeError, `Option 'unicode' must be 'none', 'nfc' or 'nfkc', got '${String(u)}'`);
    this.unicode = u === 'none' ? undefined : u === 'nfc' ? 'NFC' : 'NFKC';
    if (options.memory !== undefined && (!Number.isSafeInteger(options.memory) || options.memory < 0))
      throw invalidArgument(RangeError, `Option 'memory' must be a non-negative integer, got ${String(options.memory)}`);
    try {
      this.handle = new native.ExactDedup({
        normalize: exactNormalizes(options), unit: options.unit, split: options.split, lowercase: options.lowercase,
        stripPunctuation: options.stripPunctuation, foldWhitespace: options.foldWhitespace,
        memory: options.memory ?? 0, tmp: options.tmp ?? (options.memory ? os.tmpdir() : undefined), indexOut: Boolean(options.indexOut),
      });
    } catch (e) {
      throw fromNative(e);
    }
  }



  /** Adds the next documents (valid[i] = 0: a bad line, its own representative, matching nothing). */
  add(texts: TextInput, valid?: Uint8Array): Promise<Uint32Array> {
    this.live();
    if (Array.isArray(texts)) expectTexts(texts, 'texts');
    const input = this.unicode ? unicodeNormalized(texts, this.unicode) : texts;
    return this.enqueue((h) => h.add(input, valid));
  }

  /** Adds the next documents as hashes (exactHashes: two values a document), for runs that hashed them apart. */
  addHashes(hashes: BigUint64Array, valid?: Uint8Array): Promise<Uint32Array> {
    this.live();
    if (!(hashes instanceof BigUint64Array)) throw invalidArgument(TypeError, 'Expected hashes to be a BigUint64Array (two values a document)');
    return this.enqueue((h) => h.addHashes(hashes, valid));
  }

  /** Every document's representative, and the counts; no document can be added afterwards. */
  finish(): Promise<ExactDedupResult> {
    this.live();
    return this.enqueue((h) => h.finish());
  }

  /**
   * Dedups against an index written by saveIndex (before the first add): a document whose hash it holds gets
   * INDEX_MATCH and is reported in finish()'s indexMatches. `meta` is what saveIndex was given.
   */
  loadIndex(path: string): Promise<{ entries: number; documents: number; meta: string; hasIds: boolean }> {
    this.live();
    expectString(path, 'path');
    return this.enqueue((h) => h.loadIndex(path));
  }

  /**
   * After finish (with `indexOut`): writes, atomically, an index of the documents kept so far: those of the
   * index loaded and this run's, this run's document d numbered firstDoc + d, with ids (one per document of this
   * run, JSON text) when given (an index loaded with ids is extended with ids only).
   */
  saveIndex(path: string, options: { meta: string; firstDoc: number; ids?: TextInput }): Promise<void> {
    this.live();
    expectString(path, 'path');
    optionsObject(options);
    expectString(options.meta, 'options.meta');
    return this.enqueue((h) => h.saveIndex(path, options));
  }

  close(): void {
    this.closeHandle();
  }
}

/**
 * The meta text of an exact index (docs/FORMAT.md "Exact index"), read from its first bytes without checking
 * the rest (loadIndex checks all of it); an ERR_NEARDUP_CORRUPT error naming the file when it is not one.
 */
export function readExactIndexMeta(file: string): string {
  const corrupt = (what: string) => new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is not a valid exact index: ${what}`, { file });
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(68);
    if (fs.readSync(fd, head, 0, 68, 0) < 68) throw corrupt('it is shorter than its header');
    if (head.toString('latin1', 0, 4) !== 'NDUP' || head.toString('latin1', 8, 12) !== 'EXIX') throw corrupt('its header is not that of an exact index (EXIX)');
    const m = head.readUInt32LE(64);
    const size = Number(head.readBigUInt64LE(24));
    if (m > size - 4) throw corrupt('its meta runs past the payload');
    const meta = Buffer.alloc(m);
    if (fs.readSync(fd, meta, 0, m, 68) < m) throw corrupt('it ends within its meta');
    return meta.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** The 128-bit hash of each text as ExactDedup hashes it under `options` (high, low: two values a text). */
export async function exactHashes(texts: TextInput, options: ExactDedupOptions = {}): Promise<BigUint64Array> {
  optionsObject(options);
  const u = options.unicode ?? 'none';
  const input = u === 'none' ? texts : unicodeNormalized(texts, u === 'nfc' ? 'NFC' : 'NFKC');
  try {
    return await native.exactHashes(input, {
      normalize: exactNormalizes(options), unit: options.unit, split: options.split, lowercase: options.lowercase,
      stripPunctuation: options.stripPunctuation, foldWhitespace: options.foldWhitespace,
    });
  } catch (e) {
    throw fromNative(e);
  }
}

/**
 * The texts of a packed batch as keys: each value Unicode-normalised (`unicode`), then read as a URL under
 * `urlRules` (normalizeUrl). For --key with --url-normalize, before hashing.
 */
export function urlKeys(p: PackedTexts, count: number, unicode: 'none' | 'nfc' | 'nfkc' | undefined, urlRules: ReadonlySet<UrlRule>): PackedTexts {
  const src = unicode === undefined || unicode === 'none' ? p : unicodeNormalized(p, unicode === 'nfc' ? 'NFC' : 'NFKC');
  const parts: Buffer[] = [];
  const offsets = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) {
    const b = Buffer.from(src.data.buffer, src.data.byteOffset + Number(src.offsets[i]), Number(src.offsets[i + 1]) - Number(src.offsets[i]));
    const t = Buffer.from(normalizeUrl(b.toString('utf8'), urlRules), 'utf8');
    parts.push(t);
    offsets[i + 1] = offsets[i] + t.length;
  }
  return { data: Buffer.concat(parts), offsets };
}

/** The representatives of a list of texts (one call: add + finish). */
export async function exactDuplicates(texts: TextInput, options: ExactDedupOptions = {}): Promise<Uint32Array> {
  if (Array.isArray(texts)) expectTexts(texts, 'texts');
  else if (texts === null || typeof texts !== 'object') throw invalidArgument(TypeError, 'Expected texts to be an array of strings or Uint8Arrays, or packed texts');
  const d = new ExactDedup(options);
  try {
    await d.add(texts);
    return (await d.finish()).representative;
  } finally {
    d.close();
  }
}

// --------------------------------------------------------------------------------------------------------
// Keys: URL normalisation (as web-crawl pipelines do before key dedup)

export type UrlRule = 'scheme' | 'www' | 'slash' | 'query' | 'fragment' | 'tracking' | 'sort-query';
export const URL_RULES: readonly UrlRule[] = ['scheme', 'www', 'slash', 'fragment', 'tracking', 'sort-query', 'query'];
/** The rules `all` means: every rule but dropping the whole query (which would merge pages that differ by it). */
export const URL_DEFAULT_RULES: readonly UrlRule[] = ['scheme', 'www', 'slash', 'fragment', 'tracking', 'sort-query'];

/** Query parameters that only track a visit: utm_*, and the click ids of the large ad networks. */
const TRACKING = /^(utm_.*|fbclid|gclid|dclid|msclkid|yclid|mc_cid|mc_eid|_hsenc|_hsmi)$/i;

/**
 * A URL's key under the rules (an absolute URL is always parsed, which lower-cases its scheme and host,
 * drops a default port and percent-encodes as WHATWG URL does): 'scheme' treats http and https as one, 'www' drops a leading "www." of the host,
 * 'slash' drops a trailing slash of the path, 'fragment' drops #..., 'tracking' drops tracking parameters
 * (utm_*, fbclid, gclid, ...), 'sort-query' sorts the parameters, 'query' drops the whole query. A value that
 * is not an absolute URL is returned as it is ('slash' still applied to it).
 */
export function normalizeUrl(value: string, rules: ReadonlySet<UrlRule>): string {
  expectString(value, 'value');
  if (!(rules instanceof Set)) throw invalidArgument(TypeError, 'Expected rules to be a Set of URL rules');
  for (const r of rules) if (!(URL_RULES as readonly unknown[]).includes(r)) throw invalidArgument(RangeError, `Unknown URL rule '${String(r)}' (known: ${URL_RULES.join(', ')})`);
  let u: URL;
  try {
    u = new URL(value.trim());
  } catch {
    let v = value;
    if (rules.has('slash') && v.length > 1 && v.endsWith('/')) v = v.replace(/\/+$/, '');
    return v;
  }
  if (rules.has('scheme') && (u.protocol === 'http:' || u.protocol === 'https:')) u.protocol = 'http:';
  if (rules.has('www') && u.hostname.startsWith('www.')) u.hostname = u.hostname.slice(4);
  if (rules.has('fragment')) u.hash = '';
  if (rules.has('query')) u.search = '';
  else {
    if (rules.has('tracking')) for (const k of [...u.searchParams.keys()]) if (TRACKING.test(k)) u.searchParams.delete(k);
    if (rules.has('sort-query')) u.searchParams.sort();
    if (u.search === '?') u.search = '';
  }
  if (rules.has('slash') && u.pathname.length > 1 && u.pathname.endsWith('/')) u.pathname = u.pathname.replace(/\/+$/, '');
  // URL gives "http://host" the path "/" (the same page): kept so, whatever the rules
  return u.href;
}
