// lib/chunks/ - chunk similarity (mirror of native/core/chunks): chunks.ts (this file: ChunkIndex and its
// stages), chunks-db.ts (the SQLite table and the recovery between its two commits). Imports io/, native/,
// util/ only, no other engine.
//
// Similar documents in a growing archive: chunk similarity (Kasprzak, Brandejs, Brandejsová; docs/similar.md).
//
// similarity(A -> B) = |chunks(A) ∩ chunks(B)| / |chunks(A)| over distinct chunk ids, chunks being the
// overlapping n-word sequences of a document. A ChunkIndex is a folder: the inverted index and the
// per-document table (native/core/chunks, docs/FORMAT.md section 12) and the similarity table in SQLite
// (similar.sqlite: the top K documents of each document, chunks-db.ts). build() makes one from documents;
// update() adds, replaces and deletes documents and gives exactly the table a build of the final documents
// gives; top() and query() read it. Every run commits in one step: a crash leaves the previous state.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError, invalidArgument, nativeCall, nativeSync } from '../util/errors';
import { native, type NativeChunkBuilder, type NativeChunkIndex, type TextInput } from '../native/addon';
import { encodeBatch, abortable, checkSignal, throwIfAborted, BATCH_DOCS, BATCH_BYTES } from '../io/batching';
import { expectInt, expectNumber, expectString, optionsObject, expectU64 } from '../util/validate';
import { killAt } from '../util/test-hooks';
import { acquireLock } from '../io/locks';
import {
  consistentState, removeInterruptedBuild, removeUnreferenced, writeBuildTable, writeUpdateTable, DB_NAME,
} from './chunks-db';

/**
 * A document id: a string, or an integer from -2^63 to 2^64-1: a number when safe, else a bigint (ids read back
 * beyond 2^53 are bigints). Stored as given in the SQLite table; an integer above 2^63-1 (beyond SQLite's
 * integers) as the text of its digits.
 */
export type DocId = string | number | bigint;

export interface ChunkDocument {
  id: DocId;
  /** The text; null deletes the document (update only). */
  text: string | Uint8Array | null;
}

/** Where a document came from, for error messages (the CLI sets it: "file:line"). */
export const SOURCE = Symbol('neardup.chunks.source');
type Located = ChunkDocument & { [SOURCE]?: { file: string; line: number } };

export interface ChunkOptions {
  /** Words per chunk. Default 5. */
  n?: number;
  /**
   * Bits of a chunk id: 64 (default) or 28..32 (the paper's hashed ids: among n distinct chunks about
   * n² / 2^(bits+1) pairs share an id, each counted as a shared chunk; 2^33 at 32 bits).
   */
  bits?: number;
  /** Seed of the chunk hash (fast64). Default 0. */
  seed?: number | bigint;
  /** Word splitting: 'nonword' (default: runs of word characters) or 'whitespace'. */
  split?: 'whitespace' | 'nonword';
  /** Lower-case words. Default true. */
  lowercase?: boolean;
  /** Drop punctuation (matters with split 'whitespace'). Default false. */
  stripPunctuation?: boolean;
  /** A text shorter than n words: one chunk of all of them ('whole', default) or none. */
  short?: 'whole' | 'none';
}

export interface ChunkIndexOptions extends ChunkOptions {
  /** Similar documents kept per document. Default 100. */
  k?: number;
  /** Floor on shared chunks. Default 1. */
  minShared?: number;
  /** Floor on similarity(doc -> other), 0..1. Default 0. */
  minSimilarity?: number;
  /** Ranges of the chunk-id space, each indexed and counted on its own, then merged. Default 1. */
  parts?: number;
}

export interface RunOptions {
  /** Bytes for the posting build and the counting (0: no cap). Default 1 GiB. */
  memory?: number;
  /** Folder for spill files (default: the index folder). */
  tmp?: string;
  signal?: AbortSignal;
  /** After each batch of documents. */
  onProgress?: (p: { documents: number; stage: string }) => void;
}

export interface SimilarEntry {
  id: DocId;
  other: DocId;
  /** id -> other: shared / chunks(id). */
  similarity: number;
  /** other -> id: shared / chunks(other). */
  reverse: number;
  /** Distinct chunk ids both hold. */
  shared: number;
}

