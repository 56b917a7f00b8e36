// lib/substr/ - repeated-substring removal (mirror of native/core/substr): this file (SubstringFinder,
// removeSpans, removeRepeatedSubstrings; the `substrings` command is lib/cli/commands/substrings.ts). Imports
// native/ and util/ only.
//
// ExactSubstr (Lee et al. 2021) over one corpus held in memory: every byte that lies in a window of L bytes
// whose content occurs at an earlier offset of the corpus (input order across documents) is removed, so the
// first occurrence is kept; with dropAll, every copy is removed (Lee et al.'s rule). Windows never cross a
// document; spans are shrunk to whole code points. docs/substrings.md has the rules, memory and speed.
import { SerialNative } from '../native/serial';
import { NeardupError, fromNative, invalidArgument } from '../util/errors';
import { optionsObject } from '../util/validate';
import { native, type NativeSubstringCorpus, type NativeSubstringSpans, type TextInput } from '../native/addon';

export type SubstringSpans = NativeSubstringSpans;

export interface SubstringOptions {
  /**
   * What a window counts: bytes of UTF-8 (default) or tokens (maximal runs of non-whitespace code points,
   * Python's str.split()). A token is removed when it lies in a window of L tokens whose sequence occurred
   * earlier; a span runs from the first byte of a run of removed tokens to the last byte of its last token.
   */
  unit?: 'byte' | 'token';
  /** L, the shortest repeat removed: bytes (default 100; from 4 to 2^30) or tokens (default 50; from 1). */
  minLength?: number;
  /** Remove every copy of a repeat, the first one too (default false: the first occurrence is kept). */
  dropAll?: boolean;
  /** Also write the text and its suffix array to this file (byte mode), for countSubstrings (docs/FORMAT.md section 16). */
  indexPath?: string;
}

export const DEFAULT_MIN_LENGTH = 100;
export const DEFAULT_MIN_TOKENS = 50;

/** ERR_NEARDUP_UNSUPPORTED naming the package to install when libdivsufsort cannot be loaded, else undefined. */
export function suffixSortMissing(): NeardupError | undefined {
  const l = native.substringsLibrary();
  return l.ok ? undefined : new NeardupError('ERR_NEARDUP_UNSUPPORTED', l.message);
}

/**
 * Documents in, removed spans out. add() appends documents in corpus order (UTF-8; they are copied into
 * native memory); find() builds the suffix array and returns the spans, by document then start. Calls are
 * queued in order; the work runs on the native pool.
 */
export class SubstringFinder extends SerialNative<NativeSubstringCorpus> {

  constructor() {
    super('the substring finder');
    const missing = suffixSortMissing();
    if (missing) throw missing;
    this.handle = new native.SubstringCorpus();
  }



  /**
   * Appends documents. A text that is not valid UTF-8 refuses the whole batch: resolves to { bad: its index,
   * message }, and nothing of the batch is added; undefined when all were added.
   */
  addBatch(texts: TextInput): Promise<{ bad: number; message: string } | undefined> {
    this.live();
    return this.enqueue((h) => h.add(texts));
  }

  /** Appends documents; a text that is not valid UTF-8 is an ERR_NEARDUP_INVALID_INPUT error naming its index. */
  async add(texts: TextInput): Promise<void> {
    const r = await this.addBatch(texts);
    if (r) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `text ${r.bad}: ${r.message}`);
  }

  /** Documents added so far. */
  get documents(): number {
    return this.live().documents();
  }

  /** The removed spans of the documents added so far (the corpus stays; find may be called again). */
  find(options: SubstringOptions = {}): Promise<SubstringSpans> {
    optionsObject(options);
    const unit = options.unit ?? 'byte';
    if (unit !== 'byte' && unit !== 'token') throw invalidArgument(RangeError, `unit must be 'byte' or 'token', got ${String(unit)}`);
    const length = options.minLength ?? (unit === 'byte' ? DEFAULT_MIN_LENGTH : DEFAULT_MIN_TOKENS);
    const min = unit === 'byte' ? 4 : 1;
    if (!Number.isInteger(length) || length < min || length > 2 ** 30)
      throw invalidArgument(RangeError, `minLength must be an integer from ${min} to 2^30 (${unit}s), got ${String(length)}`);
    this.live();
    if (options.indexPath !== undefined && (typeof options.indexPath !== 'string' || options.indexPath === ''))
      throw invalidArgument(TypeError, 'Expected indexPath to be a file name');
    if (options.indexPath !== undefined && unit !== 'byte') throw invalidArgument(RangeError, "indexPath needs unit 'byte'");
    return this.enqueue((h) => h.find({ length, unit, dropAll: Boolean(options.dropAll), ...(options.indexPath === undefined ? {} : { indexPath: options.indexPath }) }));
  }

  close(): void {
    this.closeHandle();
  }
}

