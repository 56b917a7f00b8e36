// go-air/dupi's index, on neardup's posting store: the same documents, blots, posting lists, statistics and
// extract order (test/fixtures/vectors/dupi/README.md is the specification; docs/FORMAT.md section 11 says
// where neardup's output differs on purpose).
//
// An index root holds cfg.json (dupi's configuration, same fields), docs.json (document id -> absolute path,
// start, end; id 0 is dupi's dummy record) and postings/ (a PostingIndex keyed by the reduced blot
// b mod (shards x 65536)), and LOCK (the writer lock). docs.json is committed with the postings
// (lib/io/index-commit.ts: written as docs.json.next, named by the manifest's commit record, then renamed).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError, nativeCall } from '../util/errors';
import { native } from '../native/addon';
import { PostingIndex, blot, memorySplit, writeIndexFile, type BlotOptions, type BlotResult } from './postings';
import { IndexRun, checkAlso, lockIndex, parseRecord, readCommitted } from '../io/index-commit';
import { expectPath } from '../util/validate';

const DOCS = 'docs.json';
const CFG = 'cfg.json';

export interface DupiConfig {
  IndexRoot: string;
  SeqLen: number;
  NumShards: number;
  NumShatters: number;
  DocFlushRate: number;
  TokenConfig: { Name: string };
  BlotConfig: { SeqLen: number; Interleave: number };
}

export interface DupiDoc {
  Path: string;
  Start: number;
  End: number;
}

export interface DupiStats {
  Root: string;
  NumDocs: number;
  NumPaths: number;
  NumPosts: number;
  NumBlots: number;
  BlotMean: number;
  BlotSigma: number;
}

const SHARD_VALUES = 65536;

function readBytes(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': ${(e as Error).message}`, { file, cause: e });
  }
}

function readJson<T>(file: string): T {
  return parseJson<T>(file, readBytes(file));
}