export interface UpdateSummary {
  generation: number;
  added: number;
  modified: number;
  deleted: number;
  /** Unchanged documents whose list changed. */
  affected: number;
  /** Of those, recounted through the index. */
  recounted: number;
  /** Segments or record files were rewritten. */
  compacted: boolean;
}

export const DEFAULT_MEMORY = 1 << 30;

function checkChunkIndexOptions(o: ChunkIndexOptions): void {
  if (o.n !== undefined) expectInt(o.n, 'n', 1, 4096);
  if (o.bits !== undefined && !(Number.isInteger(o.bits) && ((o.bits >= 28 && o.bits <= 32) || o.bits === 64)))
    throw invalidArgument(typeof o.bits === 'number' ? RangeError : TypeError, `bits must be from 28 to 32, or 64, got ${String(o.bits)}`);
  if (o.seed !== undefined) expectU64(o.seed, 'seed', true);
  if (o.split !== undefined && o.split !== 'whitespace' && o.split !== 'nonword')
    throw invalidArgument(TypeError, `split must be 'whitespace' or 'nonword', got ${String(o.split)}`);
  for (const b of ['lowercase', 'stripPunctuation'] as const)
    if (o[b] !== undefined && typeof o[b] !== 'boolean') throw invalidArgument(TypeError, `Expected ${b} to be a boolean`);
  if (o.short !== undefined && o.short !== 'whole' && o.short !== 'none')
    throw invalidArgument(TypeError, `short must be 'whole' or 'none', got ${String(o.short)}`);
  if (o.k !== undefined) expectInt(o.k, 'k', 1, 100000);
  if (o.minShared !== undefined) expectInt(o.minShared, 'minShared', 1, 0xffffffff);
  if (o.minSimilarity !== undefined) expectNumber(o.minSimilarity, 'minSimilarity', 0, 1);
  if (o.parts !== undefined) expectInt(o.parts, 'parts', 1, 4096);
}

function checkRunOptions(o: RunOptions): { memory: number; tmp?: string; signal?: AbortSignal } {
  if (o.memory !== undefined) expectInt(o.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
  if (o.tmp !== undefined) expectString(o.tmp, 'tmp');
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw invalidArgument(TypeError, 'Expected onProgress to be a function');
  return { memory: o.memory ?? DEFAULT_MEMORY, tmp: o.tmp, signal: checkSignal(o.signal) };
}

const MIN_ID = -(1n << 63n), MAX_ID = (1n << 64n) - 1n;

/**
 * The JSON text of an id: what the index stores and compares (strings, safe integer numbers and bigints from
 * -2^63 to 2^64-1; an integer's digits, the same for a number and a bigint of one value).
 */
export function idText(id: unknown): string | undefined {
  if (typeof id === 'string') return JSON.stringify(id);
  if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id === 0 ? 0 : id);
  if (typeof id === 'bigint' && id >= MIN_ID && id <= MAX_ID) return String(id);
  return undefined;
}

