// Shared passages for new users: a folder holding a PostingIndex of blots (neardup profile) plus the indexed
// documents' texts, so results can name each document's matching bytes (docs/FORMAT.md section 11,
// docs/passages.md). Passages (consecutive shared windows merged) are found natively
// (native/core/postings/passages.h).
//
//   DIR/passages.json   {"version":2,"seqLen":10,"hash":"ordered","bits":64,"batches":[{"texts","docs","first","count","docsCrc"}],"crc"}
//                       (no "bits": 32-bit blots, as every index written before 64-bit ones)
//   DIR/texts-K.bin     the UTF-8 texts of batch K (one index run) back to back
//   DIR/docs-K.jsonl    one line per document of batch K: {"n": internal id, "id": the user's id, "offset", "length", "crc"}
// Checks (docs/FORMAT.md section 14): passages.json's crc when it is read, a document list's docsCrc when it is
// read, a text's crc the first time it is read (version 1 files and batches written before them carry none).
//   DIR/postings/       the PostingIndex (key = blot, 64-bit or 32-bit as "bits" says, doc = internal id)
//   DIR/LOCK            the writer lock (lib/io/index-commit.ts)
// A run writes its batch files, then the new passages.json as passages.json.next, then commits the postings with
// a record of it in the manifest (the one commit point), then renames passages.json.next (lib/io/index-commit.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NeardupError, invalidArgument } from '../util/errors';
import { expectArray, expectInt, expectNumber, expectPath, optionsObject } from '../util/validate';
import { OutputFile } from '../io/files';
import { PostingIndex, memorySplit, writeIndexFile, type BlotOptions, type WindowHash } from './postings';
import { native } from '../native/addon';
import { checkJsonCrc, crc32c, jsonWithCrc } from '../io/json-crc';
import { rawMember } from '../io/jsonl';
import { IndexRun, lockIndex, parseRecord, readCommitted } from '../io/index-commit';

const META = 'passages.json';
const BATCH_FILE = /^(texts-\d+\.bin|docs-\d+\.jsonl)$/;

export interface PassageIndexOptions {
  /** Words per window. Default 10. */
  seqLen?: number;
  /** Window hash. Default 'ordered'. */
  hash?: WindowHash;
  /**
   * Bits of a blot (fixed when the index is created): 64 (default: among n distinct windows about n² / 2^65
   * pairs share a blot, none in practice) or 32 (the seed tool's width, a smaller index: about n² / 2^33 pairs
   * of different windows share a blot and are taken as equal, ~470 on 2 M distinct windows, ~2.6 M per GB of
   * text). An index without the field in passages.json has 32-bit blots.
   */
  bits?: 32 | 64;
}

interface Meta {
  version: 1 | 2;
  seqLen: number;
  hash: WindowHash;
  /** 64, or absent: 32-bit blots. */
  bits?: 64;
  /** docsCrc: CRC-32C of the docs file (whose lines then carry each text's crc); absent in batches written before. */
  batches: Array<{ texts: string; docs: string; first: number; count: number; docsCrc?: number }>;
}

/** @internal The batch a sharded finish (addParts) adds: as passages.json lists it. */
export type PartsBatch = { texts: string; docs: string; first: number; count: number; docsCrc: number };

/** passages.json, version 2: the JSON of the meta, its CRC-32C (of that JSON text without the crc) as a last field. */
function metaText(meta: Meta): string {
  return jsonWithCrc({ ...meta, version: 2 });
}

function readMeta(metaFile: string, bytes?: Buffer): Meta {
  let meta: Meta & { crc?: number };
  let text: string;
  try {
    text = (bytes ?? fs.readFileSync(metaFile)).toString('utf8');
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${metaFile}': ${(e as Error).message}`, { file: metaFile, cause: e });
  }
  try {
    meta = JSON.parse(text) as Meta & { crc?: number };
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `cannot read '${metaFile}': ${(e as Error).message}`, { file: metaFile, cause: e });
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${metaFile}' is not a passage index's meta file`, { file: metaFile });
  if (meta.version !== 1 && meta.version !== 2) throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `'${metaFile}': version ${meta.version} is not supported`, { file: metaFile });
  if (meta.version === 2) checkJsonCrc(meta as unknown as Record<string, unknown>, metaFile, true);
  if (!Number.isInteger(meta.seqLen) || meta.seqLen < 1 || (meta.hash !== 'ordered' && meta.hash !== 'xor') || !Array.isArray(meta.batches) ||
      (meta.bits !== undefined && meta.bits !== 64))
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${metaFile}': bad window, hash, bits or batch list`, { file: metaFile });
  return meta;
}

/** Checks an id the document lists can hold: one JSON.stringify gives back (strings, finite numbers, booleans, null, plain data), or a bigint (an integer beyond 2^53, kept as its digits). */
function checkId(id: unknown, what: string): void {
  if (typeof id === 'bigint') return;
  let j: string | undefined;
  try {
    j = JSON.stringify(id);
  } catch (e) {
    throw invalidArgument(TypeError, `Expected ${what} to be a JSON value: ${(e as Error).message}`);
  }
  if (j === undefined || (typeof id === 'number' && !Number.isFinite(id)))
    throw invalidArgument(TypeError, `Expected ${what} to be a JSON value (a string, a finite number, a boolean, null, an array or an object), got ${typeof id === 'number' ? String(id) : typeof id}`);
}