function parseJson<T>(file: string, text: Buffer): T {
  try {
    return JSON.parse(text.toString('utf8')) as T;
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is not valid JSON: ${(e as Error).message}`, { file, cause: e });
  }
}

/** Go's encoding/json string escaping of <, > and & (HTML-safe), applied to JSON.stringify output. */
export function goJson(value: unknown): string {
  return JSON.stringify(value, null, '\t')
    .replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** dupi's `index` walk (Go filepath.WalkDir): byte-wise sorted entries, names starting with '.' (longer
 * than 1) skipped. Returns absolute paths (filepath.Abs: joined to the working directory, not resolved).
 * As WalkDir, the entries' types come from the directory listing (a symbolic link is not followed), so only
 * the root is stat'ed. */
export function dupiWalk(root: string): string[] {
  const out: string[] = [];
  const fail = (p: string, e: unknown) => new NeardupError('ERR_NEARDUP_IO', `cannot read '${p}': ${(e as Error).message}`, { file: p, cause: e });
  const visitDir = (p: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(p, { withFileTypes: true });
    } catch (e) {
      throw fail(p, e);
    }
    sortByUtf8(entries);
    // p is absolute and normalised, and a listed name is neither '.', '..' nor holds a separator: joined as is
    const dir = p.endsWith(path.sep) ? p : p + path.sep;
    for (const d of entries) {
      if (d.name.startsWith('.') && d.name.length > 1) continue;
      if (d.isDirectory()) visitDir(dir + d.name);
      else out.push(dir + d.name);
    }
  };
  const abs = path.resolve(root);
  const name = path.basename(root);
  if (name.startsWith('.') && name.length > 1) return out;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch (e) {
    throw fail(abs, e);
  }
  if (st.isDirectory()) visitDir(abs);
  else out.push(abs);
  return out;
}

/** Sorts entries by the UTF-8 bytes of their names (Go's order). UTF-16 order is the same unless a name holds
 * a character from U+D800 up (a surrogate sorts below U+E000..U+FFFF in UTF-16, above them in UTF-8). */
function sortByUtf8(entries: fs.Dirent[]): void {
  if (!entries.some((d) => /[\uD800-\uFFFF]/.test(d.name))) {
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return;
  }
  const keys = new Map(entries.map((d) => [d, Buffer.from(d.name)]));
  entries.sort((a, b) => Buffer.compare(keys.get(a)!, keys.get(b)!));
}

export class DupiIndex {
  private table?: { data: Buffer; offsets: Uint32Array };
  /** Releases the writer lock: set while this object holds it (create, open for writing, or during add). */
  private release?: () => void;
  private constructor(readonly root: string, readonly cfg: DupiConfig, public docs: DupiDoc[], private ix: PostingIndex) {}

  get shards(): number { return this.cfg.NumShards; }
  get modulus(): number { return this.cfg.NumShards * SHARD_VALUES; }

  static blotOptionsOf(cfg: DupiConfig): BlotOptions {
    return { profile: 'dupi', hash: 'xor', seqLen: cfg.BlotConfig.SeqLen, interleave: cfg.BlotConfig.Interleave };
  }
  blotOptions(): BlotOptions { return DupiIndex.blotOptionsOf(this.cfg); }

  /** dupi's NewConfig + check: shards, seqLen (index -t) and an optional full config (index -c). */
  static makeConfig(root: string, shards: number, seqLen: number, shatters: number, cfgFile?: string): DupiConfig {
    let cfg: DupiConfig;
    if (cfgFile !== undefined) {
      cfg = readJson<DupiConfig>(cfgFile);
    } else {
      cfg = {
        IndexRoot: path.resolve(root), SeqLen: seqLen, NumShards: shards, NumShatters: shatters, DocFlushRate: 16384,
        TokenConfig: { Name: 'words.simple' }, BlotConfig: { SeqLen: 10, Interleave: 1 },
      };
    }
    const b = cfg.BlotConfig ?? { SeqLen: 10, Interleave: 1 };
    if (!(Number.isInteger(cfg.NumShards) && cfg.NumShards >= 1 && cfg.NumShards <= 1024)) {
      throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `invalid number of shards: ${cfg.NumShards}`);
    }
    if (!(b.SeqLen >= 1 && b.Interleave >= 1) || cfg.SeqLen !== b.SeqLen * b.Interleave) {
      throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', 'inconsistent sequence config');
    }
    return cfg;
  }

  /** Creates a new index root (fails if it exists, as dupi does); the object holds its writer lock until close(). */
  static async create(cfg: DupiConfig): Promise<DupiIndex> {
    const root = expectPath(cfg.IndexRoot, 'IndexRoot');
    try {
      fs.mkdirSync(root);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `cannot create the index root '${root}': ${(e as Error).message}`, { file: root, cause: e });
    }
    const release = lockIndex(root, path.join(root, 'postings'), 'dupi index');
    try {
      await writeIndexFile(path.join(root, CFG), goJson(cfg) + '\n');
      PostingIndex.create(path.join(root, 'postings'));
      const ix = await PostingIndex.open(path.join(root, 'postings'));
      // id 0 is dupi's dummy record: added with the first batch of documents (one segment for one batch)
      await writeIndexFile(path.join(root, DOCS), JSON.stringify([]));
      const d = new DupiIndex(root, cfg, [], ix);
      d.release = release;
      return d;
    } catch (e) {
      release();
      throw e;
    }
  }

  /** Opens an index root; with writer, holding its writer lock until close() (a second writer is refused). */
  static async open(root: string, options: { writer?: boolean } = {}): Promise<DupiIndex> {
    expectPath(root, 'root');
    const release = options.writer ? lockIndex(root, path.join(root, 'postings'), 'dupi index -a') : undefined;
    try {
      const { cfg, docs, ix } = await DupiIndex.load(root, options.writer === true);
      const d = new DupiIndex(root, cfg, docs, ix);
      d.release = release;
      return d;
    } catch (e) {
      release?.();
      throw e;
    }
  }

  /**
   * The committed state of root: the postings and the docs.json their manifest's commit record names (docs.json,
   * or docs.json.next after a run that died between its commit and that file's rename, which a writer finishes).
   */
  private static async load(root: string, writer: boolean): Promise<{ cfg: DupiConfig; docs: DupiDoc[]; ix: PostingIndex }> {
    const cfgFile = path.join(root, CFG);
    const cfgBytes = readBytes(cfgFile);
    const cfg = parseJson<DupiConfig>(cfgFile, cfgBytes);
    const ix = await PostingIndex.open(path.join(root, 'postings'));
    try {
      const file = path.join(root, DOCS);
      const record = parseRecord(ix.commitData(), path.join(root, 'postings', 'MANIFEST'), DOCS);
      // cfg.json keeps dupi's layout (no field of ours): its CRC-32C rides in the commit record
      checkAlso(record, root, CFG, cfgBytes);
      const docs = record ? parseJson<DupiDoc[]>(file, readCommitted(root, DOCS, record, writer)) : readJson<DupiDoc[]>(file);
      const held = ix.info().nextId;
      if (!Array.isArray(docs) || held !== docs.length || docs.length === 0)
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${root}': docs.json lists ${Array.isArray(docs) ? docs.length : 'no'} documents, the postings ${held}`, { file: root });
      return { cfg, docs, ix };
    } catch (e) {
      ix.close();
      throw e;
    }
  }

  /**
   * Adds files (absolute paths) in order, as one new segment built in bounded memory: files are read and
   * blotted in batches (16 MiB, or memory / 8 when memory is capped, at least 1 MiB), and the (blot, doc)
   * pairs are held within the rest of the cap (spilled to sorted runs in tmp beyond it). When the index
   * had documents already, the new segment is merged into the old one.
   */
  async add(files: string[], options: { memory?: number; tmp?: string } = {}): Promise<void> {
    if (options.tmp !== undefined) expectPath(options.tmp, 'tmp');
    files.forEach((f, i) => expectPath(f, `files[${i}]`));
    if (this.release) return this.addFiles(files, options);
    // a reader's add: under the lock, from the state committed now
    const release = lockIndex(this.root, path.join(this.root, 'postings'), 'dupi index -a');
    this.release = release;
    try {
      const { docs, ix } = await DupiIndex.load(this.root, true);
      this.ix.close();
      this.ix = ix;
      this.docs = docs;
      this.table = undefined;
      return await this.addFiles(files, options);
    } finally {
      this.release = undefined;
      release();
    }
  }

  private async addFiles(files: string[], options: { memory?: number; tmp?: string }): Promise<void> {
    const { batchBytes, buildMemory } = memorySplit(options.memory ?? 0);
    const before = this.docs.length, generation = this.ix.info();
    const committed = () => this.ix.info().nextId !== generation.nextId;
    const hadDocs = this.docs.length > 0;
    const app = await this.ix.appender({ memory: buildMemory, tmp: options.tmp, keyBits: Math.ceil(Math.log2(this.modulus)) });
    const job = new IndexRun(this.root, path.join(this.root, 'postings'), DOCS, [], 'dupi', { [CFG]: readBytes(path.join(this.root, CFG)) });
    try {
      // Files are read whole on a libuv thread (native readFilesInto) into one of two batch buffers while the
      // documents of the other are blotted and added: no garbage per file, and the reading overlaps the
      // blotting (memorySplit sets aside 20 batches for the batches in flight).
      const bufs = [Buffer.allocUnsafe(batchBytes), Buffer.allocUnsafe(batchBytes)];
      let dummy = !hadDocs;  // id 0: dupi's dummy record, an empty document before the first file
      const add = async (buf: Buffer, ends: Uint32Array, names: string[]) => {
        const offsets = new Uint32Array(ends.length + (dummy ? 2 : 1));
        offsets.set(ends, dummy ? 2 : 1);
        if (dummy) names = ['', ...names];
        dummy = false;
        const ids = await app.addTexts({ data: buf.subarray(0, offsets[offsets.length - 1]), offsets }, { blot: this.blotOptions(), keyModulus: this.modulus });
        ids.forEach((id, i) => {
          if (id !== this.docs.length) throw new NeardupError('ERR_NEARDUP_INTERNAL', `unexpected document id ${id}`);
          this.docs.push({ Path: names[i], Start: 0, End: offsets[i + 1] - offsets[i] });
        });
      };
      // Each call is given the next `ask` paths (converting a path costs, so not all of them): twice what the
      // last batch took, as batches hold similar numbers of files.
      let done = 0, cur = 0, ask = 256;
      // A read runs while the previous batch is added: its failure is handled (no unhandled rejection ending the
      // process) and reported when it is awaited; if adding fails first, that error is the one reported.
      const read = (buf: Buffer) => {
        const p = nativeCall(native.readFilesInto(files.slice(done, done + ask), buf));
        p.catch(() => undefined);
        return p;
      };
      let reading = files.length > 0 ? read(bufs[0]) : undefined;
      while (reading !== undefined) {
        const r = await reading;
        reading = undefined;
        if (r.files === 0) {
          if (r.need === 0) throw new NeardupError('ERR_NEARDUP_CANCELLED', 'reading the files was interrupted');
          bufs[cur] = Buffer.allocUnsafe(r.need);  // a file larger than a buffer: a buffer of its size
          reading = read(bufs[cur]);
          continue;
        }
        const names = files.slice(done, done + r.files);
        done += r.files;
        ask = Math.max(64, 2 * r.files);
        if (done < files.length) reading = read(bufs[cur ^ 1]);
        await add(bufs[cur], r.ends, names);
        cur ^= 1;
      }
      if (dummy) await add(bufs[0], new Uint32Array(0), []);
      // the new docs.json as docs.json.next, then the postings committed with its record: the commit point
      await job.commit(Buffer.from(JSON.stringify(this.docs)), (record) => app.commit(record));
    } catch (e) {
      await app.abort().catch(() => undefined);
      if (!committed()) this.docs.length = before;
      throw e;
    } finally {
      job.end();
    }
    this.table = undefined;
    if (hadDocs) await this.ix.merge();
  }

  /** Number of nodes of dupi's path trie: the root plus every distinct absolute path prefix. */
  numPaths(): number {
    const seen = new Set<string>();
    for (let i = 1; i < this.docs.length; i++) {
      const parts = this.docs[i].Path.split('/').filter((p) => p !== '');
      let pre = '';
      for (const p of parts) {
        pre += '/' + p;
        seen.add(pre);
      }
    }
    return 1 + seen.size;
  }

  async stats(): Promise<DupiStats> {
    const r = await this.ix.dupiOrder(this.shards, 0);
    return {
      Root: this.cfg.IndexRoot, NumDocs: this.docs.length, NumPaths: this.numPaths(), NumPosts: r.posts,
      NumBlots: this.shards * SHARD_VALUES, BlotMean: r.mean, BlotSigma: r.sigma,
    };
  }

  /**
   * dupi's extract order (native, postings::DupiExtractOrder): per shard the values sorted by count (Go
   * 1.19 sort.Slice, descending), merged by count (ties: lowest shard); blots with <= 1 doc skipped; stops
   * at the first blot with fewer than round(mean + sigma * sd) docs. Yields reduced blots.
   */
  async extractOrder(sigma: number): Promise<number[]> {
    return Array.from((await this.ix.dupiOrder(this.shards, sigma)).order);
  }

  /** Posting lists of reduced blots (any 32-bit value H is looked up as dupi's FindBlot does). */
  async lookup(blots: number[]): Promise<number[][]> {
    const n = this.shards;
    const keys = blots.map((h) => (Math.floor(h / n) % SHARD_VALUES) * n + (h % n));
    const r = await this.ix.lookup(keys);
    return blots.map((_, i) => Array.from(r.docs.subarray(r.offsets[i], r.offsets[i + 1])));
  }

  /** Blots one document as this index does: reduced blots, text ranges (dupi's 11 words), -offsets ranges. */
  async blotFile(data: Uint8Array): Promise<{ blots: number[]; text: Array<[number, number]>; offsets: Array<[number, number]> }> {
    const r = (await blot([data], this.blotOptions())) as BlotResult;  // (dupi: 32-bit blots)
    const m = this.modulus;
    return {
      blots: Array.from(r.blots, (b) => b % m),
      text: Array.from(r.textBegins, (b, i) => [b, r.textEnds[i]] as [number, number]),
      offsets: Array.from(r.tokenBegins, (b, i) => [b, r.tokenEnds[i]] as [number, number]),
    };
  }

  /**
   * Writes dupi's extract lines of reduced blots ("<blot hex> <path>@<start>:<end> ...\n") through write(),
   * formatted natively into one reused 4 MiB buffer (grown for a longer line); write() must be done with
   * the bytes when its promise resolves.
   */
  async writeExtractLines(blots: number[], write: (bytes: Uint8Array) => Promise<void>): Promise<void> {
    if (!this.table) {
      const rows = this.docs.map((d) => `${d.Path}@${d.Start}:${d.End}`);
      const offsets = new Uint32Array(rows.length + 1);
      rows.forEach((r, i) => { offsets[i + 1] = offsets[i] + Buffer.byteLength(r); });
      this.table = { data: Buffer.from(rows.join('')), offsets };
    }
    const keys = Uint32Array.from(blots);
    let out = Buffer.allocUnsafe(4 << 20);
    for (let at = 0; at < keys.length;) {
      const r = await this.ix.formatLists(keys, this.table.data, this.table.offsets, out, at);
      if (r.bytes > 0) await write(out.subarray(0, r.bytes));
      if (r.need > 0) out = Buffer.allocUnsafe(r.need);
      at = r.next;
    }
  }

  readDoc(id: number): Buffer {
    const d = this.docs[id];
    try {
      return fs.readFileSync(d.Path);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${d.Path}': ${(e as Error).message}`, { file: d.Path, cause: e });
    }
  }

  close(): void {
    this.ix.close();
    const release = this.release;
    this.release = undefined;
    release?.();
  }
}