/** An id's JSON text read back: a string, or an integer (a number when safe, else a bigint). */
export function idFromText(text: string): DocId {
  if (text.charCodeAt(0) === 0x22) return JSON.parse(text) as string;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

function where(d: Located, index: number): string {
  const s = d[SOURCE];
  return s ? `${s.file}:${s.line}` : `document ${index}`;
}

interface Batch {
  ids: string[];
  docs: Located[];
  packed: TextInput;
  deleted: Uint8Array;
}

/** Documents in batches: ids as JSON text, texts packed, deletions flagged. */
async function* batches(source: Iterable<ChunkDocument> | AsyncIterable<ChunkDocument>, allowNull: boolean,
                        signal: AbortSignal | undefined): AsyncGenerator<Batch> {
  if (source === null || typeof source !== 'object' ||
      (typeof (source as AsyncIterable<ChunkDocument>)[Symbol.asyncIterator] !== 'function' &&
       typeof (source as Iterable<ChunkDocument>)[Symbol.iterator] !== 'function'))
    throw invalidArgument(TypeError, 'Expected documents to be an (async) iterable of { id, text }');
  let docs: Located[] = [];
  let bytes = 0;
  let index = 0;
  const flush = async (): Promise<Batch> => {
    const texts = docs.map((d) => d.text);
    const enc = await encodeBatch(texts, signal);
    const deleted = enc.valid ? Uint8Array.from(enc.valid, (v) => 1 - v) : new Uint8Array(docs.length);
    const b: Batch = { ids: docs.map((d) => idText(d.id)!), docs, packed: enc.packed, deleted };
    docs = [];
    bytes = 0;
    return b;
  };
  for await (const d of abortable(source, signal)) {
    const i = index++;
    if (d === null || typeof d !== 'object') throw invalidArgument(TypeError, `Expected document ${i} to be { id, text }`);
    const loc = d as Located;
    if (idText(d.id) === undefined) {
      const msg = `${where(loc, i)}: the id must be a string or an integer from -2^63 to 2^64-1 (a safe integer or a bigint), ` +
        `got ${typeof d.id === 'bigint' ? `${d.id}n` : JSON.stringify(d.id) ?? typeof d.id}`;
      if (loc[SOURCE]) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', msg, loc[SOURCE]);
      throw invalidArgument(TypeError, msg);
    }
    if (!(typeof d.text === 'string' || d.text instanceof Uint8Array || (allowNull && d.text === null))) {
      const msg = `${where(loc, i)}: the text must be a string${allowNull ? ', null (to delete)' : ''} or a Uint8Array`;
      if (loc[SOURCE]) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', msg, loc[SOURCE]);
      throw invalidArgument(TypeError, msg);
    }
    docs.push(loc);
    bytes += d.text === null ? 0 : d.text.length;
    if (docs.length >= BATCH_DOCS || bytes >= BATCH_BYTES) yield await flush();
  }
  throwIfAborted(signal);
  if (docs.length) yield await flush();
}

function badDocument(r: { bad: number; code: string; message: string }, b: Batch): NeardupError {
  const d = b.docs[r.bad];
  const s = d[SOURCE];
  return new NeardupError(r.code === 'ERR_NEARDUP_INVALID_INPUT' ? 'ERR_NEARDUP_INVALID_INPUT' : 'ERR_NEARDUP_INTERNAL',
    `${s ? `${s.file}:${s.line}` : `document id ${b.ids[r.bad]}`}: ${r.message}`, s ?? {});
}

/**
 * The first step of a full run: checks, the lock, a builder fed with the documents; then `finish` with the
 * builder (the lock is held until it returns).
 */
async function chunkDocuments(dir: string, documents: Iterable<ChunkDocument> | AsyncIterable<ChunkDocument>,
                              options: ChunkIndexOptions & RunOptions,
                              finish: (b: NativeChunkBuilder, o: ChunkIndexOptions & RunOptions) => Promise<void>): Promise<void> {
  expectString(dir, 'dir');
  const o = optionsObject(options);
  checkChunkIndexOptions(o);
  const run = checkRunOptions(o);
  checkBuildFolder(dir, true);  // before the lock file is made in a folder that is not ours
  const created = !fs.existsSync(dir);
  fs.mkdirSync(dir, { recursive: true });
  const release = acquireLock(dir);
  let marked = false, done = false;
  try {
    // Checked under the lock: a build that waited for another one must not write over its index.
    if (fs.existsSync(path.join(dir, 'MANIFEST')))
      throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${dir}' already holds a chunk index: update it, or remove it first`, { file: dir });
    checkBuildFolder(dir);
    // Only an interrupted build of ours (its marker) is cleared: files of the user's are never removed.
    if (fs.existsSync(path.join(dir, BUILD_MARKER))) removeInterruptedBuild(dir);
    fs.writeFileSync(path.join(dir, BUILD_MARKER), 'a neardup similar build is (or was, if interrupted) under way in this folder\n');
    marked = true;
    const params = {
      n: o.n, bits: o.bits, seed: o.seed, split: o.split, lowercase: o.lowercase, stripPunctuation: o.stripPunctuation,
      short: o.short, k: o.k, minShared: o.minShared, minSimilarity: o.minSimilarity, parts: o.parts,
    };
    const builder = nativeSync(() => native.createChunkBuilder(dir, params, run.memory, run.tmp));
    await withClose(builder, async (b) => {
      let count = 0;
      for await (const batch of batches(documents, false, run.signal)) {
        const r = await nativeCall(b.add(batch.ids, batch.packed));
        if (r) throw badDocument(r, batch);
        count += batch.ids.length;
        o.onProgress?.({ documents: count, stage: 'chunks' });
      }
      throwIfAborted(run.signal);
      await finish(b, o);
    });
    done = true;
  } finally {
    // A build that fails (a bad or too large document, an error, Ctrl-C) takes back what it wrote before its
    // commit: its files, and the folder when it made it (a kill leaves the marker for the next build to clear).
    if (!done && marked && !fs.existsSync(path.join(dir, 'MANIFEST'))) {
      try {
        removeInterruptedBuild(dir);
        fs.rmSync(path.join(dir, BUILD_MARKER), { force: true });
      } catch { /* the next build clears it (the marker) */ }
    }
    const remove = !done && marked && created;
    // (a competing build is refused while the lock is held; one that probed at the same instant and waited
    // finds the folder gone or not empty, an error, never a mixed index)
    if (remove) fs.rmSync(path.join(dir, 'LOCK'), { force: true });
    release();
    if (remove) {
      try {
        fs.rmdirSync(dir);  // only when empty: nothing but ours was in it
      } catch { /* left for the next build */ }
    }
  }
}

/** The marker of a build in progress (removed at its commit): a folder holding it is ours to clear. */
const BUILD_MARKER = 'BUILDING';

/**
 * A build goes into a new or empty folder, or one an interrupted build of ours left (BUILDING): a folder with
 * anything else (the user's files, an index of an older release's interrupted build) is refused before
 * anything is written, so that no file of the user's is ever removed or replaced.
 */
function checkBuildFolder(dir: string, beforeLock = false): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `'${dir}' is not a folder`, { file: dir });
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read the folder '${dir}': ${(e as Error).message}`, { file: dir, cause: e });
  }
  if (names.includes('MANIFEST')) {
    if (beforeLock) return;  // an index: refused under its lock (a writer holding it is named first)
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${dir}' already holds a chunk index: update it, or remove it first`, { file: dir });
  }
  if (names.includes(BUILD_MARKER)) return;
  const other = names.filter((n) => n !== 'LOCK');
  if (other.length > 0) {
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${dir}' is not empty and holds no similar index (${other.length} ` +
      `entr${other.length === 1 ? 'y' : 'ies'}, e.g. '${other[0]}'): a build needs a new or empty folder; nothing was changed`, { file: dir });
  }
}

