// The similarity table of a chunk index in SQLite (docs/similar.md, "The SQLite table") and the recovery that
// keeps the table and the index files at one generation (the writer lock, DIR/LOCK: io/locks.ts acquireLock).
//
// A run writes its index files and PENDING (a manifest naming them), then commits its rows to SQLite in one
// transaction that also sets meta.generation, then renames PENDING to MANIFEST. Opening compares the two:
// equal generations are consistent (a leftover PENDING is discarded); a table one generation ahead with a
// PENDING of that generation means the run died between its two commits, and PENDING is taken (renamed by a
// writer, read in place by a reader). better-sqlite3 (12.x) is an optional dependency, loaded on first use.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError, nativeSync } from '../util/errors';
import { native, type NativeChunkIndex } from '../native/addon';

export const DB_NAME = 'similar.sqlite';

// The part of better-sqlite3's API used here.
export interface SqliteStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): void;
  readonly inTransaction: boolean;
}
type SqliteConstructor = new (file: string, options?: { readonly?: boolean; fileMustExist?: boolean }) => SqliteDatabase;

let sqliteCtor: SqliteConstructor | undefined;

function loadSqlite(): SqliteConstructor {
  if (sqliteCtor) return sqliteCtor;
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    sqliteCtor = require('better-sqlite3') as SqliteConstructor;
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_UNSUPPORTED',
      'the similarity table needs the optional dependency better-sqlite3 12.x (Node 20 or later), which is not ' +
      `installed or does not load here: ${(e as Error).message.split('\n')[0]}`, { cause: e });
  }
  return sqliteCtor;
}

export function openDb(file: string, options: { readonly?: boolean; fileMustExist?: boolean } = {}): SqliteDatabase {
  const Ctor = loadSqlite();
  try {
    return new Ctor(file, options);
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot open '${file}': ${(e as Error).message}`, { file, cause: e });
  }
}

function dbError(file: string, e: unknown): NeardupError {
  if (e instanceof NeardupError) return e;
  const code = (e as { code?: string }).code ?? '';
  const kind = code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB' ? 'ERR_NEARDUP_CORRUPT' : 'ERR_NEARDUP_IO';
  return new NeardupError(kind, `'${file}': ${(e as Error).message}`, { file, cause: e });
}

/** meta.generation of DIR's table, or null when there is no table file. */
export function dbGeneration(dir: string): number | null {
  const file = path.join(dir, DB_NAME);
  if (!fs.existsSync(file)) return null;
  const db = openDb(file, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = 'generation'").get() as { value: unknown } | undefined;
    const g = Number(row?.value);
    if (!Number.isSafeInteger(g) || g < 1) throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}': no generation in its meta table`, { file });
    return g;
  } catch (e) {
    throw dbError(file, e);
  } finally {
    db.close();
  }
}


// ----------------------------------------------------------------------------------------------- recovery

export interface Consistent {
  /** The manifest to open. */
  which: 'MANIFEST' | 'PENDING';
  generation: number;
}

/**
 * The consistent state of DIR (see the header comment). A writer (holding the lock) also mends it: takes
 * PENDING when the table is ahead, discards it when not.
 */
export function consistentState(dir: string, writer: boolean): Consistent {
  const pr = nativeSync(() => native.chunkIndexProbe(dir));
  const db = dbGeneration(dir);
  const m = pr.manifest ?? 0;
  if (pr.manifest === null && pr.pending === null) {
    if (pr.stage) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${dir}' holds a staged build that is not finished (similar stage finish)`, { file: dir });
    throw new NeardupError('ERR_NEARDUP_IO', `'${dir}' holds no chunk index (no MANIFEST)`, { file: dir });
  }
  if (db !== null && db === m + 1 && pr.pending === db) {
    if (!writer) return { which: 'PENDING', generation: db };
    nativeSync(() => native.chunkIndexCommit(dir));
    return { which: 'MANIFEST', generation: db };
  }
  if (pr.manifest !== null && db === m) {
    if (writer && pr.pending !== null) fs.rmSync(path.join(dir, 'PENDING'), { force: true });
    return { which: 'MANIFEST', generation: m };
  }
  if (pr.manifest === null)
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${dir}' holds an interrupted build: build it again`, { file: dir });
  throw new NeardupError('ERR_NEARDUP_CORRUPT',
    `'${dir}': the index (generation ${m}) and its table ${DB_NAME} (generation ${db ?? 'missing'}) disagree`, { file: dir });
}

