// lib/filter/ - paragraph filters (mirror of native/core/filter): this file (ParagraphFilter, and dedupVertical
// for Onion's vertical text; the `paragraphs` and `onion` commands are in lib/cli/commands) and decontaminate.ts
// (DecontaminationIndex and the benchmark files of `neardup decontaminate`, which also reads through io/).
// Imports io/, native/, util/ only.
//
// Streaming paragraph dedup (Onion semantics) with an exact or approximate seen-set. See docs/paragraphs.md.
import { SerialNative } from '../native/serial';
import { invalidArgument } from '../util/errors';
import { expectArray, expectTexts, optionsObject } from '../util/validate';
import { native, type NativeParagraphFilter, type TextInput } from '../native/addon';
import type { ParagraphFilterOptions, ParagraphFilterStats } from '../native/types';
import { SavedFiles, fileIdentity } from '../io/locks';

export type { ParagraphFilterOptions, ParagraphFilterStats };

export interface VerticalChunkResult {
  /** One flag per line decided by this call (1 = removed), in input order; continues where the last call stopped. */
  flags: Uint8Array;
  /** With output 'mark' or 'strip': the formatted lines decided by this call. */
  text: Buffer;
}

export interface VerticalPushOptions {
  /** Write the text into this buffer when it fits (the result's text is a view of it). */
  into?: Uint8Array;
  /** false: return no per-line flags (default true). */
  flags?: boolean;
}

export interface ParagraphResult {
  /** Per document: per paragraph, true when it is a duplicate (to be removed). */
  duplicate: boolean[][];
  /** Per document: true when the whole document is removed. */
  documentRemoved: boolean[];
  /** Per document: per paragraph, its number of tokens (whitespace-separated words). */
  tokens: number[][];
}

/**
 * A streaming paragraph deduplicator. Documents are decided in the order they are pushed; the n-grams of
 * kept paragraphs join the seen-set, so later copies are dropped and the first copy is kept. Calls on one
 * filter are queued and run one after another; hashing and parsing use the native thread pool.
 */
export class ParagraphFilter extends SerialNative<NativeParagraphFilter> {
  /** The files the seen-set was loaded from or saved to: saveSeen() checks them. */
  private readonly files = new SavedFiles();

  constructor(options: ParagraphFilterOptions = {}) {
    super('the paragraph filter');
    optionsObject(options);
    this.handle = new native.ParagraphFilter({ ...options, keepUniqueShort: options.keepUniqueShort ?? true });
  }


  /**
   * Feeds vertical text. Every chunk but the last must end with '\n'; pass final = true with the last one
   * (possibly empty). Returns the flags of the lines whose documents were completed.
   * `options.into`: a buffer the text is written into when it fits (the result's text is then a view of it,
   * valid until `into` is reused), so a stream of pushes allocates no new output buffers; `options.flags:
   * false` returns empty flags. Both bound the memory of a long stream (docs/memory.md).
   */
  pushVertical(chunk: Uint8Array | string, final = false, options: VerticalPushOptions = {}): Promise<VerticalChunkResult> {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.live();
    // Validate now (a TypeError/RangeError for the caller), run in order.
    if (!(bytes instanceof Uint8Array)) throw invalidArgument(TypeError, 'Expected a Uint8Array or a string of vertical text');
    if (!final && bytes.byteLength > 0 && bytes[bytes.byteLength - 1] !== 0x0a)
      throw invalidArgument(RangeError, 'A chunk that is not final must end with a newline (split input at line boundaries)');
    optionsObject(options);
    if (options.into !== undefined && !(options.into instanceof Uint8Array)) throw invalidArgument(TypeError, "Expected option 'into' to be a Uint8Array");
    return this.enqueue((h) => h.pushVertical(bytes, final, { into: options.into, flags: options.flags ?? true })).then((r) => ({
      flags: r.flags,
      text: Buffer.isBuffer(r.text) ? r.text : Buffer.from(r.text.buffer, r.text.byteOffset, r.text.byteLength),
    }));
  }