/** An id's JSON text in the document list: a bigint as its digits (exact beyond 2^53), anything else as JSON.stringify writes it. */
export function idJsonText(id: unknown): string {
  return typeof id === 'bigint' ? id.toString() : JSON.stringify(id);
}

/** A document-list line, as JSON.stringify({n, id, offset, length, crc}) writes it; idText: the id's JSON text. */
function docLine(n: number, idText: string, offset: number, length: number, crc: number): string {
  return `{"n":${n},"id":${idText},"offset":${offset},"length":${length},"crc":${crc}}`;
}

/** The id of a parsed document-list line as JSON text: an integer beyond 2^53 as its digits on the line. */
function lineIdText(line: string, id: unknown): string {
  if (typeof id === 'number' && !Number.isSafeInteger(id) && Number.isInteger(id)) {
    const raw = rawMember(line, 'id');
    if (raw !== undefined && /^-?\d+$/.test(raw)) return raw;
  }
  return JSON.stringify(id);
}

export interface ExtractOptions {
  /** dupi's cut-off: windows held by at least max(minDocs, round(mean + sigma * sd)) documents. Default 2. */
  sigma?: number;
  /** Default 2. */
  minDocs?: number;
  /** The first `limit` passages only. */
  limit?: number;
  /** Bytes of records the native extract holds before it spills sorted runs into `tmp` (0, the default: no cap). */
  memory?: number;
  /** Where the spill folder goes (default the system's temporary folder). */
  tmp?: string;
}

export interface PairsOptions {
  /** Pairs sharing at least this many passages. Default 1. */
  minShared?: number;
  /** Windows held by more documents neither pair documents nor join passages. Default 1000. */
  maxDocs?: number;
  /** Bytes of tables and records the native pairs hold before they spill into `tmp` (0, the default: no cap). */
  memory?: number;
  /** Where the spill folder goes (default the system's temporary folder). */
  tmp?: string;
}

export interface PassageDoc {
  /** The document's id (the --id-field value, or its input position "file:line"). */
  id: unknown;
  /** Byte range of the passage in the document's UTF-8 text, and that text. */
  begin: number;
  end: number;
  text: string;
}

export interface Passage {
  /** Blot of the passage's first window: 16 hex digits (64-bit blots), 8 in an index of 32-bit blots. */
  blot: string;
  /** Documents holding the passage. */
  count: number;
  /** Consecutive windows merged into the passage. */
  windows: number;
  docs: PassageDoc[];
}

export interface PairSummary {
  a: unknown;
  b: unknown;
  /** Passages (maximal runs of consecutive shared windows) the two documents share. */
  passages: number;
  /** Windows inside those passages. */
  windows: number;
  /** Fraction of each document's bytes inside the passages. */
  coverA: number;
  coverB: number;
}

export interface QueryPassage {
  windows: number;
  /** Byte ranges of the passage in the query document and in the indexed one. */
  query: [number, number];
  doc: [number, number];
  /** The passage's text in the indexed document. */
  text: string;
}

export interface QueryMatch {
  id: unknown;
  /** Passages shared with the query document. */
  passages: number;
  /** Query windows inside them. */
  windows: number;
  spans: QueryPassage[];
}

/** The documents' ids (as JSON texts: document n's is idJson[idOffsets[n] .. idOffsets[n + 1])) and where their texts are. */
interface DocTable {
  id(n: number): unknown;
  ids: { json: Uint8Array; offsets: Float64Array };
  texts: { files: string[]; file: Uint32Array; offset: Float64Array; length: Uint32Array; crc: Uint32Array; check: Uint8Array };
}

/** Passages' documents (occurrences) and text bytes read from the native extract at a time. */
const EXTRACT_CHUNK = 16384;
const EXTRACT_CHUNK_BYTES = 8 << 20;
/** Pairs read from the native pairs at a time (~100 bytes a formatted line). */
const PAIRS_CHUNK = 32768;

/**
 * @internal The native share of a whole-process memory cap for extract and pairs (bytes, 0 = none): the cap minus what
 * the process holds anyway (Node itself, ~64 MiB; the document table and the native copy of its ids, ~120
 * bytes a document; chunks of output on their way), a quarter of the cap at least.
 */
export function extractMemory(memory: number, docs: number): number {
  if (!memory) return 0;
  return Math.max(Math.floor(memory / 4), memory - (64 << 20) - 120 * docs - 4 * EXTRACT_CHUNK_BYTES);
}

