// The one place where CLI commands meet the user's files (docs: README "Files and safety").
//  - checkFiles(): before anything is read, refuses an output that is one of the inputs (same device and
//    inode after following links: hard links and symbolic links included, stdin/stdout redirections too)
//    or the same file as another output.
//  - OutputFile: '-' is standard output; a device, FIFO or socket is written in place; a symbolic link is
//    followed to its target; a regular file is written to an exclusive temporary file next to it (mode
//    0600, ".NAME.neardup-tmp-PID-RANDOM"), synced and renamed over it, keeping the replaced file's mode.
//  - NativeOutput: the same for files the addon writes (io::AtomicFile has the same rules); '-' and devices
//    go through a private temporary file that is copied out at the end.
//  - Temporary files and spill folders are removed on success, on error, on SIGINT (exit 130), SIGHUP (129) and SIGTERM
//    (exit 143). Each is locked by its writer while in use (the temporary file itself; a spill folder's LOCK
//    file); the next run removes those of killed processes: unlocked, and either their PID is gone or they
//    are over an hour old (io::IsStale: the same sweep as the addon's, safe across PID namespaces).
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NeardupError, nativeCall } from '../util/errors';
import { native } from '../native/addon';

export const STDIO = '-';

const MESSAGES: Record<string, string> = {
  ENOSPC: 'No space left on device', EDQUOT: 'Disk quota exceeded', EPIPE: 'Broken pipe', EACCES: 'Permission denied',
  EROFS: 'Read-only file system', EIO: 'Input/output error', EFBIG: 'File too large', ENOENT: 'No such file or directory',
  EISDIR: 'Is a directory', ENOTDIR: 'Not a directory', EPERM: 'Operation not permitted', ELOOP: 'Too many levels of symbolic links',
  ENAMETOOLONG: 'File name too long', EBADF: 'Bad file descriptor', ENXIO: 'No such device or address',
};

/** "No space left on device (ENOSPC)" for a system error; the message otherwise. */
export function systemMessage(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && MESSAGES[code]) return `${MESSAGES[code]} (${code})`;
  return e instanceof Error ? e.message : String(e);
}

/** A Node system error (has an errno code and a syscall), as opposed to a bug. */
export function isSystemError(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' &&
    typeof (e as NodeJS.ErrnoException).syscall === 'string';
}

function display(file: string): string {
  return file === STDIO ? 'standard output' : `'${file}'`;
}

function ioError(what: string, file: string, e: unknown): NeardupError {
  if (e instanceof NeardupError) return e;
  return new NeardupError('ERR_NEARDUP_IO', `${what} ${display(file)}: ${systemMessage(e)}`, { file, cause: e });
}

// ---------------------------------------------------------------------------------------------------------
// Inputs versus outputs

type Stat = fs.BigIntStats;

function statPath(p: string): Stat | undefined {
  try {
    return fs.statSync(p, { bigint: true });
  } catch {
    return undefined;  // missing (or unreadable): reported when opened or created
  }
}

function statFd(fd: number): Stat | undefined {
  try {
    return fs.fstatSync(fd, { bigint: true });
  } catch {
    return undefined;
  }
}