  /** Deduplicates documents given as arrays of paragraph texts (tokens: whitespace-separated words). */
  async pushDocuments(docs: ReadonlyArray<ReadonlyArray<string | Uint8Array>>): Promise<ParagraphResult> {
    expectArray(docs, 'docs');
    docs.forEach((d, i) => expectTexts(d, `docs[${i}]`));
    const texts: (string | Uint8Array)[] = [];
    const offsets = new Uint32Array(docs.length + 1);
    docs.forEach((d, i) => {
      for (const p of d) texts.push(p);
      offsets[i + 1] = texts.length;
    });
    const r = await this.pushParagraphs(texts, offsets);
    const duplicate: boolean[][] = [];
    const tokens: number[][] = [];
    const documentRemoved: boolean[] = [];
    for (let i = 0; i < docs.length; i++) {
      const a = offsets[i], b = offsets[i + 1];
      duplicate.push(Array.from(r.dup.subarray(a, b), (x) => x === 1));
      tokens.push(Array.from(r.tokens.subarray(a, b)));
      documentRemoved.push(r.docRemoved[i] === 1);
    }
    return { duplicate, documentRemoved, tokens };
  }

  /** The flat form of pushDocuments: paragraph texts and document offsets (length documents + 1). */
  pushParagraphs(texts: TextInput, docOffsets: Uint32Array): Promise<{ dup: Uint8Array; docRemoved: Uint8Array; tokens: Uint32Array }> {
    this.live();
    return this.enqueue((h) => h.pushParagraphs(texts, docOffsets));
  }

  /**
   * Saves the seen-set (atomically) so a later run can deduplicate against this corpus. As LshIndex.save: under
   * the file's writer lock (another process saving it: ERR_NEARDUP_IO), and onto the file the set was loaded from
   * or saved to, refused with ERR_NEARDUP_CONFLICT when that file changed since, unless `overwrite`.
   */
  saveSeen(path: string, options: { overwrite?: boolean } = {}): Promise<void> {
    this.live();
    optionsObject(options);
    if (options.overwrite !== undefined && typeof options.overwrite !== 'boolean') throw invalidArgument(TypeError, 'Expected overwrite to be a boolean');
    const write = () => this.enqueue((h) => h.saveSeen(path));
    if (typeof path !== 'string') return write();  // the binding's TypeError
    return this.files.save(path, options.overwrite === true, write, 'the seen-set', 'load it again, or save with overwrite: true to replace it');
  }

  /**
   * Replaces the seen-set by a saved one (built with the same n). Its kind (exact/approx) is kept. Must come
   * before the first push: afterwards it is an ERR_NEARDUP_INVALID_INPUT error (it would forget what was pushed).
   */
  loadSeen(path: string): Promise<{ kind: 'exact' | 'approx'; size: number }> {
    this.live();
    const identity = typeof path === 'string' ? fileIdentity(path) : null;  // before it is read
    return this.enqueue((h) => h.loadSeen(path)).then((r) => {
      this.files.track(path, identity);
      return r;
    });
  }

  /** Drop-all mode: ends the first pass (after all pushes of it); push the same input again afterwards. */
  startSecondPass(): Promise<void> {
    this.live();
    return this.enqueue(async (h) => h.startSecondPass());
  }

  /**
   * Onion's -f (needs ngramHash 'onion', before the first push): hashes of the n-grams that occur more than
   * once in the input, as written by Onion's hashdup / `neardup onion hashdup` (little-endian u64, 8 bytes
   * each). Only these n-grams then enter the seen-set. May be called several times; resolves to the number
   * of distinct hashes held so far.
   */
  addDuplicateNgrams(hashes: Uint8Array): Promise<number> {
    this.live();
    if (!(hashes instanceof Uint8Array)) throw invalidArgument(TypeError, 'Expected hashes to be a Uint8Array of 64-bit hashes');
    return this.enqueue((h) => h.addDuplicateNgrams(hashes));
  }

  /** Statistics as of the last finished call. */
  stats(): ParagraphFilterStats {
    return this.live().stats();
  }

  /**
   * Releases the seen-set. Safe while calls are pending: a call already running finishes (its result is
   * delivered), one waiting on the native thread pool rejects with ERR_NEARDUP_CANCELLED, and calls still
   * queued behind others on this filter reject with ERR_NEARDUP_CLOSED.
   */
  close(): void {
    this.closeHandle();
  }
}

/** Convenience: the flags (1 = removed) of every line of a whole vertical text (both passes with dropAll). */
export async function dedupVertical(input: Uint8Array | string, options: ParagraphFilterOptions = {}): Promise<Uint8Array> {
  const f = new ParagraphFilter({ ...options, output: 'none' });
  try {
    if (options.dropAll) {
      await f.pushVertical(input, true);
      await f.startSecondPass();
    }
    const r = await f.pushVertical(input, true);
    return r.flags;
  } finally {
    f.close();
  }
}
