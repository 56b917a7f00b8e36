// go-air/dupi's index, on neardup's posting store: the same documents, blots, posting lists, statistics and
// extract order (test/fixtures/vectors/dupi/README.md is the specification; docs/FORMAT.md section 11 says
// where neardup's output differs on purpose).
//
// An index root holds cfg.json (dupi's configuration, same fields), docs.json (document id -> absolute path,
// start, end; id 0 is dupi's dummy record) and postings/ (a PostingIndex keyed by the reduced blot
// b mod (shards x 65536)).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from './errors';
import { PostingIndex, blot, memorySplit, writeIndexFile, type BlotOptions } from './postings';

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

function readJson<T>(file: string): T {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': ${(e as Error).message}`, { file, cause: e });
  }
  try {
    return JSON.parse(text) as T;
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
 * than 1) skipped. Returns absolute paths (filepath.Abs: joined to the working directory, not resolved). */
export function dupiWalk(root: string): string[] {
  const out: string[] = [];
  const visit = (p: string, name: string) => {
    if (name.startsWith('.') && name.length > 1) return;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${p}': ${(e as Error).message}`, { file: p, cause: e });
    }
    if (st.isDirectory()) {
      const names = fs.readdirSync(p).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      for (const n of names) visit(path.join(p, n), n);
    } else {
      out.push(p);
    }
  };
  const abs = path.resolve(root);
  visit(abs, path.basename(root));
  return out;
}

export class DupiIndex {
  private table?: { data: Buffer; offsets: Uint32Array };
  private constructor(readonly root: string, readonly cfg: DupiConfig, readonly docs: DupiDoc[], private readonly ix: PostingIndex) {}

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

  /** Creates a new index root (fails if it exists, as dupi does). */
  static async create(cfg: DupiConfig): Promise<DupiIndex> {
    const root = cfg.IndexRoot;
    try {
      fs.mkdirSync(root);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `cannot create the index root '${root}': ${(e as Error).message}`, { file: root, cause: e });
    }
    await writeIndexFile(path.join(root, 'cfg.json'), goJson(cfg) + '\n');
    PostingIndex.create(path.join(root, 'postings'));
    const ix = await PostingIndex.open(path.join(root, 'postings'));
    // id 0 is dupi's dummy record: added with the first batch of documents (one segment for one batch)
    await writeIndexFile(path.join(root, 'docs.json'), JSON.stringify([]));
    return new DupiIndex(root, cfg, [], ix);
  }

  static async open(root: string): Promise<DupiIndex> {
    const cfg = readJson<DupiConfig>(path.join(root, 'cfg.json'));
    const docs = readJson<DupiDoc[]>(path.join(root, 'docs.json'));
    const ix = await PostingIndex.open(path.join(root, 'postings'));
    if (ix.info().nextId !== docs.length || docs.length === 0) {
      ix.close();
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${root}': docs.json lists ${docs.length} documents, the postings ${ix.info().nextId}`, { file: root });
    }
    return new DupiIndex(root, cfg, docs, ix);
  }

  /**
   * Adds files (absolute paths) in order, as one new segment built in bounded memory: files are read and
   * blotted in batches (16 MiB, or memory / 8 when memory is capped, at least 1 MiB), and the (blot, doc)
   * pairs are held within the rest of the cap (spilled to sorted runs in tmp beyond it). When the index
   * had documents already, the new segment is merged into the old one.
   */
  async add(files: string[], options: { memory?: number; tmp?: string } = {}): Promise<void> {
    const { batchBytes, buildMemory } = memorySplit(options.memory ?? 0);
    const hadDocs = this.docs.length > 0;
    const app = await this.ix.appender({ memory: buildMemory, tmp: options.tmp, keyBits: Math.ceil(Math.log2(this.modulus)) });
    try {
      // Files are read into one reused buffer (no garbage per file) and passed packed.
      let buf = Buffer.allocUnsafe(batchBytes);
      const offsets: number[] = [0];
      const names: string[] = [];
      if (!hadDocs) {
        offsets.push(0);
        names.push('');  // id 0: dupi's dummy record
      }
      const flush = async () => {
        if (names.length === 0) return;
        const used = offsets[offsets.length - 1];
        const ids = await app.addTexts({ data: buf.subarray(0, used), offsets: Uint32Array.from(offsets) }, { blot: this.blotOptions(), keyModulus: this.modulus });
        ids.forEach((id, i) => {
          if (id !== this.docs.length) throw new NeardupError('ERR_NEARDUP_INTERNAL', `unexpected document id ${id}`);
          this.docs.push({ Path: names[i], Start: 0, End: offsets[i + 1] - offsets[i] });
        });
        offsets.length = 1;
        names.length = 0;
      };
      const ioError = (f: string, e: unknown) => new NeardupError('ERR_NEARDUP_IO', `cannot read '${f}': ${(e as Error).message}`, { file: f, cause: e });
      for (const f of files) {
        let fd: number, size: number;
        try {
          fd = fs.openSync(f, 'r');
        } catch (e) {
          throw ioError(f, e);
        }
        try {
          try {
            size = fs.fstatSync(fd).size;
          } catch (e) {
            throw ioError(f, e);
          }
          if (offsets[offsets.length - 1] + size > buf.length) await flush();
          if (size > buf.length) buf = Buffer.allocUnsafe(size);
          const at = offsets[offsets.length - 1];
          let got = 0;
          try {
            for (let k; got < size && (k = fs.readSync(fd, buf, at + got, size - got, null)) > 0;) got += k;
          } catch (e) {
            throw ioError(f, e);
          }
          offsets.push(at + got);
          names.push(f);
        } finally {
          fs.closeSync(fd);
        }
      }
      await flush();
      await app.commit();
    } catch (e) {
      await app.abort().catch(() => undefined);
      throw e;
    }
    if (hadDocs) await this.ix.merge();
    await writeIndexFile(path.join(this.root, 'docs.json'), JSON.stringify(this.docs));
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
    const r = await blot([data], this.blotOptions());
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
  }
}