/** The non-empty lines of a (large) file, read 1 MiB at a time. */
function* readLines(file: string, onBytes?: (bytes: Buffer) => void): Generator<string> {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let rest: Buffer = Buffer.alloc(0);
    for (let r; (r = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) {
      onBytes?.(buf.subarray(0, r));
      const data = rest.length ? Buffer.concat([rest, buf.subarray(0, r)]) : buf.subarray(0, r);
      let at = 0;
      for (let nl; (nl = data.indexOf(0x0a, at)) >= 0; at = nl + 1) if (nl > at) yield data.toString('utf8', at, nl);
      rest = Buffer.from(data.subarray(at));
    }
    if (rest.length) yield rest.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The committed state of DIR: the postings and the meta their manifest's commit record names (passages.json, or
 * passages.json.next after a run that died between its commit and that file's rename; indexes written before
 * commit records: passages.json). A writer (holding the lock) also finishes such a rename and removes the batch
 * files the meta does not name (left by a run that died before its commit).
 */
async function loadState(dir: string, writer: boolean): Promise<{ meta: Meta; ix: PostingIndex }> {
  const metaFile = path.join(dir, META);
  const ix = await PostingIndex.open(path.join(dir, 'postings'));
  try {
    const record = parseRecord(ix.commitData(), path.join(dir, 'postings', 'MANIFEST'), META);
    const meta = readMeta(metaFile, record ? readCommitted(dir, META, record, writer) : undefined);
    let n = 0;
    for (const b of meta.batches) {
      if (b.first !== n) throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${metaFile}': batch ${b.docs} starts at document ${b.first}, expected ${n}`, { file: metaFile });
      n += b.count;
    }
    const bits = meta.bits ?? 32;
    if (ix.keyBits !== bits)
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${dir}': passages.json says ${bits}-bit blots, the postings have ${ix.keyBits}-bit keys`, { file: metaFile });
    const held = ix.info().nextId;
    if (held !== n) throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${dir}': the postings hold ${held} documents, the document lists ${n}`, { file: dir });
    if (writer) {
      const named = new Set(meta.batches.flatMap((b) => [b.texts, b.docs]));
      for (const f of fs.readdirSync(dir)) if (BATCH_FILE.test(f) && !named.has(f)) fs.rmSync(path.join(dir, f), { force: true });
    }
    return { meta, ix };
  } catch (e) {
    ix.close();
    throw e;
  }
}

export class PassageIndex {
  private table?: DocTable;
  private fds = new Map<number, number>();
  /** Releases the writer lock: set while this object holds it (opened with create, or during a write). */
  private release?: () => void;

  private constructor(readonly dir: string, private meta: Meta, private ix: PostingIndex) {}

  get blotOptions(): BlotOptions {
    return { profile: 'neardup', hash: this.meta.hash, seqLen: this.meta.seqLen, bits: this.bits };
  }

  /** Bits of the index's blots (32 for an index written before 64-bit blots). */
  get bits(): 32 | 64 {
    return this.meta.bits ?? 32;
  }

  /**
   * Opens DIR, or creates it with options when it holds no index. With create, the object is DIR's writer: it
   * holds DIR's writer lock until close() (a second writer is refused, ERR_NEARDUP_IO); without, it is a reader
   * and its writes (addRun, addParts, merge) take the lock for their duration.
   */
  static async open(dir: string, options: PassageIndexOptions = {}, create = false): Promise<PassageIndex> {
    expectPath(dir, 'dir');
    optionsObject(options);
    if (typeof create !== 'boolean') throw invalidArgument(TypeError, `Expected create to be a boolean, got ${typeof create}`);
    if (options.bits !== undefined && options.bits !== 32 && options.bits !== 64)
      throw invalidArgument(typeof options.bits === 'number' ? RangeError : TypeError, `bits must be 32 or 64, got ${String(options.bits)}`);
    const metaFile = path.join(dir, META);
    let release: (() => void) | undefined;
    try {
      if (create) {
        try {
          fs.mkdirSync(dir, { recursive: true });
        } catch (e) {
          throw new NeardupError('ERR_NEARDUP_IO', `cannot create '${dir}': ${(e as Error).message}`, { file: dir, cause: e });
        }
        release = lockIndex(dir, path.join(dir, 'postings'), 'passages index');
      }
      if (!fs.existsSync(metaFile)) {
        if (!create) throw new NeardupError('ERR_NEARDUP_IO', `'${dir}' holds no passage index (no passages.json)`, { file: metaFile });
        const bits = options.bits ?? 64;
        const meta: Meta = { version: 2, seqLen: options.seqLen ?? 10, hash: options.hash ?? 'ordered', ...(bits === 64 ? { bits } : {}), batches: [] };
        if (!fs.existsSync(path.join(dir, 'postings', 'MANIFEST'))) PostingIndex.create(path.join(dir, 'postings'), { keyBits: bits });
        await writeIndexFile(metaFile, metaText(meta));
      }
      const { meta, ix } = await loadState(dir, create);
      if ((options.seqLen !== undefined && options.seqLen !== meta.seqLen) || (options.hash !== undefined && options.hash !== meta.hash) ||
          (options.bits !== undefined && options.bits !== (meta.bits ?? 32))) {
        ix.close();
        throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `'${dir}' was built with --window ${meta.seqLen} --hash ${meta.hash} --bits ${meta.bits ?? 32}`);
      }
      const p = new PassageIndex(dir, meta, ix);
      p.release = release;
      return p;
    } catch (e) {
      release?.();
      throw e;
    }
  }

  /**
   * Runs a write holding DIR's writer lock: this object's (a writer), or taken for the call, the committed state
   * read again under it (another writer may have committed since this reader opened).
   */
  private async writing<T>(fn: () => Promise<T>): Promise<T> {
    if (this.release) return fn();
    const release = lockIndex(this.dir, path.join(this.dir, 'postings'), 'passages index');
    this.release = release;
    try {
      const { meta, ix } = await loadState(this.dir, true);
      this.ix.close();
      this.ix = ix;
      this.meta = meta;
      this.table = undefined;
      for (const fd of this.fds.values()) fs.closeSync(fd);
      this.fds.clear();
      return await fn();
    } finally {
      this.release = undefined;
      release();
    }
  }

  /** The run's commit point (lib/io/index-commit.ts): the meta of the new state, committed with the postings by fn. */
  private async commitMeta(run: IndexRun, meta: Meta, commit: (record: Uint8Array) => Promise<void>): Promise<void> {
    await run.commit(Buffer.from(metaText(meta)), commit);
    this.meta = { ...meta, version: 2 };
    this.table = undefined;
  }

  /** Documents indexed. */
  get size(): number {
    return this.meta.batches.reduce((s, b) => s + b.count, 0);
  }

  /** Bytes of the indexed documents' texts (the texts files). */
  get textBytes(): number {
    return this.meta.batches.reduce((s, b) => s + fs.statSync(path.join(this.dir, b.texts)).size, 0);
  }

  /** The largest indexed document: its id and UTF-8 bytes (undefined: an empty index). */
  largestDocument(): { id: unknown; bytes: number } | undefined {
    const t = this.docTable();
    let best = -1, bytes = 0;
    for (let i = 0; i < t.texts.length.length; i++) if (t.texts.length[i] > bytes) { bytes = t.texts.length[i]; best = i; }
    return best < 0 ? undefined : { id: t.id(best), bytes };
  }

  /** Reads the document lists (ids and text locations) once, when a search needs them. */
  private docTable(): DocTable {
    if (this.table) return this.table;
    const n = this.size;
    const file = new Uint32Array(n), length = new Uint32Array(n);
    const offset = new Float64Array(n), idOffsets = new Float64Array(n + 1);
    const crc = new Uint32Array(n), check = new Uint8Array(n);
    const idParts: Buffer[] = [];
    let idBytes = 0;
    this.meta.batches.forEach((b, k) => {
      const f = path.join(this.dir, b.docs);
      const raw = fs.readFileSync(f);
      if (b.docsCrc !== undefined && crc32c(raw) !== b.docsCrc)
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${f}' is corrupt: its checksum does not match passages.json`, { file: f });
      const all = raw.toString('utf8');
      let lines = 0, pending: string[] = [];
      const flush = () => {
        const buf = Buffer.from(pending.join(''));
        idParts.push(buf);
        pending = [];
      };
      for (let at = 0; at < all.length;) {
        let end = all.indexOf('\n', at);
        if (end < 0) end = all.length;
        const l = all.slice(at, end);
        at = end + 1;
        if (!l) continue;
        const i = lines++;
        let d: { n: number; id: unknown; offset: number; length: number; crc?: number };
        try {
          d = JSON.parse(l);
        } catch (e) {
          throw new NeardupError('ERR_NEARDUP_CORRUPT', `${f}:${i + 1}: ${(e as Error).message}`, { file: f, line: i + 1, cause: e });
        }
        if (d.n !== b.first + i) throw new NeardupError('ERR_NEARDUP_CORRUPT', `${f}:${i + 1}: document number ${d.n}, expected ${b.first + i}`, { file: f, line: i + 1 });
        if (!Number.isSafeInteger(d.offset) || d.offset < 0 || !Number.isInteger(d.length) || d.length < 0 || d.length > 0xffffffff ||
            (b.docsCrc !== undefined && !(Number.isInteger(d.crc) && d.crc! >= 0 && d.crc! <= 0xffffffff)))
          throw new NeardupError('ERR_NEARDUP_CORRUPT', `${f}:${i + 1}: bad offset, length or crc`, { file: f, line: i + 1 });
        if (b.docsCrc !== undefined) {
          crc[d.n] = d.crc!;
          check[d.n] = 1;
        }
        const idJson = lineIdText(l, d.id);
        pending.push(idJson);
        idBytes += Buffer.byteLength(idJson);
        idOffsets[d.n + 1] = idBytes;
        file[d.n] = k;
        offset[d.n] = d.offset;
        length[d.n] = d.length;
        if (pending.length >= 65536) flush();
      }
      flush();
      if (lines !== b.count) throw new NeardupError('ERR_NEARDUP_CORRUPT', `${f}: ${lines} documents, passages.json says ${b.count}`, { file: f });
    });
    const json = Buffer.concat(idParts, idBytes);
    const id = (d: number) => {
      const t = json.toString('utf8', idOffsets[d], idOffsets[d + 1]);
      const v = JSON.parse(t) as unknown;
      return typeof v === 'number' && !Number.isSafeInteger(v) && /^-?\d+$/.test(t) ? BigInt(t) : v;  // exact beyond 2^53
    };
    this.table = { id, ids: { json, offsets: idOffsets }, texts: { files: this.meta.batches.map((b) => path.join(this.dir, b.texts)), file, offset, length, crc, check } };
    this.ix.setDocIds(json, idOffsets);  // for the lines formatted natively
    return this.table;
  }

  /**
   * Adds documents as one run (one texts/docs batch, one postings segment built within `memory` bytes of
   * (blot, doc) pairs, spilled to sorted runs in `tmp` beyond). Batches come from an (async) iterable, so
   * a run can stream a corpus of any size; returns the number of documents added.
   */
  async addRun(batches: AsyncIterable<Array<{ id: unknown; text: Buffer }>> | Iterable<Array<{ id: unknown; text: Buffer }>>,
    options: { memory?: number; tmp?: string; onBatch?: (docs: number, bytes: number) => void } = {}): Promise<number> {
    const o = optionsObject(options);
    if (o.memory !== undefined) expectInt(o.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
    if (o.tmp !== undefined) expectPath(o.tmp, 'tmp');
    return this.writing(() => this.run(batches, o));
  }

  private async run(batches: AsyncIterable<Array<{ id: unknown; text: Buffer }>> | Iterable<Array<{ id: unknown; text: Buffer }>>,
    o: { memory?: number; tmp?: string; onBatch?: (docs: number, bytes: number) => void }): Promise<number> {
    const k = this.meta.batches.length + 1;
    const names = { texts: `texts-${k}.bin`, docs: `docs-${k}.jsonl` };
    const first = this.size;
    const job = new IndexRun(this.dir, path.join(this.dir, 'postings'), META, [names.texts, names.docs]);
    const textsOut = OutputFile.open(path.join(this.dir, names.texts));
    let docsOut: OutputFile | undefined;
    let app: Awaited<ReturnType<PostingIndex['appender']>> | undefined;
    let n = 0, off = 0, docsCrc = 0;
    try {
      docsOut = OutputFile.open(path.join(this.dir, names.docs));
      app = await this.ix.appender({ memory: memorySplit(o.memory ?? 0).buildMemory, tmp: o.tmp });
      for await (const docs of batches) {
        expectArray(docs, 'docs');
        docs.forEach((d, i) => {
          if (d === null || typeof d !== 'object' || !(d.text instanceof Uint8Array))
            throw invalidArgument(TypeError, `Expected docs[${i}] to be { id, text: Buffer }`);
          checkId(d.id, `docs[${i}].id`);
        });
        if (docs.length === 0) continue;
        let lines = '';
        for (const d of docs) {
          lines += docLine(first + n, idJsonText(d.id), off, d.text.length, crc32c(d.text)) + '\n';
          await textsOut.write(Buffer.from(d.text.buffer, d.text.byteOffset, d.text.byteLength));
          off += d.text.length;
          n++;
        }
        const lineBytes = Buffer.from(lines);
        docsCrc = crc32c(lineBytes, docsCrc);
        await docsOut.write(lineBytes);
        const ids = await app.addTexts(docs.map((d) => d.text), { blot: this.blotOptions });
        if (ids.length !== docs.length || ids[0] !== first + n - docs.length) throw new NeardupError('ERR_NEARDUP_INTERNAL', 'unexpected document numbers');
        o.onBatch?.(n, off);
      }
      if (n === 0) {
        textsOut.abort();
        docsOut.abort();
        await app.abort();
        return 0;
      }
      await textsOut.commit();
      await docsOut.commit();
      const appender = app;
      await this.commitMeta(job, { ...this.meta, batches: [...this.meta.batches, { ...names, first, count: n, docsCrc }] }, (record) => appender.commit(record));
    } catch (e) {
      textsOut.abort();
      docsOut?.abort();
      await app?.abort().catch(() => undefined);
      throw e;
    } finally {
      job.end();  // not committed: the batch files are no one's, removed
    }
    return n;
  }

  /**
   * Adds other passage indexes ("parts", each built apart from some of the documents: `neardup passages index
   * --shards`) as one run: the batch files and the postings segment that one addRun of part 0's documents, then
   * part 1's, ... writes, byte for byte. The parts must have this index's window and hash; they are not
   * changed. Returns the number of documents added. keyRanges: the parts' postings were put together by key
   * range apart (PostingIndex.writeKeyRange of every range, ids numbered from this index's size): those
   * files, in range order, become the segment (PostingIndex.appendKeyRanges) instead of a merge here.
   */
  async addParts(dirs: ReadonlyArray<string>, options: { keyRanges?: ReadonlyArray<string>; onStaged?: (batch: PartsBatch) => Promise<void> } = {}): Promise<number> {
    expectArray(dirs as string[], 'dirs');
    dirs.forEach((d, i) => expectPath(d, `dirs[${i}]`));
    const o = optionsObject(options);
    if (o.keyRanges !== undefined) {
      expectArray(o.keyRanges as string[], 'keyRanges');
      o.keyRanges.forEach((f, i) => expectPath(f, `keyRanges[${i}]`));
    }
    if (o.onStaged !== undefined && typeof o.onStaged !== 'function') throw invalidArgument(TypeError, 'Expected onStaged to be a function');
    return this.writing(() => this.putParts(dirs, o));
  }

  /** @internal Whether the committed state holds this batch (the same files, numbers and docs checksum). */
  holdsBatch(batch: PartsBatch): boolean {
    return this.meta.batches.some((b) => b.texts === batch.texts && b.docs === batch.docs && b.first === batch.first &&
      b.count === batch.count && b.docsCrc === batch.docsCrc);
  }

  private async putParts(dirs: ReadonlyArray<string>, o: { keyRanges?: ReadonlyArray<string>; onStaged?: (batch: PartsBatch) => Promise<void> }): Promise<number> {
    const parts: PassageIndex[] = [];
    try {
      for (const d of dirs) {
        const p = await PassageIndex.open(d);
        parts.push(p);
        if (p.meta.seqLen !== this.meta.seqLen || p.meta.hash !== this.meta.hash || p.bits !== this.bits)
          throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `'${d}' was built with --window ${p.meta.seqLen} --hash ${p.meta.hash} --bits ${p.bits}, '${this.dir}' with --window ${this.meta.seqLen} --hash ${this.meta.hash} --bits ${this.bits}`);
      }
      const k = this.meta.batches.length + 1;
      const names = { texts: `texts-${k}.bin`, docs: `docs-${k}.jsonl` };
      const first = this.size;
      const job = new IndexRun(this.dir, path.join(this.dir, 'postings'), META, [names.texts, names.docs], 'passages-parts');
      const textsOut = OutputFile.open(path.join(this.dir, names.texts));
      let docsOut: OutputFile | undefined;
      let n = 0, off = 0, docsCrc = 0;
      try {
        docsOut = OutputFile.open(path.join(this.dir, names.docs));
        for (const p of parts) {
          for (const b of p.meta.batches) {
            // its document list, renumbered: ids after the documents before it, offsets after the texts before it
            const docsFile = path.join(p.dir, b.docs);
            let i = 0, partCrc = 0;
            for (const l of readLines(docsFile, (bytes) => { partCrc = crc32c(bytes, partCrc); })) {
              let d: { n: number; id: unknown; offset: number; length: number; crc?: number };
              try {
                d = JSON.parse(l);
              } catch (e) {
                throw new NeardupError('ERR_NEARDUP_CORRUPT', `${docsFile}:${i + 1}: ${(e as Error).message}`, { file: docsFile, line: i + 1, cause: e });
              }
              if (d.n !== b.first + i) throw new NeardupError('ERR_NEARDUP_CORRUPT', `${docsFile}:${i + 1}: document number ${d.n}, expected ${b.first + i}`, { file: docsFile, line: i + 1 });
              if (b.docsCrc !== undefined && !(Number.isInteger(d.crc) && d.crc! >= 0 && d.crc! <= 0xffffffff))
                throw new NeardupError('ERR_NEARDUP_CORRUPT', `${docsFile}:${i + 1}: bad crc`, { file: docsFile, line: i + 1 });
              // a batch without checksums gets them here (its text read once)
              const crc = b.docsCrc !== undefined ? d.crc! : crc32c(p.text(b.first + i));
              const line = Buffer.from(docLine(first + n + i, lineIdText(l, d.id), off + d.offset, d.length, crc) + '\n');
              docsCrc = crc32c(line, docsCrc);
              const w = docsOut.write(line);
              if (w) await w;
              i++;
            }
            if (b.docsCrc !== undefined && partCrc !== b.docsCrc)
              throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${docsFile}' is corrupt: its checksum does not match passages.json`, { file: docsFile });
            if (i !== b.count) throw new NeardupError('ERR_NEARDUP_CORRUPT', `${docsFile}: ${i} documents, passages.json says ${b.count}`, { file: docsFile });
            n += i;
            // its texts, copied
            off += await textsOut.appendFile(path.join(p.dir, b.texts));
          }
        }
        if (n === 0) {
          textsOut.abort();
          docsOut.abort();
          return 0;
        }
        await textsOut.commit();
        await docsOut.commit();
        const batch: PartsBatch = { ...names, first, count: n, docsCrc };
        await o.onStaged?.(batch);
        await this.commitMeta(job, { ...this.meta, batches: [...this.meta.batches, batch] }, async (record) => {
          if (o.keyRanges) await this.ix.appendKeyRanges(o.keyRanges, n, record);
          else await this.ix.appendIndexes(parts.map((p) => path.join(p.dir, 'postings')), record);
        });
      } catch (e) {
        textsOut.abort();
        docsOut?.abort();
        throw e;
      } finally {
        job.end();  // not committed: the batch files are no one's, the index is as it was
      }
      if (this.ix.info().nextId !== first + n) throw new NeardupError('ERR_NEARDUP_INTERNAL', 'unexpected document numbers');
      return n;
    } finally {
      for (const p of parts) p.close();
    }
  }

  /** Adds documents (texts as UTF-8 bytes) as one run. */
  async add(docs: Array<{ id: unknown; text: Buffer }>, options: { memory?: number; tmp?: string } = {}): Promise<void> {
    expectArray(docs, 'docs');
    docs.forEach((d, i) => {
      if (d === null || typeof d !== 'object' || !(d.text instanceof Uint8Array))
        throw invalidArgument(TypeError, `Expected docs[${i}] to be { id, text: Buffer }`);
      checkId(d.id, `docs[${i}].id`);
    });
    const o = optionsObject(options);
    if (o.memory !== undefined) expectInt(o.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
    if (o.tmp !== undefined) expectPath(o.tmp, 'tmp');
    if (docs.length === 0) return;
    await this.addRun([docs], options);
  }

  /** Rewrites the postings as one segment. */
  merge(): Promise<void> {
    return this.writing(() => this.ix.merge());
  }

  /** Segments of the postings (one per run since the last merge). */
  get segments(): number {
    return this.ix.info().segments;
  }

  /** The text of document n (its internal number). */
  text(n: number): Buffer {
    expectInt(n, 'n', 0, Math.max(0, this.size - 1));
    if (this.size === 0) throw invalidArgument(RangeError, 'the index holds no document');
    const t = this.docTable().texts;
    const k = t.file[n];
    let fd = this.fds.get(k);
    if (fd === undefined) {
      fd = fs.openSync(t.files[k], 'r');
      this.fds.set(k, fd);
    }
    const b = Buffer.alloc(t.length[n]);
    if (b.length > 0 && fs.readSync(fd, b, 0, b.length, t.offset[n]) !== b.length) {
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${t.files[k]}' is shorter than its document list says`, { file: t.files[k] });
    }
    if (t.check[n] && crc32c(b) !== t.crc[n])
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${t.files[k]}' is corrupt at offset ${t.offset[n]}: the text of document ${n} does not match its checksum`, { file: t.files[k], offset: t.offset[n] });
    return b;
  }

  /**
   * Passages shared by the most documents first: maximal runs of consecutive windows held by the same set
   * of documents, each window by at least max(minDocs, round(mean + sigma * sd)) documents (dupi's cut-off:
   * mean and sd over the counts of the indexed windows). Then longest first. Each document's first
   * occurrence of the passage is given, with its exact text. The passages are computed natively within
   * about `memory` bytes (default 0: no cap), spilling sorted runs into `tmp` (default the system's
   * temporary folder) beyond it, then read a chunk at a time; they do not depend on the cap.
   */
  async *extract(options: ExtractOptions = {}): AsyncGenerator<Passage> {
    const table = this.docTable();
    for await (const r of this.extractChunks(options, false)) {
      if (!('windows' in r)) continue;
      const text = Buffer.from(r.text.buffer, r.text.byteOffset, r.text.byteLength);
      let at = 0;
      for (let i = 0; i < r.windows.length; i++) {
        const docs: PassageDoc[] = [];
        for (let k = r.docOffsets[i]; k < r.docOffsets[i + 1]; k++) {
          const n = r.docs[k], len = r.ends[k] - r.begins[k];
          docs.push({ id: table.id(n), begin: r.begins[k], end: r.ends[k], text: text.toString('utf8', at, at + len) });
          at += len;
        }
        yield { blot: r.firstBlot[i].toString(16).padStart(this.bits / 4, '0'), count: docs.length, windows: r.windows[i], docs };
      }
    }
  }

  /**
   * The passages of extract() as JSON lines, formatted natively (byte for byte JSON.stringify of extract's
   * objects, one per line), a chunk of a few MiB at a time: no JavaScript object per passage.
   */
  async *extractLines(options: ExtractOptions = {}): AsyncGenerator<Buffer> {
    for await (const r of this.extractChunks(options, true)) {
      if ('lines' in r) yield Buffer.from(r.lines.buffer, r.lines.byteOffset, r.lines.byteLength);
    }
  }

  private async *extractChunks(options: ExtractOptions, lines: boolean) {
    const o = optionsObject(options);
    if (o.sigma !== undefined) expectNumber(o.sigma, 'sigma', -1e6, 1e6);
    if (o.minDocs !== undefined) expectInt(o.minDocs, 'minDocs', 0, 0xffffffff);
    if (o.limit !== undefined) expectInt(o.limit, 'limit', 0, Number.MAX_SAFE_INTEGER);
    if (o.memory !== undefined) expectInt(o.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
    if (o.tmp !== undefined) expectPath(o.tmp, 'tmp');
    if (this.size === 0 || options.limit === 0) return;
    const table = this.docTable();
    const start = await this.ix.extractStart(options.sigma ?? 2, options.minDocs ?? 2, options.memory ?? 0, options.tmp ?? os.tmpdir(),
      table.texts, this.blotOptions);
    let left = options.limit ?? Infinity;
    try {
      for (let done = false; !done && left > 0;) {
        // at most `left` passages: each has at least one document
        const r = await this.ix.extractNext(start.cursor, Math.min(EXTRACT_CHUNK, left), EXTRACT_CHUNK_BYTES, lines);
        done = r.done;
        if ('lines' in r) {
          left -= r.passages;
        } else {
          if (r.windows.length > left) throw new NeardupError('ERR_NEARDUP_INTERNAL', 'more passages than asked for');
          left -= r.windows.length;
        }
        yield r;
      }
    } finally {
      this.ix.extractEnd(start.cursor);
    }
  }

  /**
   * For each query text: the indexed documents sharing at least minShared passages (maximal aligned runs
   * of equal windows) with it, most shared windows first, each passage with its byte ranges in both
   * documents and its text in the indexed one. Documents are nominated by the query's windows held by at
   * most maxDocs documents (default 1000).
   */
  async query(texts: Buffer[], options: { minShared?: number; maxDocs?: number } = {}): Promise<QueryMatch[][]> {
    const table = this.docTable();
    const r = await this.queryNative(texts, options, false);
    if (!r) return [];
    if ('lines' in r) throw new NeardupError('ERR_NEARDUP_INTERNAL', 'lines where arrays were asked for');
    const out: QueryMatch[][] = [];
    const text = Buffer.from(r.text.buffer, r.text.byteOffset, r.text.byteLength);
    let at = 0;
    for (let q = 0; q < texts.length; q++) {
      const matches: QueryMatch[] = [];
      for (let m = r.matchOffsets[q]; m < r.matchOffsets[q + 1]; m++) {
        const n = r.doc[m];
        const spans: QueryPassage[] = [];
        for (let k = r.runOffsets[m]; k < r.runOffsets[m + 1]; k++) {
          const len = r.dEnd[k] - r.dBegin[k];
          spans.push({ windows: r.runWindows[k], query: [r.qBegin[k], r.qEnd[k]], doc: [r.dBegin[k], r.dEnd[k]], text: text.toString('utf8', at, at + len) });
          at += len;
        }
        matches.push({ id: table.id(n), passages: spans.length, windows: r.windows[m], spans });
      }
      out.push(matches);
    }
    return out;
  }

  /** The native query of query() and queryLines() (undefined: no text). */
  private async queryNative(texts: Buffer[], options: { minShared?: number; maxDocs?: number }, lines: boolean) {
    expectArray(texts, 'texts');
    texts.forEach((t, i) => { if (!(t instanceof Uint8Array)) throw invalidArgument(TypeError, `Expected texts[${i}] to be a Buffer`); });
    const o = optionsObject(options);
    if (o.minShared !== undefined) expectInt(o.minShared, 'minShared', 1, 0xffffffff);
    if (o.maxDocs !== undefined) expectInt(o.maxDocs, 'maxDocs', 1, 0xffffffff);
    if (texts.length === 0) return undefined;
    return this.ix.queryPassages(texts, this.docTable().texts, this.blotOptions, options.minShared ?? 1, options.maxDocs ?? 1000, lines);
  }

  /**
   * query()'s matches as JSON, formatted natively: for each query text, the bytes of JSON.stringify of its
   * QueryMatch array (no JavaScript object per match or span).
   */
  async queryLines(texts: Buffer[], options: { minShared?: number; maxDocs?: number } = {}): Promise<Buffer[]> {
    const r = await this.queryNative(texts, options, true);
    if (!r) return [];
    if (!('lines' in r)) throw new NeardupError('ERR_NEARDUP_INTERNAL', 'arrays where lines were asked for');
    const all = Buffer.from(r.lines.buffer, r.lines.byteOffset, r.lines.byteLength);
    return texts.map((_, i) => all.subarray(r.lineOffsets[i], r.lineOffsets[i + 1]));
  }

  /**
   * Pairs of documents sharing at least minShared passages: maximal aligned runs of windows each held by 2
   * .. maxDocs documents (windows held by more, boilerplate, neither pair documents nor join passages),
   * with the windows inside them and the fraction of each document's bytes they cover. Most passages first.
   * Computed natively within about `memory` bytes (default 0: no cap), spilling into `tmp` (default the
   * system's temporary folder) beyond it; the pairs do not depend on the cap.
   */
  async pairs(options: PairsOptions = {}): Promise<PairSummary[]> {
    const table = this.docTable();
    const out: PairSummary[] = [];
    for await (const r of this.pairsChunks(options, false)) {
      if (!('a' in r)) continue;
      for (let i = 0; i < r.a.length; i++) {
        const la = table.texts.length[r.a[i]], lb = table.texts.length[r.b[i]];
        out.push({
          a: table.id(r.a[i]), b: table.id(r.b[i]), passages: r.passages[i], windows: r.windows[i],
          coverA: la ? r.bytesA[i] / la : 0, coverB: lb ? r.bytesB[i] / lb : 0,
        });
      }
    }
    return out;
  }

  /**
   * The pairs of pairs() as JSON lines, formatted natively (byte for byte JSON.stringify of pairs()'s
   * objects, one per line), a chunk at a time: no JavaScript object per pair.
   */
  async *pairsLines(options: PairsOptions = {}): AsyncGenerator<Buffer> {
    for await (const r of this.pairsChunks(options, true)) {
      if ('lines' in r) yield Buffer.from(r.lines.buffer, r.lines.byteOffset, r.lines.byteLength);
    }
  }

  /**
   * @internal pairsLines written chunk after chunk into `into`: each chunk yielded is a view of
   * it, valid until the next step of the iteration. The CLI's output: no buffer per chunk is left for the
   * garbage collector (fresh chunks of several MiB each piled up to ~70 MiB before V8 collected them).
   */
  async *pairsLinesInto(options: PairsOptions, into: Buffer): AsyncGenerator<Buffer> {
    for await (const r of this.pairsChunks(options, true, into)) {
      if ('bytes' in r) {
        if (r.bytes > 0) yield into.subarray(0, r.bytes);
      } else if ('lines' in r) yield Buffer.from(r.lines.buffer, r.lines.byteOffset, r.lines.byteLength);  // ids too long for it
    }
  }

  private async *pairsChunks(options: PairsOptions, lines: boolean, into?: Buffer) {
    const o = optionsObject(options);
    if (o.minShared !== undefined) expectInt(o.minShared, 'minShared', 1, 0xffffffff);
    if (o.maxDocs !== undefined) expectInt(o.maxDocs, 'maxDocs', 1, 0xffffffff);
    if (o.memory !== undefined) expectInt(o.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
    if (o.tmp !== undefined) expectPath(o.tmp, 'tmp');
    if (this.size === 0) return;
    const table = this.docTable();
    const start = await this.ix.pairsStart(options.minShared ?? 1, options.maxDocs ?? 1000, options.memory ?? 0, options.tmp ?? os.tmpdir(),
      table.texts, this.blotOptions);
    // the native counters (eligible keys, occurrences, matches, blocks, spilled bytes, peak) for bench/
    if (process.env.NEARDUP_PAIRS_STATS) process.stderr.write(`pairs: ${JSON.stringify(start)}\n`);
    try {
      for (let done = false; !done;) {
        const r = await this.ix.pairsNext(start.cursor, PAIRS_CHUNK, lines, into);
        done = r.done;
        yield r;
      }
    } finally {
      this.ix.extractEnd(start.cursor);
    }
  }

  close(): void {
    for (const fd of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
    this.ix.close();
    const release = this.release;
    this.release = undefined;
    release?.();
  }
}