function sameFile(a: Stat | undefined, b: Stat | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

/** True for '-' and for another name of this process's standard output (/dev/stdout, /proc/self/fd/1). */
export function isStdout(file: string): boolean {
  return file === STDIO || sameFile(statPath(file), statFd(1));
}

export interface FilePlan {
  /** Files read ('-' is standard input). */
  inputs: readonly string[];
  /** Files written, with the option that names them ('-' is standard output). */
  outputs: ReadonlyArray<{ option: string; file: string }>;
  /** The command also prints results on standard output. */
  stdout?: boolean;
  /** Input files an output may replace on purpose (e.g. --load-seen X --save-seen X: read, then replaced). */
  replaceable?: readonly string[];
}

/**
 * Refuses (ERR_NEARDUP_INVALID_ARGUMENT, nothing read or written yet) an output that is one of the inputs
 * or another output. Regular files are compared by device and inode (links followed), so a hard link, a
 * symbolic link or a shell redirection of the input counts as the input.
 */
export function checkFiles(plan: FilePlan): void {
  const inputs: { name: string; st: Stat }[] = [];
  const replaceable = new Set<string>();
  for (const f of plan.replaceable ?? []) {
    const st = statPath(f);
    if (st?.isFile()) replaceable.add(`${st.dev}:${st.ino}`);
  }
  for (const f of plan.inputs) {
    const st = f === STDIO ? statFd(0) : statPath(f);
    if (st?.isFile()) inputs.push({ name: f === STDIO ? 'standard input' : `'${f}'`, st });
  }
  const outputs = plan.outputs.map((o) => ({ ...o, name: `${o.option} ${o.file === STDIO ? '-' : `'${o.file}'`}` }));
  if (plan.stdout) outputs.push({ option: 'standard output', file: STDIO, name: 'standard output' });
  const seen = new Map<string, string>();
  for (const o of outputs) {
    const st = o.file === STDIO ? statFd(1) : statPath(o.file);
    if (st?.isFile()) {
      const key = `${st.dev}:${st.ino}`;
      for (const i of inputs) {
        if (i.st.dev === st.dev && i.st.ino === st.ino && !replaceable.has(key)) {
          throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT',
            `${o.name} is the input ${i.name} (the same file): refusing to overwrite an input; write somewhere else`,
            { file: o.file });
        }
      }
    }
    // Two outputs into one file (or both to standard output) would overwrite or interleave each other.
    let key: string | undefined;
    if (o.file === STDIO || (st && !st.isFile() && sameFile(st, statFd(1)))) key = st?.isFile() ? `${st.dev}:${st.ino}` : 'stdout';
    else if (st?.isFile()) key = `${st.dev}:${st.ino}`;
    else if (!st) key = `path:${path.resolve(resolveTarget(o.file))}`;
    if (key !== undefined) {
      const other = seen.get(key);
      if (other !== undefined)
        throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `${o.name} and ${other} are the same file: give each output its own`, { file: o.file });
      seen.set(key, o.name);
    }
  }
}

/** The file a write to `p` changes: symbolic links followed (a dangling link's target, which will be created). */
export function resolveTarget(p: string): string {
  let cur = p;
  for (let hops = 0; hops <= 40; hops++) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(cur);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return cur;
      throw ioError('cannot open', p, e);
    }
    if (!st.isSymbolicLink()) return cur;
    const link = fs.readlinkSync(cur);
    cur = path.isAbsolute(link) ? link : path.join(path.dirname(cur), link);
  }
  throw new NeardupError('ERR_NEARDUP_IO', `cannot open '${p}': ${MESSAGES.ELOOP} (ELOOP)`, { file: p });
}

// ---------------------------------------------------------------------------------------------------------
// Work folders

/** A path with its folder's symbolic links resolved (as far as the folder exists), the file's own link followed. */
export function realPath(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync(abs);
  } catch { /* not there (yet) */ }
  let dir = path.dirname(abs), rest = path.basename(abs);
  for (;;) {
    try {
      return path.join(fs.realpathSync(dir), rest);
    } catch {
      if (path.dirname(dir) === dir) return abs;
      rest = path.join(path.basename(dir), rest);
      dir = path.dirname(dir);
    }
  }
}

