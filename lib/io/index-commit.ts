// The one commit point of an index made of a posting store and a metadata file beside it (a passage index's
// passages.json, a dupi index's docs.json; docs/FORMAT.md section 11, "Commit point"), and its writer lock.
//
// A run writes its new data files (never named by the current state), then the new metadata as NAME.next, then
// commits the postings with a commit record naming NAME's size and CRC-32C in the posting manifest (PSTM version
// 3): that manifest's rename is the commit point. Then NAME.next is renamed to NAME. A reader takes the metadata
// the manifest's record names: NAME, or NAME.next when a writer died between the two renames; a writer (holding
// the lock) finishes that rename and removes what a dead run left (NAME.next, spill files, unnamed batch files).
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../util/errors';
import { native } from '../native/addon';
import { acquireLock } from './locks';
import { addCleanup, watchIndexTemps } from './files';
import { killPoint } from '../util/test-hooks';

const crc32c = (b: Uint8Array) => native.crc32c(b) >>> 0;

export interface CommitRecord {
  /** The metadata file (a name in the index folder). */
  meta: string;
  bytes: number;
  crc: number;
  /** CRC-32C of other files of the folder that a commit does not rewrite (dupi's cfg.json), by name. */
  also?: Record<string, number>;
}

/**
 * The commit record of metadata file `name` holding `data`, as the posting manifest keeps it (JSON, UTF-8);
 * `also`: the CRC-32C of other files of the folder, checked by checkAlso when they are read.
 */
export function commitRecord(name: string, data: Buffer, also?: Record<string, Buffer>): Uint8Array {
  const r: CommitRecord = { meta: name, bytes: data.length, crc: crc32c(data) };
  if (also) r.also = Object.fromEntries(Object.entries(also).map(([n, b]) => [n, crc32c(b)]));
  return Buffer.from(JSON.stringify(r));
}

/** Checks `bytes` of file `name` (in dir) against the record's `also` CRC, when the record carries one. */
export function checkAlso(r: CommitRecord | null, dir: string, name: string, bytes: Buffer): void {
  const want = r?.also?.[name];
  if (want === undefined) return;
  if (crc32c(bytes) !== want) {
    const file = path.join(dir, name);
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is corrupt: it does not match the CRC-32C in the commit record of the postings (${want})`, { file });
  }
}

/** The commit record in a posting manifest's commit data (null: none, an index written before records). */
export function parseRecord(data: Buffer | null, manifest: string, name: string): CommitRecord | null {
  if (data === null) return null;
  let r: CommitRecord;
  try {
    r = JSON.parse(data.toString('utf8')) as CommitRecord;
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${manifest}': its commit record is not JSON: ${(e as Error).message}`, { file: manifest, cause: e });
  }
  if (r === null || typeof r !== 'object' || r.meta !== name || !Number.isSafeInteger(r.bytes) || r.bytes < 0 ||
      !Number.isInteger(r.crc) || r.crc < 0 || r.crc > 0xffffffff ||
      (r.also !== undefined && (r.also === null || typeof r.also !== 'object' ||
        !Object.values(r.also).every((c) => Number.isInteger(c) && c >= 0 && c <= 0xffffffff))))
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${manifest}': its commit record does not name ${name}`, { file: manifest });
  return r;
}

function readIfThere(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': ${(e as Error).message}`, { file, cause: e });
  }
}

const matches = (b: Buffer | undefined, r: CommitRecord) => b !== undefined && b.length === r.bytes && crc32c(b) === r.crc;

/** fsync of a folder (after a rename in it); best effort where folders cannot be synced. */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch { /* not supported here */ } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The committed bytes of DIR/NAME under record r: NAME, or NAME.next (a writer died between the commit and its
 * rename; a writer renames it into place). Neither matching: ERR_NEARDUP_CORRUPT naming NAME.
 */