/** The end of a full run: the SQLite table of the pending generation, then its manifest. */
async function commitFullRun(dir: string, pending: NativeChunkIndex, o: RunOptions): Promise<void> {
  try {
    await writeBuildTable(dir, pending, (done) => o.onProgress?.({ documents: done, stage: 'table' }));
    killAt('build-committed-table');
    nativeSync(() => native.chunkIndexCommit(dir));
    killAt('build-committed');
    fs.rmSync(path.join(dir, BUILD_MARKER), { force: true });
    removeUnreferenced(dir, pending.files());
  } finally {
    pending.close();
  }
}

/** The native object of a run that may be interrupted: closed when the run ends. */
async function withClose<T extends { close(): void }, R>(x: T, f: (x: T) => Promise<R>): Promise<R> {
  try {
    return await f(x);
  } finally {
    x.close();
  }
}

export class ChunkIndex {
  private closed = false;

  private constructor(readonly dir: string, private ix: NativeChunkIndex) {}

  /**
   * Builds an index of `documents` in `dir` (created when missing; it must not hold an index: see update()).
   * Ids must be distinct. Resolves to the open index.
   */
  static async build(dir: string, documents: Iterable<ChunkDocument> | AsyncIterable<ChunkDocument>,
                     options: ChunkIndexOptions & RunOptions = {}): Promise<ChunkIndex> {
    await chunkDocuments(dir, documents, options, async (b, o) => {
      o.onProgress?.({ documents: 0, stage: 'index' });
      await commitFullRun(dir, await nativeCall(b.finish()), o);
    });
    return ChunkIndex.open(dir);
  }