/** Removes the index files of DIR that `keep` does not name (left by older generations or interrupted runs). */
export function removeUnreferenced(dir: string, keep: readonly string[]): void {
  const set = new Set(keep);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (n === 'MANIFEST' || set.has(n) || !native.chunkIndexFileName(n)) continue;
    try { fs.unlinkSync(path.join(dir, n)); } catch { /* in use (Windows) or gone: next time */ }
  }
}

/** Removes what an interrupted build left in DIR (no MANIFEST): our files, the table, the lock is kept. */
export function removeInterruptedBuild(dir: string): void {
  removeUnreferenced(dir, []);
  for (const n of [DB_NAME, `${DB_NAME}-wal`, `${DB_NAME}-shm`, `${DB_NAME}-journal`]) fs.rmSync(path.join(dir, n), { force: true });
}

// ------------------------------------------------------------------------------------------------- writes

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE documents (n INTEGER PRIMARY KEY, id NOT NULL, chunks INTEGER NOT NULL);
CREATE TABLE pairs (doc INTEGER NOT NULL, other INTEGER NOT NULL, shared INTEGER NOT NULL,
                    PRIMARY KEY (doc, other)) WITHOUT ROWID;
CREATE VIEW similar AS
  SELECT d.id AS doc, o.id AS other, CAST(p.shared AS REAL) / d.chunks AS similarity,
         CAST(p.shared AS REAL) / o.chunks AS reverse, p.shared AS shared
  FROM pairs p JOIN documents d ON d.n = p.doc JOIN documents o ON o.n = p.other;
