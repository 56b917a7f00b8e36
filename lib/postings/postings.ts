// lib/postings/ - posting lists and what stands on them (mirror of native/core/postings):
//   postings.ts    this file: blots, PostingIndex; passages.ts: PassageIndex (shared passages, texts kept);
//   dupi.ts: go-air/dupi's index and queries. Imports io/, native/, util/ only, no other engine.
//
// Shared passages: blots (hashed windows of words) and the memory-mapped posting-list store
// (native/core/postings; docs/FORMAT.md sections 10 and 11).
import { nativeCall, nativeSync } from '../util/errors';
import { native, type TextInput } from '../native/addon';
import { OutputFile } from '../io/files';
import { expectArray, expectInt, expectPath, optionsObject, toU64Array } from '../util/validate';
import { invalidArgument } from '../util/errors';
import type { BlotProfile, WindowHash, BlotOptions, BlotResult, PostingIndexInfo, TextSourceArg } from '../native/types';

export type { BlotProfile, WindowHash, BlotOptions, BlotResult, PostingIndexInfo, TextSourceArg };

/** Blots every document (on the native pool). */
export function blot(texts: TextInput, options: BlotOptions & { bits: 64 }): Promise<BlotResult<BigUint64Array>>;
export function blot(texts: TextInput, options?: BlotOptions & { bits?: 32 }): Promise<BlotResult>;
export function blot(texts: TextInput, options?: BlotOptions): Promise<BlotResult | BlotResult<BigUint64Array>>;
export function blot(texts: TextInput, options: BlotOptions = {}): Promise<BlotResult | BlotResult<BigUint64Array>> {
  checkBlotOptions(options);
  return nativeCall(native.blotBatch(texts, options)) as Promise<BlotResult | BlotResult<BigUint64Array>>;
}

function checkBlotOptions(options: BlotOptions | undefined): void {
  const o = optionsObject(options, 'blot options');
  if (o.profile !== undefined && o.profile !== 'dupi' && o.profile !== 'neardup')
    throw invalidArgument(TypeError, `blot profile must be 'dupi' or 'neardup', got ${String(o.profile)}`);
  if (o.hash !== undefined && o.hash !== 'xor' && o.hash !== 'ordered')
    throw invalidArgument(TypeError, `blot hash must be 'xor' or 'ordered', got ${String(o.hash)}`);
  if (o.seqLen !== undefined) expectInt(o.seqLen, 'seqLen', 1, 1 << 16);
  if (o.interleave !== undefined) expectInt(o.interleave, 'interleave', 1, 1 << 16);
  if (o.bits !== undefined && o.bits !== 32 && o.bits !== 64)
    throw invalidArgument(typeof o.bits === 'number' ? RangeError : TypeError, `blot bits must be 32 or 64, got ${String(o.bits)}`);
  if (o.bits === 64 && o.profile === 'dupi') throw invalidArgument(RangeError, `the 'dupi' blot profile has 32-bit blots only`);
}