/** Whether `p` is `folder` or inside it (both absolute, links resolved). */
export function isInside(folder: string, p: string): boolean {
  const rel = path.relative(folder, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Refuses an output folder (e.g. passages' -o DIR) that is the work folder or inside it. */
export function checkOutsideWork(work: string, option: string, dir: string): void {
  if (isInside(realPath(work), realPath(dir)))
    throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `${option} '${dir}' is ${realPath(work) === realPath(dir) ? 'the work folder' : `inside the work folder '${work}'`} (the stages own that folder): write the output elsewhere`, { file: dir });
}

// ---------------------------------------------------------------------------------------------------------
// Temporary files, spill folders, cleanup

const liveTemps = new Set<string>();
const liveDirs = new Set<string>();
const nativeTargets = new Set<string>();
/** Spill folders of this process: the descriptor of their LOCK file (closed before the folder is removed). */
const dirLocks = new Map<string, number>();

/** Removes the stale ".NAME.neardup-tmp-PID-RANDOM" files in `dir` (ours only; io::IsStale); best effort. */
export function cleanStaleTemps(dir: string): number {
  return native.cleanStaleTemps(dir);
}

/** Removes the stale "neardup-spill-PID-XXXX" folders in `dir` (ours only; io::IsStale); best effort. */
export function cleanStaleSpill(dir: string): number {
  return native.cleanStaleSpill(dir);
}

/** A spill folder DIR/neardup-spill-PID-XXXXXX of this process, its LOCK file held until removeSpillDir(). */
export function makeSpillDir(parent: string): string {
  cleanStaleSpill(parent);
  let dir: string;
  try {
    dir = fs.mkdtempSync(path.join(parent, `neardup-spill-${process.pid}-`));
  } catch (e) {
    throw ioError('cannot create a temporary folder in', parent, e);
  }
  liveDirs.add(dir);
  try {
    const lock = path.join(dir, 'LOCK');
    const fd = fs.openSync(lock, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    dirLocks.set(dir, fd);
    native.lockTempFile(fd, lock);
  } catch {
    // no lock: sweepers fall back to the PID in the name
  }
  return dir;
}

function closeDirLock(d: string): void {
  const fd = dirLocks.get(d);
  if (fd === undefined) return;
  dirLocks.delete(d);
  try { fs.closeSync(fd); } catch { /* closed */ }
}

const spillParents = new Set<string>();

/**
 * The addon spills into `DIR/neardup-spill-PID-XXXXXX` (io::SpillDir: it removes the folder at the end and
 * the stale ones of dead processes). This makes signals and errors remove this process's folders in DIR
 * too; the returned function does that and stops watching.
 */
export function watchSpillFolders(dir: string): () => void {
  spillParents.add(dir);
  return () => {
    removeOwnSpill(dir);
    spillParents.delete(dir);
  };
}

/** Cleanups of work under way (synchronous, best effort): run by cleanupNow (signals, exit). */
const cleanups = new Set<() => void>();

/** Registers fn to run on SIGINT/SIGTERM/SIGHUP and at exit (CLI); the returned function unregisters it. */
export function addCleanup(fn: () => void): () => void {
  cleanups.add(fn);
  return () => { cleanups.delete(fn); };
}

/** Postings folders whose writer lock this process holds (lib/io/index-commit.ts lockIndex). */
const indexTempDirs = new Map<string, number>();

/**
 * While this process holds the writer lock of an index, the posting store's spill files (neardup-pst-*) in its
 * postings folder are its own: signals and exit remove them too. The returned function stops that.
 */
export function watchIndexTemps(dir: string): () => void {
  indexTempDirs.set(dir, (indexTempDirs.get(dir) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const n = (indexTempDirs.get(dir) ?? 1) - 1;
    if (n > 0) indexTempDirs.set(dir, n);
    else indexTempDirs.delete(dir);
  };
}

function removeIndexTemps(dir: string): void {
  try {
    for (const name of fs.readdirSync(dir))
      if (name.startsWith('neardup-pst-') || name.includes(`.neardup-tmp-${process.pid}-`)) fs.rmSync(path.join(dir, name), { force: true, recursive: true });
  } catch { /* best effort */ }
}

function removeOwnSpill(dir: string): void {
  try {
    for (const name of fs.readdirSync(dir))
      if (name.startsWith(`neardup-spill-${process.pid}-`)) removeSpillDir(path.join(dir, name));
  } catch { /* best effort */ }
}

export function removeSpillDir(d: string): void {
  closeDirLock(d);
  try {
    fs.rmSync(d, { recursive: true, force: true, maxRetries: 3 });
    liveDirs.delete(d);
  } catch {
    // still in use (a native thread finishing): removed again at exit
  }
}

function tempNameFor(target: string): string {
  const base = path.basename(target).slice(0, 100);
  return path.join(path.dirname(target), `.${base}.neardup-tmp-${process.pid}-${randomBytes(8).toString('hex')}`);
}

/** Removes every temporary file and spill folder of this process (signals, errors, exit). Synchronous. */
export function cleanupNow(): void {
  for (const t of liveTemps) {
    try { fs.unlinkSync(t); } catch { /* gone */ }
  }
  liveTemps.clear();
  for (const d of liveDirs) {
    closeDirLock(d);
    try { fs.rmSync(d, { recursive: true, force: true }); } catch { /* best effort */ }
  }
  liveDirs.clear();
  for (const d of spillParents) removeOwnSpill(d);
  for (const fn of cleanups) {
    try { fn(); } catch { /* best effort */ }
  }
  cleanups.clear();
  for (const d of indexTempDirs.keys()) removeIndexTemps(d);
  // Files the addon is writing: ".NAME.neardup-tmp-<our PID>-*" next to each target.
  for (const target of nativeTargets) {
    const prefix = `.${path.basename(target).slice(0, 100)}.neardup-tmp-${process.pid}-`;
    try {
      for (const name of fs.readdirSync(path.dirname(target)))
        if (name.startsWith(prefix)) fs.rmSync(path.join(path.dirname(target), name), { force: true });
    } catch { /* best effort */ }
  }
}

let installed = false;

/**
 * SIGINT/SIGTERM/SIGHUP (a closed terminal or ssh session): remove temporary files and spill folders, exit
 * 130/143/129; on any exit: the same cleanup.
 */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  const on = (code: number) => () => {
    // running native work would otherwise finish its step before the process may exit (minutes, for the
    // counting of a large chunk-similarity build)
    try { native.interrupt(); } catch { /* best effort */ }
    cleanupNow();
    process.exit(code);
  };
  process.on('SIGINT', on(130));
  process.on('SIGTERM', on(143));
  process.on('SIGHUP', on(129));
  process.on('exit', cleanupNow);
}

// ---------------------------------------------------------------------------------------------------------
// Writers

function kindOf(file: string): { kind: 'stdout' } | { kind: 'inplace'; target: string } | { kind: 'atomic'; target: string; st?: fs.Stats } {
  if (file === STDIO) return { kind: 'stdout' };
  // stat() first: the kernel follows every link, /proc's "magic" ones (/dev/stdout) included.
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError('cannot open', file, e);
  }
  if (st?.isDirectory()) throw new NeardupError('ERR_NEARDUP_IO', `cannot write '${file}': ${MESSAGES.EISDIR} (EISDIR)`, { file });
  // Our own standard output by another name (/dev/stdout, /proc/self/fd/1): written through it, which keeps
  // the shell's redirection (> or >>) and works for a socket, which cannot be reopened.
  const out = statFd(1);
  if (st && out && BigInt(st.dev) === out.dev && BigInt(st.ino) === out.ino) return { kind: 'stdout' };
  if (st && !st.isFile()) return { kind: 'inplace', target: file };  // a device, FIFO or socket: written in place
  return { kind: 'atomic', target: resolveTarget(file), st };
}

function writeAll(fd: number, data: Buffer): void {
  let off = 0;
  while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
}

function writeStdout(data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(data, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * An output of a command, written in chunks of about 1 MiB (strings and Buffers alike). The file appears
 * under its name only on commit(); abort() (or an error, or a signal) leaves the previous file untouched.
 */
export class OutputFile {
  private parts: Buffer[] = [];
  private text = '';
  private size = 0;
  private fd = -1;
  private tmp = '';
  private done = false;

  private constructor(
    readonly file: string,
    private readonly kind: 'stdout' | 'inplace' | 'atomic',
    private readonly target: string,
    private mode: number,
    private readonly owner?: { uid: number; gid: number },
  ) {}

  static open(file: string): OutputFile {
    const k = kindOf(file);
    if (k.kind === 'stdout') return new OutputFile(file, 'stdout', '', 0);
    if (k.kind === 'inplace') {
      const o = new OutputFile(file, 'inplace', k.target, 0);
      try {
        o.fd = fs.openSync(k.target, 'w');
      } catch (e) {
        throw ioError('cannot open', file, e);
      }
      return o;
    }
    // A new file gets the mode the OS gives one created with 0666 (the umask applied): the temporary file
    // is created so and its mode read back, then made private while it is written. (Reading the umask by
    // setting it, process.umask(m), throws in a worker thread and changes it for every thread.)
    const o = new OutputFile(file, 'atomic', k.target, k.st ? k.st.mode & 0o7777 : 0, k.st ? { uid: k.st.uid, gid: k.st.gid } : undefined);
    cleanStaleTemps(path.dirname(k.target));
    for (let attempt = 0; ; attempt++) {
      const tmp = tempNameFor(k.target);
      try {
        o.fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, k.st ? 0o600 : 0o666);
        o.tmp = tmp;
        liveTemps.add(tmp);
        if (!k.st) {
          o.mode = fs.fstatSync(o.fd).mode & 0o777;
          fs.fchmodSync(o.fd, 0o600);
        }
        native.lockTempFile(o.fd, tmp);  // in use, for sweepers in any PID namespace (best effort)
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 8) continue;
        throw ioError('cannot create a temporary file for', file, e);
      }
    }
    return o;
  }

  /** Buffers `s`; returns a promise only when the buffer was written out (await it: back-pressure). */
  write(s: string | Buffer): Promise<void> | undefined {
    if (typeof s === 'string') {
      this.text += s;
    } else {
      this.sealText();
      this.parts.push(s);
    }
    this.size += s.length;
    return this.size >= 1 << 20 ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    this.sealText();
    if (this.parts.length === 0) return;
    const data = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    try {
      if (this.kind === 'stdout') await writeStdout(data);
      else writeAll(this.fd, data);
    } catch (e) {
      this.abort();
      throw ioError('cannot write', this.file, e);
    }
  }

  /**
   * Writes what is buffered, then appends the whole file `src` (natively, on a libuv thread: on Linux the
   * kernel copies it); returns its size. The file must not be standard output.
   */
  async appendFile(src: string): Promise<number> {
    await this.flush();
    if (this.kind === 'stdout') throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `${this.file}: cannot append a file to stdout`);
    try {
      if (process.platform !== 'win32') return await nativeCall(native.appendFile(this.fd, this.tmp || this.target, src));
      const buf = Buffer.allocUnsafe(1 << 20), fd = fs.openSync(src, 'r');
      let n = 0;
      try {
        for (let r; (r = fs.readSync(fd, buf, 0, buf.length, null)) > 0; n += r) writeAll(this.fd, buf.subarray(0, r));
      } finally {
        fs.closeSync(fd);
      }
      return n;
    } catch (e) {
      this.abort();
      if (e instanceof NeardupError) throw e;
      throw ioError('cannot write', this.file, e);
    }
  }

  /** Writes what is buffered, then `data` over the file's first bytes (a header known only at the end). */
  async overwriteStart(data: Buffer): Promise<void> {
    await this.flush();
    if (this.kind === 'stdout') throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `${this.file}: cannot rewrite the start of stdout`);
    try {
      for (let at = 0; at < data.length;) at += fs.writeSync(this.fd, data, at, data.length - at, at);
    } catch (e) {
      this.abort();
      throw ioError('cannot write', this.file, e);
    }
  }

  /** Writes what is buffered and puts the file in place (sync, mode, rename, sync of the folder). */
  async commit(): Promise<void> {
    await this.flush();
    if (this.done) return;
    try {
      if (this.kind === 'inplace') {
        fs.closeSync(this.fd);
        this.fd = -1;
      } else if (this.kind === 'atomic') {
        if (this.owner && process.geteuid?.() === 0) fs.fchownSync(this.fd, this.owner.uid, this.owner.gid);
        fs.fchmodSync(this.fd, this.mode);
        fs.fsyncSync(this.fd);
        fs.closeSync(this.fd);
        this.fd = -1;
        fs.renameSync(this.tmp, this.target);
        liveTemps.delete(this.tmp);
        this.tmp = '';
        syncDir(path.dirname(this.target));
      }
    } catch (e) {
      this.abort();
      throw ioError('cannot write', this.file, e);
    }
    this.done = true;
  }

  /** Drops the temporary file (the previous file stays); no-op after commit(). */
  abort(): void {
    this.done = true;
    this.parts = [];
    this.text = '';
    if (this.fd >= 0) {
      try { fs.closeSync(this.fd); } catch { /* already failing */ }
      this.fd = -1;
    }
    if (this.tmp) {
      try { fs.unlinkSync(this.tmp); } catch { /* gone */ }
      liveTemps.delete(this.tmp);
      this.tmp = '';
    }
  }

  private sealText(): void {
    if (this.text) this.parts.push(Buffer.from(this.text));
    this.text = '';
  }
}