  /**
   * Opens an index for reading (top, query) and updates. Every file is checked by default (docs/FORMAT.md section 14:
   * manifests and the directory now, each record and posting key block the first time it is read); verify: check
   * every checksum now (reads it all).
   */
  static async open(dir: string, options: { verify?: boolean } = {}): Promise<ChunkIndex> {
    expectString(dir, 'dir');
    const o = optionsObject(options);
    if (o.verify !== undefined && typeof o.verify !== 'boolean') throw invalidArgument(TypeError, 'Expected verify to be a boolean');
    // A writer may replace files between our reading MANIFEST and opening them: read again then.
    for (let attempt = 0; ; attempt++) {
      const c = consistentState(dir, false);
      try {
        return new ChunkIndex(dir, await nativeCall(native.openChunkIndex(dir, c.which, o.verify === true)));
      } catch (e) {
        if (attempt >= 3 || (e as NeardupError).code !== 'ERR_NEARDUP_IO' || consistentState(dir, false).generation === c.generation) throw e;
      }
    }
  }

  private live(): NativeChunkIndex {
    if (this.closed) throw new NeardupError('ERR_NEARDUP_CLOSED', 'the chunk index is closed');
    return this.ix;
  }

  /** Documents in the index. */
  get size(): number { return this.live().info().documents; }
  /** The generation: 1 after build, one more per update. */
  get generation(): number { return this.live().info().generation; }
  /** What the index was built with. */
  get options(): Required<Omit<ChunkIndexOptions, 'seed'>> & { seed: bigint } { return this.live().info().params as never; }
  /** Counts of the index files (segments, tombstones, record files, postings). */
  info(): ReturnType<NativeChunkIndex['info']> { return this.live().info(); }

  /**
   * Adds, replaces and deletes documents: a new id adds, a known id replaces, a null text deletes (the last
   * change of an id in one call wins). One generation, committed at once. compact: rewrite the index files
   * now (otherwise done when segments or dead records pile up).
   */
  async update(changes: Iterable<ChunkDocument> | AsyncIterable<ChunkDocument>,
               options: RunOptions & { compact?: boolean } = {}): Promise<UpdateSummary> {
    const o = optionsObject(options);
    const run = checkRunOptions(o);
    if (o.compact !== undefined && typeof o.compact !== 'boolean') throw invalidArgument(TypeError, 'Expected compact to be a boolean');
    this.live();
    const release = acquireLock(this.dir);
    const step = stepTimer();
    try {
      const c = consistentState(this.dir, true);
      if (c.generation !== this.ix.info().generation || c.which !== 'MANIFEST' || this.ix.info().generation !== c.generation) {
        const fresh = await nativeCall(native.openChunkIndex(this.dir, 'MANIFEST', false));
        this.ix.close();
        this.ix = fresh;
      }
      removeUnreferenced(this.dir, this.ix.files());
      step('js: index opened');
      const updater = nativeSync(() => native.createChunkUpdater(this.ix, run.memory, run.tmp));
      const r = await withClose(updater, async (u) => {
        let count = 0;
        for await (const batch of batches(changes, true, run.signal)) {
          const bad = await nativeCall(u.add(batch.ids, batch.packed, batch.deleted));
          if (bad) throw badDocument(bad, batch);
          count += batch.ids.length;
          o.onProgress?.({ documents: count, stage: 'chunks' });
        }
        throwIfAborted(run.signal);
        step('js: changes read');
        o.onProgress?.({ documents: count, stage: 'similarity' });
        return nativeCall(u.prepare(o.compact === true));
      });
      const summary: UpdateSummary = {
        generation: r.pending ? r.pending.info().generation : this.ix.info().generation,
        added: r.added, modified: r.modified, deleted: r.deleted, affected: r.affected, recounted: r.recounted,
        compacted: r.compacted,
      };
      if (!r.pending) return summary;
      const pending = r.pending;
      try {
        killAt('update-prepared');
        o.onProgress?.({ documents: r.upserted.length + r.rowDoc.length, stage: 'table' });
        step('js: similarity (native)');
        await writeUpdateTable(this.dir, pending, r, () => killAt('update-in-table'), step);
        step(`js: table (${r.rowDoc.length} row changes)`);
        killAt('update-committed-table');
        nativeSync(() => native.chunkIndexCommit(this.dir));
        killAt('update-committed');
      } catch (e) {
        pending.close();
        throw e;
      }
      this.ix.close();
      this.ix = pending;
      removeUnreferenced(this.dir, pending.files());
      step('js: committed');
      return summary;
    } finally {
      release();
    }
  }

