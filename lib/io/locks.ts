// Writer locks: an advisory lock (io::os::LockFile: flock on POSIX) on a lock file, held while a process writes
// and released by the system when it dies, so a killed writer never blocks the next one. Used by the chunk index
// (DIR/LOCK), the staged runs' work folders (WORK/LOCK) and single-file indexes (.NAME.neardup-lock beside the
// file while it is written, removed after: `neardup dedup --index-out`, LshIndex.save).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError, nativeSync } from '../util/errors';
import { native } from '../native/addon';

/** A lock held by this process: `file` is the lock file; release() lets it go (also done at exit). */
export interface HeldLock {
  readonly file: string;
  release(): void;
}

/**
 * Takes the lock on `file` (created when missing). A lock held by a running process, this one included, is
 * ERR_NEARDUP_IO with the message `busy(file)`; two processes that probe it at the same instant run one after
 * the other, so callers read what the lock protects only once they hold it. By default the lock file stays (it
 * is the lock's object, not a flag: DIR/LOCK). `remove`: release() deletes it while still holding the lock, and
 * a taker whose file was deleted so (it waited on the old one) takes the new one instead: no litter beside a
 * user's file, and never two holders.
 */
export function lockFile(file: string, busy: (file: string) => string, remove = false): HeldLock {
  for (;;) {
    if (nativeSync(() => native.chunkIndexLockState(file)) === 'held')
      throw new NeardupError('ERR_NEARDUP_IO', busy(file), { file });
    let fd: number;
    try {
      fd = fs.openSync(file, 'a', 0o644);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `cannot open '${file}': ${(e as Error).message}`, { file, cause: e });
    }
    try {
      nativeSync(() => native.lockTempFile(fd, file));
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
    if (remove) {
      // the file we locked must still be the one under the name (its holder deletes it on release)
      let same = false;
      try {
        const a = fs.fstatSync(fd, { bigint: true }), b = fs.statSync(file, { bigint: true });
        same = a.dev === b.dev && a.ino === b.ino;
      } catch { /* deleted */ }
      if (!same) {
        fs.closeSync(fd);
        continue;
      }
    }
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      process.removeListener('exit', release);
      if (remove) {
        try { fs.unlinkSync(file); } catch { /* gone */ }
      }
      try { fs.closeSync(fd); } catch { /* closed */ }
    };
    process.on('exit', release);
    return { file, release };
  }
}

/**
 * Takes the writer lock of a folder DIR (the chunk index, passage and dupi indexes, a staged run's work folder): an advisory lock (io::os::LockFile) on DIR/LOCK, held while the run writes and
 * released by the system if the process dies, so a killed run never blocks the next one. A lock held by a
 * running process is an error (the lock file stays: it is the lock's object, not a flag); two runs that
 * probe it at the same instant run one after the other, so callers read the index's state only once they
 * hold the lock. Returns the function that releases it (also called at exit).
 */
export function acquireLock(dir: string, busy = (file: string) => `'${dir}' is being written by another process (it holds ${file})`): () => void {
  return lockFile(path.join(dir, 'LOCK'), busy).release;
}

/** The file a write to `p` replaces: symbolic links followed (a dangling link: its target). */
function targetOf(p: string): string {
  let cur = path.resolve(p);
  for (let hops = 0; hops <= 40; hops++) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(cur);
    } catch {
      break;
    }
    if (!st.isSymbolicLink()) break;
    const link = fs.readlinkSync(cur);
    cur = path.resolve(path.dirname(cur), link);
  }
  try {
    return path.join(fs.realpathSync(path.dirname(cur)), path.basename(cur));
  } catch {
    return cur;
  }
}

/** The lock file of a single-file index `file`: .NAME.neardup-lock in its folder (links followed). */
export function fileLockPath(file: string): string {
  const t = targetOf(file);
  return path.join(path.dirname(t), `.${path.basename(t).slice(0, 200)}.neardup-lock`);
}

/** The identity of a file on disk (device, inode, size, modification time), or null when there is none. */
export function fileIdentity(file: string): string | null {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(file, { bigint: true });
  } catch {
    return null;
  }
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}`;
}

/** The canonical name of a file (links followed), to compare two names of one file. */
export function fileKey(file: string): string {
  return targetOf(file);
}

/**
 * Takes the lock of the single-file index `file` (a regular file, or one to be created; '-' and devices take
 * none: null). The message of a busy lock names the index.
 */
export function lockIndexFile(file: string, what = 'the index'): HeldLock | null {
  if (file === '-') return null;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return null;
  } catch { /* to be created */ }
  return lockFile(fileLockPath(file), (lock) =>
    `${what} '${file}' is being written by another process (it holds ${lock}); wait for it to finish, or write elsewhere`, true);
}

/**
 * The files a single-file index was loaded from or saved to, with their identity then, so that a save cannot
 * lose another process's changes: `save` takes the file's writer lock and, onto one of those files, refuses
 * with ERR_NEARDUP_CONFLICT when it changed since (device, inode, size, modification time), unless `overwrite`.
 */
export class SavedFiles {
  private readonly files = new Map<string, string | null>();

  /** Remembers `file` as it is now (call before reading it: a file replaced meanwhile then counts as changed). */
  track(file: string, identity: string | null = fileIdentity(file)): void {
    this.files.set(fileKey(file), identity);
  }

  /**
   * ERR_NEARDUP_CONFLICT when `file` is one of ours and changed since (call it holding the file's lock);
   * `what` names the saved thing, `remedy` says what to do.
   */
  check(file: string, what = 'this index', remedy = 'load it again and redo the changes, or save with overwrite: true to replace it'): void {
    const key = fileKey(file);
    if (!this.files.has(key)) return;
    const now = fileIdentity(file);
    if (now !== null && now !== this.files.get(key)) {
      throw new NeardupError('ERR_NEARDUP_CONFLICT', `'${file}' has changed since ${what} was loaded from it or last saved to it ` +
        `(another process wrote it): nothing was written; ${remedy}`, { file });
    }
  }

  /** Runs `write` (which writes `file`) under its lock, after check() unless `overwrite`; then tracks it. */
  async save(file: string, overwrite: boolean, write: () => Promise<void>, what?: string, remedy?: string): Promise<void> {
    const lock = lockIndexFile(file, what);
    try {
      if (!overwrite) this.check(file, what, remedy);
      await write();
      this.track(file);
    } finally {
      lock?.release();
    }
  }

  /** save() for a write on the calling thread. */
  saveSync(file: string, overwrite: boolean, write: () => void, what?: string): void {
    const lock = lockIndexFile(file, what);
    try {
      if (!overwrite) this.check(file, what);
      write();
      this.track(file);
    } finally {
      lock?.release();
    }
  }
}