function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
  } catch {
    // some file systems cannot sync a folder: the rename is still atomic
  }
}

/**
 * A file written by the addon (io::AtomicFile: links followed, mode kept, temp + rename). For '-' and
 * devices/FIFOs, the addon writes a private temporary file that finish() copies out. `path` is what to give
 * the addon.
 */
/** Writes n lines to `f` in pieces of about 64 KiB (no await per line) and commits it. */
export async function writeLinesTo(f: OutputFile, n: number, line: (i: number) => string): Promise<void> {
  let s = '';
  for (let i = 0; i < n; i++) {
    s += line(i);
    if (s.length >= 1 << 16) {
      await f.write(s);
      s = '';
    }
  }
  await f.write(s);
  await f.commit();
}

export class NativeOutput {
  private constructor(readonly file: string, readonly path: string, private readonly dir: string, private readonly target: string) {}

  static prepare(file: string): NativeOutput {
    const k = kindOf(file);
    if (k.kind === 'atomic') {
      nativeTargets.add(k.target);
      return new NativeOutput(file, file, '', k.target);
    }
    const dir = makeSpillDir(os.tmpdir());
    return new NativeOutput(file, path.join(dir, 'out'), dir, k.kind === 'inplace' ? k.target : '');
  }

  /** After the addon committed: copies a staged file to standard output or the device. */
  async finish(): Promise<void> {
    if (!this.dir) {
      nativeTargets.delete(this.target);
      return;
    }
    try {
      const out = OutputFile.open(this.file);
      try {
        const fd = fs.openSync(this.path, 'r');
        try {
          const buf = Buffer.allocUnsafe(1 << 20);
          for (;;) {
            const k = fs.readSync(fd, buf, 0, buf.length, null);
            if (k === 0) break;
            await out.write(Buffer.from(buf.subarray(0, k)));
          }
        } finally {
          fs.closeSync(fd);
        }
        await out.commit();
      } catch (e) {
        out.abort();
        throw e;
      }
    } finally {
      this.abort();
    }
  }

  /** Removes a staged copy (the addon removes its own temporary file on abort). */
  abort(): void {
    if (this.dir) {
      removeSpillDir(this.dir);
    } else {
      nativeTargets.delete(this.target);
    }
  }
}

/** Runs `write` with the path the addon should write for `file` ('-', devices: staged, then copied out). */
export async function writeNative(file: string, write: (path: string) => Promise<void>): Promise<void> {
  const out = NativeOutput.prepare(file);
  try {
    await write(out.path);
  } catch (e) {
    out.abort();
    throw e;
  }
  await out.finish();
}