  /** The similar documents of one document (by descending similarity), from the index. */
  async top(id: DocId): Promise<SimilarEntry[]> {
    const t = idText(id);
    if (t === undefined) throw invalidArgument(TypeError, 'Expected id to be a string, a safe integer or a bigint from -2^63 to 2^64-1');
    const ix = this.live();
    const n = ix.find([t])[0];
    if (n === 0xffffffff) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `no document with the id ${t}`);
    const [entries] = await this.topOf(Uint32Array.of(n));
    return entries;
  }

  /**
   * Internal ids of documents by their ids (as strings of JSON text), 0xffffffff where unknown; every live
   * one in index order when `ids` is undefined. @internal (the CLI)
   */
  internalIds(ids?: string[]): Uint32Array {
    const ix = this.live();
    return ids === undefined ? ix.liveIds() : ix.find(ids);
  }

  /** Top lists of internal ids. @internal */
  async topOf(ns: Uint32Array): Promise<SimilarEntry[][]> {
    const ix = this.live();
    const t = await nativeCall(ix.top(ns));
    const others = t.other;
    const me = ix.docs(ns);
    const them = ix.docs(others);
    const ids = parseIds(me.ids, me.idOffsets);
    const oids = parseIds(them.ids, them.idOffsets);
    const out: SimilarEntry[][] = [];
    for (let i = 0; i < ns.length; i++) {
      const list: SimilarEntry[] = [];
      for (let r = t.offsets[i]; r < t.offsets[i + 1]; r++) {
        const s = t.shared[r];
        list.push({ id: ids[i], other: oids[r], similarity: s / me.chunks[i], reverse: s / them.chunks[r], shared: s });
      }
      out.push(list);
    }
    return out;
  }

  /** JSONL lines of the top lists of internal ids (ids spliced in as JSON text, nothing parsed). @internal */
  async topLines(ns: Uint32Array): Promise<string> {
    const ix = this.live();
    const t = await nativeCall(ix.top(ns));
    const me = ix.docs(ns);
    const them = ix.docs(t.other);
    let out = '';
    for (let i = 0; i < ns.length; i++) {
      const id = me.ids.toString('utf8', me.idOffsets[i], me.idOffsets[i + 1]);
      for (let r = t.offsets[i]; r < t.offsets[i + 1]; r++) {
        const s = t.shared[r];
        out += `{"id":${id},"other":${them.ids.toString('utf8', them.idOffsets[r], them.idOffsets[r + 1])},` +
          `"similarity":${s / me.chunks[i]},"reverse":${s / them.chunks[r]},"shared":${s}}\n`;
      }
    }
    return out;
  }

  /**
   * The similar documents of new texts, as if each were added (it is not): per text, entries with `id`
   * undefined unless ids are given.
   */
  async query(texts: ReadonlyArray<string | Uint8Array>, ids?: ReadonlyArray<DocId>): Promise<SimilarEntry[][]> {
    if (!Array.isArray(texts)) throw invalidArgument(TypeError, 'Expected texts to be an array of strings or Uint8Arrays');
    texts.forEach((t, i) => {
      if (typeof t !== 'string' && !(t instanceof Uint8Array)) throw invalidArgument(TypeError, `Expected texts[${i}] to be a string or a Uint8Array`);
    });
    if (ids !== undefined && (!Array.isArray(ids) || ids.length !== texts.length))
      throw invalidArgument(TypeError, 'Expected ids to be an array as long as texts');
    const ix = this.live();
    const q = await nativeCall(ix.query(texts as string[]));
    const them = ix.docs(q.other);
    const oids = parseIds(them.ids, them.idOffsets);
    const out: SimilarEntry[][] = [];
    for (let i = 0; i < texts.length; i++) {
      const list: SimilarEntry[] = [];
      for (let r = q.offsets[i]; r < q.offsets[i + 1]; r++) {
        const s = q.shared[r];
        list.push({ id: ids?.[i] as DocId, other: oids[r], similarity: s / q.chunks[i], reverse: s / them.chunks[r], shared: s });
      }
      out.push(list);
    }
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ix.close();
  }
}