function checkAppendOptions(options: AppendOptions | undefined): AppendOptions {
  const o = optionsObject(options);
  if (o.memory !== undefined) expectInt(o.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
  if (o.tmp !== undefined) expectPath(o.tmp, 'tmp');
  return o;
}

function checkCommitData(v: Uint8Array | undefined): void {
  if (v !== undefined && !(v instanceof Uint8Array)) throw invalidArgument(TypeError, 'Expected commitData to be a Uint8Array');
}

/** Integer ids or keys in [0, 2^32). */
function toU32(v: ArrayLike<number>, what: string): Uint32Array {
  if (v instanceof Uint32Array) return v;
  expectArray(v as ReadonlyArray<number>, what);
  const out = new Uint32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = expectInt(v[i], `${what}[${i}]`, 0, 0xffffffff);
  return out;
}


export interface AppendOptions {
  /** Memory cap in bytes for the (key, doc) pairs of the build (0 = none). Default 0. */
  memory?: number;
  /** Folder for spill runs (default: the index folder). */
  tmp?: string;
}

export interface AppendTextsOptions extends AppendOptions {
  blot?: BlotOptions;
  /** Keys = blot mod keyModulus (dupi: shards x 65536; 32-bit blots); 0 = the full blots (32-bit, or 64-bit with blot.bits 64, in an index of 64-bit keys). Default 0. */
  keyModulus?: number;
}

export interface AppenderOptions extends AppendOptions {
  /** Keys are expected below 2^keyBits (a hint that sizes the build's buckets; any key is accepted). */
  keyBits?: number;
}

/** Keys of one document: numbers (32-bit index) or bigints (64-bit index). */
export type KeyList = ArrayLike<number> | ArrayLike<bigint>;

/**
 * A streaming append (PostingIndex.appender()): documents added in any number of calls become one new
 * segment, built in bounded memory (`memory` caps the (key, doc) pairs held; the rest is spilled to sorted
 * runs), written by commit(). Until then the index refuses other edits; abort() discards the documents.
 */
export class PostingAppender {
  /** @internal */
  constructor(private readonly ix: PostingIndex, private readonly n: import('../native/addon').NativePostingIndex) {}

  /** Adds documents given as key lists; returns their ids. */
  add(docs: ReadonlyArray<KeyList>): Promise<Uint32Array> {
    const { keys, offsets } = this.ix.packKeys(docs);
    return nativeCall(this.n.addKeys(keys, offsets));
  }

  /** Blots documents (32-bit index) and adds them; returns their ids. */
  addTexts(texts: TextInput, options: { blot?: BlotOptions; keyModulus?: number } = {}): Promise<Uint32Array> {
    optionsObject(options);
    checkBlotOptions(options.blot);
    if (options.keyModulus !== undefined) expectInt(options.keyModulus, 'keyModulus', 0, 0xffffffff);
    return nativeCall(this.n.addTexts(texts, options.blot ?? {}, options.keyModulus ?? 0));
  }

  /**
   * Writes the new segment and the manifest; commitData (when given) replaces the index's commit data in that same
   * manifest (PostingIndex.commitData).
   */
  commit(commitData?: Uint8Array): Promise<void> {
    checkCommitData(commitData);
    return nativeCall(this.n.commitAppend(commitData));
  }

  /** Discards the documents added (their temporary files are removed). */
  abort(): Promise<void> {
    return nativeCall(this.n.abortAppend());
  }
}

/**
 * An inverted index key -> ascending doc ids (32-bit keys as numbers, or 64-bit keys as bigints, fixed at
 * create()), stored in a folder (manifest + memory-mapped segments). append() adds a segment (documents
 * get the freed ids first, then new ones), appender() does so in any number of calls, delete() records
 * tombstones, merge() rewrites everything as one segment (byte for byte what a fresh build gives).
 * Lookups run on the pool and may run concurrently with each other.
 */
export class PostingIndex {
  readonly keyBits: 32 | 64;
  private constructor(private readonly n: import('../native/addon').NativePostingIndex, readonly dir: string) {
    this.keyBits = n.info().keyBits;
  }

  /** Creates an empty index folder (the folder may exist, but must not hold an index). */
  static create(dir: string, options: { keyBits?: 32 | 64 } = {}): void {
    expectPath(dir, 'dir');
    const o = optionsObject(options);
    if (o.keyBits !== undefined && o.keyBits !== 32 && o.keyBits !== 64)
      throw invalidArgument(RangeError, `keyBits must be 32 or 64, got ${String(o.keyBits)}`);
    nativeSync(() => native.createPostingIndex(dir, o.keyBits ?? 32));
  }

  /** @internal Keys of the index's width, concatenated, and where each document's start. */
  packKeys(docs: ReadonlyArray<KeyList>): { keys: Uint32Array | BigUint64Array; offsets: Uint32Array } {
    expectArray(docs, 'docs');
    const lists = docs.map((d, i) => this.keyArray(d, `docs[${i}]`));
    let total = 0;
    for (const d of lists) total += d.length;
    const keys = this.keyBits === 64 ? new BigUint64Array(total) : new Uint32Array(total);
    const offsets = new Uint32Array(lists.length + 1);
    let at = 0;
    lists.forEach((d, i) => {
      (keys as Uint32Array).set(d as Uint32Array, at);
      at += d.length;
      offsets[i + 1] = at;
    });
    return { keys, offsets };
  }

  private keyArray(v: KeyList, what: string): Uint32Array | BigUint64Array {
    if (this.keyBits === 64) {
      if (v instanceof Uint32Array) throw invalidArgument(TypeError, `Expected ${what} to be 64-bit keys (BigUint64Array or bigints): the index has 64-bit keys`);
      return toU64Array(v, what);
    }
    if (v instanceof BigUint64Array) throw invalidArgument(TypeError, `Expected ${what} to be 32-bit keys (Uint32Array or numbers): the index has 32-bit keys`);
    return toU32(v as ArrayLike<number>, what);
  }

  /**
   * Opens an index. By default the manifest and each segment's directory are checked now and each key block the first
   * time it is read (version 2 segments: their payload checksum now); verify checks every checksum and list now (reads
   * everything).
   */
  static async open(dir: string, options: { verify?: boolean } = {}): Promise<PostingIndex> {
    expectPath(dir, 'dir');
    const o = optionsObject(options);
    const n = await nativeCall(native.openPostingIndex(dir, o.verify === true));
    return new PostingIndex(n, dir);
  }

  /** Adds documents given as key lists; returns their ids. */
  append(docs: ReadonlyArray<KeyList>, options: AppendOptions = {}): Promise<Uint32Array> {
    checkAppendOptions(options);
    const { keys, offsets } = this.packKeys(docs);
    return nativeCall(this.n.append(keys, offsets, options.memory ?? 0, options.tmp));
  }

  /** Opens a streaming append (see PostingAppender). */
  async appender(options: AppenderOptions = {}): Promise<PostingAppender> {
    checkAppendOptions(options);
    if (options.keyBits !== undefined) expectInt(options.keyBits, 'keyBits', 1, this.keyBits);
    await nativeCall(this.n.beginAppend(options.memory ?? 0, options.tmp, options.keyBits));
    return new PostingAppender(this, this.n);
  }

  /** Blots documents and adds them; returns their ids. */
  appendTexts(texts: TextInput, options: AppendTextsOptions = {}): Promise<Uint32Array> {
    checkAppendOptions(options);
    checkBlotOptions(options.blot);
    if (options.keyModulus !== undefined) expectInt(options.keyModulus, 'keyModulus', 0, 0xffffffff);
    return nativeCall(this.n.appendTexts(texts, options.blot ?? {}, options.keyModulus ?? 0, options.memory ?? 0, options.tmp));
  }

  /** Deletes live documents (their ids are dropped from the lists and freed by the next merge). */
  delete(ids: ArrayLike<number>): Promise<void> {
    return nativeCall(this.n.delete(Uint32Array.from(toU32(ids, 'ids'))));
  }

  merge(): Promise<void> {
    return nativeCall(this.n.merge());
  }

  /**
   * Adds the documents of other indexes (parts built apart, e.g. by other machines, by appends only) as one
   * new segment: part p's id i becomes this index's next id + (ids of the parts before p) + i, so the segment
   * is byte for byte what one append of part 0's documents, then part 1's, ... writes. Refused when this index
   * has free ids or a part has deleted documents; the parts are not changed.
   */
  appendIndexes(dirs: ReadonlyArray<string>, commitData?: Uint8Array): Promise<void> {
    expectArray(dirs as string[], 'dirs');
    dirs.forEach((d, i) => expectPath(d, `dirs[${i}]`));
    checkCommitData(commitData);
    return nativeCall(this.n.appendIndexes([...dirs], commitData));
  }

  /**
   * appendIndexes cut by key range, as independent tasks: `PostingIndex.writeKeyRange` writes range r of R of
   * the parts' merged lists (anywhere, at once); this appends ranges 0 .. R - 1, in order, as the one new
   * segment appendIndexes of the same parts writes, byte for byte, copying the lists bit for bit. `documents`:
   * the parts' documents. Each range file is checked by its payload checksum and its key blocks as they are
   * copied (its lists are not decoded); one written for other ids is refused.
   */
  appendKeyRanges(files: ReadonlyArray<string>, documents: number, commitData?: Uint8Array): Promise<void> {
    expectArray(files as string[], 'files');
    files.forEach((f, i) => expectPath(f, `files[${i}]`));
    expectInt(documents, 'documents', 0, 0xFFFFFFFF);
    checkCommitData(commitData);
    return nativeCall(this.n.appendKeyRanges([...files], documents, commitData));
  }

  /**
   * The commit data of the manifest this object opened or last wrote (null: none): bytes the index's user keeps
   * with the postings, replaced only by a commit that gives new ones (PostingAppender.commit, appendIndexes,
   * appendKeyRanges), so that one rename commits both (docs/FORMAT.md section 10, Manifest).
   */
  commitData(): Buffer | null {
    return nativeSync(() => this.n.commitData());
  }

  /**
   * Key range `range` of `ranges` (keys ceil(r 2^W / R) .. ceil((r + 1) 2^W / R) - 1, W the key width) of the
   * merged lists of the parts (indexes built by appends), their documents numbered from firstId in part order
   * as appendIndexes numbers them, written as the segment file `out` (temporary name + rename). For
   * appendKeyRanges; returns the keys and posts written.
   */
  static writeKeyRange(partDirs: ReadonlyArray<string>, out: string,
    options: { range: number; ranges: number; firstId?: number; tmp?: string }): Promise<{ keys: number; posts: number }> {
    expectArray(partDirs as string[], 'partDirs');
    partDirs.forEach((d, i) => expectPath(d, `partDirs[${i}]`));
    if (partDirs.length === 0) throw invalidArgument(RangeError, 'partDirs must name at least one index');
    expectPath(out, 'out');
    const o = optionsObject(options);
    expectInt(o.ranges, 'ranges', 1, 0xFFFFFFFF);
    expectInt(o.range, 'range', 0, o.ranges - 1);
    if (o.firstId !== undefined) expectInt(o.firstId, 'firstId', 0, 0xFFFFFFFF);
    if (o.tmp !== undefined) expectPath(o.tmp, 'tmp');
    return nativeCall(native.writeKeyRange([...partDirs], out, o.firstId ?? 0, o.range, o.ranges, o.tmp));
  }

  /** The live documents of each key: key i's are docs[offsets[i] .. offsets[i+1]). */
  lookup(keys: KeyList): Promise<{ docs: Uint32Array; offsets: Uint32Array }> {
    return nativeCall(this.n.lookup(this.keyArray(keys, 'keys').slice()));
  }

  /** Every key with live documents (ascending; a BigUint64Array for 64-bit keys) and its count. */
  keyCounts(): Promise<{ keys: Uint32Array | BigUint64Array; counts: Uint32Array }> {
    return nativeCall(this.n.keyCounts());
  }

  /**
   * @internal Starts an extract (PassageIndex.extract; native/core/postings/passages.h, PassageExtractor):
   * dupi's cut-off and every passage, computed within `memory` bytes (0: no cap) spilling into `tmp`.
   */
  extractStart(sigma: number, minDocs: number, memory: number, tmp: string | undefined, texts: TextSourceArg, blotOptions: BlotOptions) {
    return nativeCall(this.n.extractStart(sigma, minDocs, memory, tmp, texts, blotOptions));
  }

  /**
   * @internal The documents' ids as JSON texts (document d's: json[offsets[d] .. offsets[d + 1])), copied, for
   * the lines that extractNext and queryPassages format natively.
   */
  setDocIds(json: Uint8Array, offsets: Float64Array): void {
    nativeSync(() => this.n.setDocIds(json, offsets));
  }

  /**
   * @internal The next passages of an extract (about maxOccurrences documents and maxTextBytes of text): as
   * arrays, or (lines, after setDocIds) as formatted JSON lines.
   */
  extractNext(cursor: number, maxOccurrences: number, maxTextBytes: number, lines = false) {
    return nativeCall(this.n.extractNext(cursor, maxOccurrences, maxTextBytes, lines));
  }

  /** @internal Ends an extract (or pairs): frees its passages (pairs) and removes its spill files. */
  extractEnd(cursor: number): void {
    this.n.extractEnd(cursor);
  }

  /** @internal Passages shared with query texts (PassageIndex.query). */
  queryPassages(texts: TextInput, source: TextSourceArg, blotOptions: BlotOptions, minPassages: number, maxDocs: number, lines = false) {
    return nativeCall(this.n.queryPassages(texts, source, blotOptions, minPassages, maxDocs, lines));
  }

  /**
   * @internal Starts the pairwise passage summary (PassageIndex.pairs; native/core/postings/passages.h,
   * PassagePairFinder): every pair, computed within `memory` bytes (0: no cap) spilling into `tmp`.
   */
  pairsStart(minPassages: number, maxDocs: number, memory: number, tmp: string | undefined, texts: TextSourceArg, blotOptions: BlotOptions) {
    return nativeCall(this.n.pairsStart(minPassages, maxDocs, memory, tmp, texts, blotOptions));
  }

  /**
   * @internal The next pairs (up to maxPairs): as arrays, or (lines, after setDocIds) as formatted JSON lines,
   * written into `into` when given (as many as surely fit; { bytes }). Ended by extractEnd.
   */
  pairsNext(cursor: number, maxPairs: number, lines = false, into?: Uint8Array) {
    return nativeCall(this.n.pairsNext(cursor, maxPairs, lines, into));
  }

  /** @internal dupi's statistics and extract order over reduced blots (see DupiIndex.extractOrder). */
  dupiOrder(shards: number, sigma: number): Promise<{ order: Uint32Array; posts: number; mean: number; sigma: number }> {
    return nativeCall(this.n.dupiOrder(shards, sigma));
  }

  /**
   * Lines of keys[start..) written into out (dupi's extract lines, formatted on a native thread without
   * allocating): per key (32-bit index) the key in lower-case hex, then for each live document d of its list
   * a space and row d of a table (table[tableOffsets[d] .. tableOffsets[d + 1])), then a newline, as long as
   * lines fit. Returns the next key to write, the bytes written, and (when even that key's line did not fit
   * in the whole of out) the size it needs. keys, table and out must not change until it resolves.
   */
  formatLists(keys: Uint32Array, table: Uint8Array, tableOffsets: Uint32Array, out: Uint8Array, start = 0): Promise<{ next: number; bytes: number; need: number }> {
    expectInt(start, 'start', 0, keys.length);
    return nativeCall(this.n.formatLists(keys, table, tableOffsets, out, start));
  }

  info(): PostingIndexInfo {
    return nativeSync(() => this.n.info());
  }

  close(): void {
    this.n.close();
  }
}

/**
 * @internal How a memory cap (bytes, 0 = none) is shared by an index build: the batch of texts read and blotted at
 * once (16 MiB, or a thirty-second of the cap, at least 1 MiB) and the (key, doc) pairs of the build: the cap
 * minus what the process holds anyway, a quarter of the cap at least. That is Node itself (~50 MiB) and the
 * batches on their way (read ahead, packed, blotted, written to the texts copy): measured on a 1 GB JSONL
 * corpus, ~150 MiB of anonymous memory plus about 12 batches beside the build (peaks of 1,153 MiB with an
 * 864 MiB build and 16 MiB batches; 206 MiB with a 48 MiB build and 4 MiB batches), hence 64 MiB + 20 batches.
 * The whole process then stays under caps from 512 MiB up; below, Node and the pipeline come on top.
 */
/**
 * @internal The default memory cap of an index build over `inputBytes` of input (undefined: unknown, e.g. stdin): twice
 * the input, between 64 MiB and 1 GiB. Small inputs then stay far below an all-in-memory build (measured on the
 * whole SpamAssassin corpus, 32.5 MB in 6,046 files, in bench/RESULTS-postings.md), and large ones are bounded
 * by default.
 */
export function defaultBuildMemory(inputBytes: number | undefined): number {
  if (!inputBytes) return 1 << 30;
  return Math.min(1 << 30, Math.max(64 << 20, 2 * inputBytes));
}

export function memorySplit(memory: number): { batchBytes: number; buildMemory: number } {
  if (!memory) return { batchBytes: 4 << 20, buildMemory: 0 };
  const batchBytes = Math.max(1 << 20, Math.min(16 << 20, Math.floor(memory / 32)));
  return { batchBytes, buildMemory: Math.max(memory - (64 << 20) - 20 * batchBytes, Math.floor(memory / 4)) };
}

/** @internal Writes a small index file through the CLI's output rules (temporary name, sync, rename: never torn). */
export async function writeIndexFile(file: string, data: string | Uint8Array): Promise<void> {
  const out = OutputFile.open(file);
  try {
    await out.write(typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    await out.commit();
  } catch (e) {
    out.abort();
    throw e;
  }
}