`;

/** Inserts rows through multi-row statements (far fewer calls into SQLite than one row at a time). */
class BulkInsert {
  private readonly one: SqliteStatement;
  private readonly many: SqliteStatement;
  private buf: unknown[] = [];
  private static readonly ROWS = 128;
  constructor(db: SqliteDatabase, private readonly head: string, private readonly width: number) {
    const row = `(${new Array(width).fill('?').join(',')})`;
    this.one = db.prepare(`${head} VALUES ${row}`);
    this.many = db.prepare(`${head} VALUES ${new Array(BulkInsert.ROWS).fill(row).join(',')}`);
  }
  add(...values: unknown[]): void {
    for (const v of values) this.buf.push(v);
    if (this.buf.length === this.width * BulkInsert.ROWS) {
      this.many.run(...this.buf);
      this.buf = [];
    }
  }
  flush(): void {
    for (let i = 0; i < this.buf.length; i += this.width) this.one.run(...this.buf.slice(i, i + this.width));
    this.buf = [];
  }
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const IDS_PER_CALL = 4096;

const INT64_MAX = (1n << 63n) - 1n;

/**
 * The id values of documents as the table stores them (their JSON text): a string, an integer (a number when
 * safe, else a bigint: SQLite's 64-bit integers, exact), or the digits of an integer above 2^63-1 as a BLOB
 * (never equal to a TEXT, so apart from the string id of the same digits; WHERE doc = CAST('...' AS BLOB)).
 */
function idValues(heap: Buffer, offsets: Uint32Array): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i + 1 < offsets.length; i++) {
    const t = heap.toString('utf8', offsets[i], offsets[i + 1]);
    if (t.charCodeAt(0) === 0x22) {
      out.push(JSON.parse(t));
      continue;
    }
    const n = Number(t);
    if (Number.isSafeInteger(n)) out.push(n);
    else out.push(BigInt(t) > INT64_MAX ? Buffer.from(t, 'latin1') : BigInt(t));
  }
  return out;
}

/** Writes documents and pairs rows of `ids` (their top lists) from a native index. */
async function writeRows(db: SqliteDatabase, ix: NativeChunkIndex, ids: Uint32Array, docs: BulkInsert | null,
                         pairs: BulkInsert, onProgress?: (done: number) => void): Promise<void> {
  for (let i = 0; i < ids.length; i += IDS_PER_CALL) {
    const part = ids.subarray(i, i + IDS_PER_CALL);
    if (docs) {
      const d = ix.docs(part);
      const vals = idValues(d.ids, d.idOffsets);
      for (let j = 0; j < part.length; j++) docs.add(part[j], vals[j], d.chunks[j]);
      docs.flush();
    }
    const t = await ix.top(part);
    for (let j = 0; j < part.length; j++)
      for (let r = t.offsets[j]; r < t.offsets[j + 1]; r++) pairs.add(part[j], t.other[r], t.shared[r]);
    pairs.flush();
    onProgress?.(Math.min(ids.length, i + IDS_PER_CALL));
    await yieldToLoop();
  }
}

/**
 * Writes DIR's table for a full run (a new file: an older one is removed first), durably, with
 * meta.generation = the run's generation.
 */
export async function writeBuildTable(dir: string, ix: NativeChunkIndex, onProgress?: (done: number, total: number) => void): Promise<void> {
  const file = path.join(dir, DB_NAME);
  for (const n of [DB_NAME, `${DB_NAME}-wal`, `${DB_NAME}-shm`, `${DB_NAME}-journal`]) fs.rmSync(path.join(dir, n), { force: true });
  const db = openDb(file);
  try {
    // The file is new and not valid before the manifest names its generation: no journal while filling it.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(SCHEMA);
    const info = ix.info();
    db.exec('BEGIN');
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    meta.run('format', 1);
    meta.run('generation', 0);
    meta.run('params', JSON.stringify({ ...info.params, seed: String(info.params.seed) }));
    const ids = ix.liveIds();
    await writeRows(db, ix, ids,
      new BulkInsert(db, 'INSERT INTO documents (n, id, chunks)', 3),
      new BulkInsert(db, 'INSERT INTO pairs (doc, other, shared)', 3),
      onProgress && ((done) => onProgress(done, ids.length)));
    db.exec('COMMIT');
    db.exec('CREATE UNIQUE INDEX documents_id ON documents (id)');
    db.pragma('synchronous = FULL');
    db.pragma('journal_mode = WAL');
    db.prepare("UPDATE meta SET value = ? WHERE key = 'generation'").run(info.generation);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (e) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw dbError(file, e);
  } finally {
    db.close();
  }
}

export interface TableChanges {
  /** Deleted ids not reused: their rows go. */
  removed: Uint32Array;
  /** Added or replaced ids: their rows are replaced by their new lists. */
  upserted: Uint32Array;
  /** Row changes of the other documents: shared 0 removes (doc, other), else sets it. */
  rowDoc: Uint32Array;
  rowOther: Uint32Array;
  rowShared: Uint32Array;
}

/** Indexes of the row changes by (doc, other). */
function rowOrder(doc: Uint32Array, other: Uint32Array): Uint32Array {
  const keys = new BigUint64Array(doc.length);
  for (let i = 0; i < doc.length; i++) keys[i] = (BigInt(doc[i]) << 32n) | BigInt(other[i]);
  const order = new Uint32Array(doc.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0));
}

/** Applies an incremental run's changes to DIR's table in one transaction (meta.generation included). */
export async function writeUpdateTable(dir: string, pending: NativeChunkIndex, c: TableChanges,
                                       hook?: (stage: 'table') => void, step: (what: string) => void = () => undefined): Promise<void> {
  const file = path.join(dir, DB_NAME);
  const db = openDb(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('cache_size = -65536');  // 64 MiB of pages: the changes of one run touch many leaves
    db.exec('BEGIN IMMEDIATE');
    const delPairs = db.prepare('DELETE FROM pairs WHERE doc = ?');
    const delDoc = db.prepare('DELETE FROM documents WHERE n = ?');
    // Rows of removed and re-used ids go first (an id value may move to another document).
    for (const ids of [c.removed, c.upserted]) {
      for (const id of ids) {
        delPairs.run(id);
        delDoc.run(id);
      }
    }
    hook?.('table');
    step('js: table: rows of changed ids deleted');
    await writeRows(db, pending, c.upserted, new BulkInsert(db, 'INSERT INTO documents (n, id, chunks)', 3),
      new BulkInsert(db, 'INSERT INTO pairs (doc, other, shared)', 3));
    step('js: table: their new rows');
    const delRow = db.prepare('DELETE FROM pairs WHERE doc = ? AND other = ?');
    const setRow = db.prepare('INSERT OR REPLACE INTO pairs (doc, other, shared) VALUES (?, ?, ?)');
    // In key order: neighbouring changes then touch the same B-tree pages (random order cost 3 s for 168k
    // changes at 1M documents). One change per (doc, other), so the order does not change the result.
    const order = rowOrder(c.rowDoc, c.rowOther);
    for (let n = 0; n < order.length; n++) {
      const i = order[n];
      if (c.rowShared[i] === 0) delRow.run(c.rowDoc[i], c.rowOther[i]);
      else setRow.run(c.rowDoc[i], c.rowOther[i], c.rowShared[i]);
      if ((n & 65535) === 65535) await yieldToLoop();
    }
    db.prepare("UPDATE meta SET value = ? WHERE key = 'generation'").run(pending.info().generation);
    step('js: table: row changes');
    db.exec('COMMIT');
    step('js: table: committed');
  } catch (e) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw dbError(file, e);
  } finally {
    db.close();
  }
}