function parseIds(heap: Buffer, offsets: Uint32Array): DocId[] {
  const out: DocId[] = new Array(offsets.length - 1);
  for (let i = 0; i + 1 < offsets.length; i++) out[i] = idFromText(heap.toString('utf8', offsets[i], offsets[i + 1]));
  return out;
}

/**
 * NEARDUP_CHUNKS_TIMING=1 (bench/): the steps of a run on the JavaScript side (reading, the SQLite table),
 * printed on stderr in the format the native steps use.
 */
function stepTimer(): (what: string) => void {
  if (!process.env.NEARDUP_CHUNKS_TIMING) return () => undefined;
  let wall = process.hrtime.bigint();
  let cpu = process.cpuUsage();
  return (what) => {
    const c = process.cpuUsage(cpu);
    const w = Number(process.hrtime.bigint() - wall) / 1e9;
    process.stderr.write(`chunks: ${what.padEnd(28)} ${w.toFixed(2).padStart(8)} s wall ${((c.user + c.system) / 1e6).toFixed(2).padStart(8)} s cpu\n`);
    wall = process.hrtime.bigint();
    cpu = process.cpuUsage();
  };
}


// ------------------------------------------------------------------------------------------------- stages

/**
 * The paper's distribution of a full run, in steps that can run in separate processes or machines sharing
 * the index folder: prepare (chunk the documents: the per-document table), then part(i) for every i < parts
 * (index and count range i of the chunk-id space into a pairs file), then finish (sum the pairs files, top
 * lists, the SQLite table, commit). The result equals ChunkIndex.build with the same options.
 */
export const stages = {
  async prepare(dir: string, documents: Iterable<ChunkDocument> | AsyncIterable<ChunkDocument>,
                options: ChunkIndexOptions & RunOptions = {}): Promise<void> {
    await chunkDocuments(dir, documents, options, (b) => nativeCall(b.finishDocs()));
  },

  /**
   * Indexes and counts part `part` of a prepared build; the pairs file goes to `out` (default: in dir).
   * parts: the number of parts expected (refused when the build was prepared with another).
   */
  async part(dir: string, part: number, options: RunOptions & { out?: string; parts?: number } = {}): Promise<string> {
    expectString(dir, 'dir');
    expectInt(part, 'part', 0, 4095);
    const o = optionsObject(options);
    const run = checkRunOptions(o);
    if (o.out !== undefined) expectString(o.out, 'out');
    if (o.parts !== undefined) expectInt(o.parts, 'parts', part + 1, 4096);
    const probe = nativeSync(() => native.chunkIndexProbe(dir));
    if (!probe.stage) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${dir}' holds no prepared build (STAGE)`, { file: dir });
    const out = o.out ?? path.join(dir, `pairs-${part}.ckp`);
    await nativeCall(native.chunkStagePart(dir, part, o.parts, out, run.memory, run.tmp));
    return out;
  },

  /** Sums the parts' pairs files into the top lists and the SQLite table, and commits the index. */
  async finish(dir: string, pairsFiles: string[], options: RunOptions = {}): Promise<ChunkIndex> {
    expectString(dir, 'dir');
    if (!Array.isArray(pairsFiles)) throw invalidArgument(TypeError, 'Expected pairsFiles to be an array of paths');
    pairsFiles.forEach((f, i) => expectString(f, `pairsFiles[${i}]`));
    const run = checkRunOptions(optionsObject(options));
    const release = acquireLock(dir);
    try {
      await commitFullRun(dir, await nativeCall(native.chunkStageFinish(dir, pairsFiles, run.memory, run.tmp)), options);
    } finally {
      release();
    }
    return ChunkIndex.open(dir);
  },
};

/** Chunk ids of texts (sorted, distinct per text): text i's are chunks[offsets[i] .. offsets[i + 1]). */
export function chunkIds(texts: TextInput, options: ChunkOptions = {}): Promise<{ chunks: BigUint64Array; offsets: Uint32Array }> {
  const o = optionsObject(options);
  checkChunkIndexOptions(o);
  return nativeCall(native.chunkTexts(texts, o));
}

export { DB_NAME };