export function readCommitted(dir: string, name: string, r: CommitRecord, writer: boolean): Buffer {
  const file = path.join(dir, name), next = file + '.next';
  // NAME again last: a writer may rename NAME.next between the first two reads
  for (let i = 0; i < 2; i++) {
    const cur = readIfThere(file);
    if (matches(cur, r)) {
      if (writer) fs.rmSync(next, { force: true });  // an interrupted run's, never committed
      return cur!;
    }
    const pending = readIfThere(next);
    if (matches(pending, r)) {
      if (writer) {
        fs.renameSync(next, file);
        syncDir(dir);
      }
      return pending!;
    }
  }
  throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is corrupt or missing: it does not match the commit record of the postings (${r.bytes} bytes, CRC-32C ${r.crc})`, { file });
}

/** Writes DIR/NAME.next (temporary name, sync, rename): the metadata a commit will name. */
function stageMeta(dir: string, name: string, data: Buffer): void {
  const next = path.join(dir, name + '.next');
  const tmp = path.join(dir, `.${name}.next.neardup-tmp-${process.pid}-${crypto.randomBytes(8).toString('hex')}`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'w', 0o644);
    let off = 0;
    while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, next);
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw new NeardupError('ERR_NEARDUP_IO', `cannot write '${next}': ${(e as Error).message}`, { file: next, cause: e });
  }
  syncDir(dir);
}

/**
 * One run's way to its commit point: files(), the data files it writes before (never named by the current
 * state), then commit(), which stages the metadata, commits the postings with its record and renames the
 * metadata into place. Until the commit point, an error or a signal (CLI) removes what the run wrote; after it,
 * a signal finishes the rename. The test hook kill points `POINT-staged` and `POINT-committed` (POINT: the
 * metadata file's name without .json, or as given) stop the process just before and just after the commit point.
 */
export class IndexRun {
  private record?: Uint8Array;
  private committed = false;
  private readonly untrack: () => void;
  private readonly point: string;

  constructor(private readonly dir: string, private readonly postings: string, private readonly name: string, private readonly files: string[] = [],
    point = name.replace(/\.json$/, ''), private readonly also?: Record<string, Buffer>) {
    this.point = point;
    this.untrack = addCleanup(() => this.interrupted());
  }

  /** Whether the manifest on disk is this run's commit (its commit data, the manifest's last bytes, is the record). */
  private onDisk(): boolean {
    if (!this.record) return false;
    try {
      const m = fs.readFileSync(path.join(this.postings, 'MANIFEST'));
      return m.length >= this.record.length && Buffer.from(this.record).equals(m.subarray(m.length - this.record.length));
    } catch {
      return false;
    }
  }

  private removeOwn(): void {
    for (const f of this.files) fs.rmSync(path.join(this.dir, f), { force: true });
    fs.rmSync(path.join(this.dir, this.name + '.next'), { force: true });
  }

  /** A signal: before the commit point, the run's files go; after it, the metadata's rename is finished. */
  private interrupted(): void {
    if (this.committed || this.onDisk()) {
      if (fs.existsSync(path.join(this.dir, this.name + '.next'))) publishMeta(this.dir, this.name);
    } else {
      this.removeOwn();
    }
  }

  /** Commits: the metadata `data` as NAME.next, then fn(record) (the postings' commit), then NAME.next -> NAME. */
  async commit(data: Buffer, fn: (record: Uint8Array) => Promise<void>): Promise<void> {
    const record = commitRecord(this.name, data, this.also);
    stageMeta(this.dir, this.name, data);
    this.record = record;
    await killPoint(`${this.point}-staged`);
    try {
      await fn(record);
    } catch (e) {
      // a failure after the manifest's rename (its folder's sync) still committed
      if (!this.onDisk()) throw e;
    }
    this.committed = true;
    // the commit point is behind: the new state is the index's, whatever happens from here
    await killPoint(`${this.point}-committed`);
    publishMeta(this.dir, this.name);
  }

  /** Ends the run (after commit(), or after a failure: then what it wrote is removed unless it committed). */
  end(): void {
    this.untrack();
    if (!this.committed && !this.onDisk()) this.removeOwn();
  }
}

/** After the commit: DIR/NAME.next becomes DIR/NAME. */
function publishMeta(dir: string, name: string): void {
  fs.renameSync(path.join(dir, name + '.next'), path.join(dir, name));
  syncDir(dir);
}

/**
 * Takes the writer lock of an index folder (DIR/LOCK, lib/io/locks.ts acquireLock: an advisory lock the system
 * releases when the process dies); a second writer is refused with ERR_NEARDUP_IO naming the folder. While it is
 * held, the spill and temporary files in the postings folder are this writer's or a dead one's: the stale ones
 * are removed now, and this process's own on SIGINT/SIGTERM/SIGHUP and at exit (CLI). Returns the release.
 */
export function lockIndex(dir: string, postings: string, what: string): () => void {
  const release = acquireLock(dir, (file) => `'${dir}' is being written by another process (it holds ${file}): ${what} refused; wait for it to finish`);
  try {
    sweepIndexFolder(dir);
    sweepIndexFolder(postings);
  } catch (e) {
    release();
    throw e;
  }
  const unwatch = watchIndexTemps(postings);
  return () => {
    unwatch();
    release();
  };
}

const TEMP = /^\..*\.neardup-tmp-(\d+)-[0-9a-f]+$/;

/**
 * Removes what dead writers left in `dir` (callers hold the index's lock, so no other writer is at work): the
 * posting store's spill files (neardup-pst-*) and the temporary files of other processes (.NAME.neardup-tmp-PID-*,
 * whatever their age: the lock says their writer is gone).
 */
export function sweepIndexFolder(dir: string): number {
  let n = 0;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  for (const f of names) {
    const m = TEMP.exec(f);
    if (!f.startsWith('neardup-pst-') && !(m && Number(m[1]) !== process.pid)) continue;
    fs.rmSync(path.join(dir, f), { force: true, recursive: true });
    n++;
  }
  return n;
}

export { killPoint };