/** `text` (UTF-8) without the spans [start[k], end[k]) for k in [from, to) (ascending, disjoint). */
export function removeSpans(text: Uint8Array, start: ArrayLike<number>, end: ArrayLike<number>, from = 0, to = start?.length): Buffer {
  if (!(text instanceof Uint8Array)) throw invalidArgument(TypeError, 'Expected text to be a Uint8Array (UTF-8)');
  const isList = (v: unknown) => Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
  if (!isList(start) || !isList(end)) throw invalidArgument(TypeError, 'Expected start and end to be arrays of byte offsets');
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to > Math.min(start.length, end.length))
    throw invalidArgument(RangeError, `from and to must be integers within the spans (0 to ${Math.min(start.length, end.length)})`);
  let prev = 0;
  for (let k = from; k < to; k++) {
    if (!(Number.isInteger(start[k]) && start[k] >= prev && end[k] >= start[k] && end[k] <= text.length))
      throw invalidArgument(RangeError, `span ${k} [${start[k]}, ${end[k]}) is not within the text, after the span before it`);
    prev = end[k];
  }
  const buf = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  if (from >= to) return buf;
  const parts: Buffer[] = [];
  let at = 0;
  for (let k = from; k < to; k++) {
    if (start[k] > at) parts.push(buf.subarray(at, start[k]));
    at = end[k];
  }
  if (at < buf.length) parts.push(buf.subarray(at));
  return Buffer.concat(parts);
}

/** Convenience: the texts with their repeated substrings removed, and the spans (offsets into each text's UTF-8). */
export async function removeRepeatedSubstrings(texts: ReadonlyArray<string>, options: SubstringOptions = {}): Promise<{ texts: string[]; spans: SubstringSpans }> {
  if (!Array.isArray(texts)) throw invalidArgument(TypeError, 'Expected texts to be an array of strings');
  const f = new SubstringFinder();
  try {
    await f.add(texts);
    const spans = await f.find(options);
    const out: string[] = [];
    let k = 0;
    for (let d = 0; d < texts.length; d++) {
      const from = k;
      while (k < spans.doc.length && spans.doc[k] === d) k++;
      out.push(from === k ? texts[d] : removeSpans(Buffer.from(texts[d], 'utf8'), spans.start, spans.end, from, k).toString('utf8'));
    }
    return { texts: out, spans };
  } finally {
    f.close();
  }
}

/**
 * Occurrences (overlapping ones too) of each string in the corpus of a substring index (written with
 * find({ indexPath })); strings are not empty. verify (default true): check the file's CRC-32C first.
 */
export async function countSubstrings(indexPath: string, strings: ReadonlyArray<string>, options: { verify?: boolean } = {}): Promise<{ counts: number[]; documents: number; bytes: number }> {
  if (typeof indexPath !== 'string') throw invalidArgument(TypeError, 'Expected indexPath to be a string');
  if (!Array.isArray(strings) || !strings.every((s) => typeof s === 'string')) throw invalidArgument(TypeError, 'Expected strings to be an array of strings');
  optionsObject(options);
  try {
    const r = await native.substringIndexCount(indexPath, strings, options.verify ?? true);
    return { counts: Array.from(r.counts), documents: r.documents, bytes: r.bytes };
  } catch (e) {
    throw fromNative(e);
  }
}
