// Shared passages for new users: a folder holding a PostingIndex of blots (neardup profile) plus the indexed
// documents' texts, so results can name each document's matching bytes (docs/FORMAT.md section 11).
//
//   DIR/passages.json   {"version":1,"seqLen":10,"hash":"ordered","batches":[{"texts","docs","first","count"}]}
//   DIR/texts-K.bin     the UTF-8 texts of batch K back to back
//   DIR/docs-K.jsonl    one line per document of batch K: {"n": internal id, "id": the user's id, "offset", "length"}
//   DIR/postings/       the PostingIndex (key = 32-bit blot, doc = internal id)
// Batch files are written before the postings, and passages.json (temporary name + rename) last, so an
// interrupted `index` leaves the previous index readable.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError, invalidArgument } from './errors';
import { expectArray, expectInt, expectNumber, expectString, optionsObject } from './validate';
import { PostingIndex, blot, writeIndexFile, type BlotOptions, type WindowHash } from './postings';

export interface PassageIndexOptions {
  /** Words per window. Default 10. */
  seqLen?: number;
  /** Window hash. Default 'ordered'. */
  hash?: WindowHash;
}

interface Meta {
  version: 1;
  seqLen: number;
  hash: WindowHash;
  batches: Array<{ texts: string; docs: string; first: number; count: number }>;
}

export interface PassageDoc {
  /** The document's id (the --id-field value, or its input position "file:line"). */
  id: unknown;
  begin: number;
  end: number;
  text: string;
}

export interface Passage {
  blot: string;
  count: number;
  docs: PassageDoc[];
}

export interface PairSummary {
  a: unknown;
  b: unknown;
  /** Distinct windows the two documents share. */
  shared: number;
  /** Fraction of each document's bytes inside its shared windows. */
  coverA: number;
  coverB: number;
}

export interface QueryMatch {
  id: unknown;
  /** Distinct windows shared with the query document. */
  shared: number;
  /** Merged byte ranges of the shared windows, in the query document and in the indexed one. */
  querySpans: Array<[number, number]>;
  docSpans: Array<[number, number]>;
}


function mergeSpans(spans: Array<[number, number]>): Array<[number, number]> {
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: Array<[number, number]> = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
    else out.push([s[0], s[1]]);
  }
  return out;
}

export class PassageIndex {
  private ids: unknown[] = [];
  private where: Array<{ batch: number; offset: number; length: number }> = [];
  private fds = new Map<number, number>();
  private blotCache = new Map<number, { blots: Uint32Array; begins: Uint32Array; ends: Uint32Array }>();

  private constructor(readonly dir: string, private meta: Meta, private readonly ix: PostingIndex) {}

  get blotOptions(): BlotOptions {
    return { profile: 'neardup', hash: this.meta.hash, seqLen: this.meta.seqLen };
  }

  /** Opens DIR, or creates it with options when it holds no index. */
  static async open(dir: string, options: PassageIndexOptions = {}, create = false): Promise<PassageIndex> {
    expectString(dir, 'dir');
    optionsObject(options);
    if (typeof create !== 'boolean') throw invalidArgument(TypeError, `Expected create to be a boolean, got ${typeof create}`);
    const metaFile = path.join(dir, 'passages.json');
    if (!fs.existsSync(metaFile)) {
      if (!create) throw new NeardupError('ERR_NEARDUP_IO', `'${dir}' holds no passage index (no passages.json)`, { file: metaFile });
      fs.mkdirSync(dir, { recursive: true });
      const meta: Meta = { version: 1, seqLen: options.seqLen ?? 10, hash: options.hash ?? 'ordered', batches: [] };
      if (!fs.existsSync(path.join(dir, 'postings', 'MANIFEST'))) PostingIndex.create(path.join(dir, 'postings'));
      await writeIndexFile(metaFile, JSON.stringify(meta) + '\n');
    }
    let meta: Meta;
    try {
      meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as Meta;
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `cannot read '${metaFile}': ${(e as Error).message}`, { file: metaFile, cause: e });
    }
    if (meta.version !== 1) throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `'${metaFile}': version ${meta.version} is not supported`, { file: metaFile });
    if ((options.seqLen !== undefined && options.seqLen !== meta.seqLen) || (options.hash !== undefined && options.hash !== meta.hash)) {
      throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `'${dir}' was built with --window ${meta.seqLen} --hash ${meta.hash}`);
    }
    const ix = await PostingIndex.open(path.join(dir, 'postings'));
    const p = new PassageIndex(dir, meta, ix);
    meta.batches.forEach((b, k) => {
      const file = path.join(dir, b.docs);
      const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
      lines.forEach((l, i) => {
        const d = JSON.parse(l) as { n: number; id: unknown; offset: number; length: number };
        if (d.n !== p.ids.length) throw new NeardupError('ERR_NEARDUP_CORRUPT', `${file}:${i + 1}: document number ${d.n}, expected ${p.ids.length}`, { file, line: i + 1 });
        p.ids.push(d.id);
        p.where.push({ batch: k, offset: d.offset, length: d.length });
      });
    });
    if (ix.info().nextId !== p.ids.length) {
      p.close();
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${dir}': the postings hold ${ix.info().nextId} documents, the document lists ${p.ids.length}`, { file: dir });
    }
    return p;
  }

  get size(): number { return this.ids.length; }

  /** Adds documents (texts as UTF-8 bytes). */
  async add(docs: Array<{ id: unknown; text: Buffer }>, options: { memory?: number; tmp?: string } = {}): Promise<void> {
    expectArray(docs, 'docs');
    docs.forEach((d, i) => {
      if (d === null || typeof d !== 'object' || !(d.text instanceof Uint8Array))
        throw invalidArgument(TypeError, `Expected docs[${i}] to be { id, text: Buffer }`);
    });
    const o = optionsObject(options);
    if (o.memory !== undefined) expectInt(o.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
    if (o.tmp !== undefined) expectString(o.tmp, 'tmp');
    if (docs.length === 0) return;
    const k = this.meta.batches.length + 1;
    const names = { texts: `texts-${k}.bin`, docs: `docs-${k}.jsonl` };
    const first = this.ids.length;
    let off = 0;
    const lines: string[] = [];
    const offsets: number[] = [];
    docs.forEach((d, i) => {
      offsets.push(off);
      lines.push(JSON.stringify({ n: first + i, id: d.id, offset: off, length: d.text.length }));
      off += d.text.length;
    });
    await writeIndexFile(path.join(this.dir, names.texts), Buffer.concat(docs.map((d) => d.text)));
    await writeIndexFile(path.join(this.dir, names.docs), lines.join('\n') + '\n');
    const got = await this.ix.appendTexts(docs.map((d) => d.text), { blot: this.blotOptions, memory: options.memory, tmp: options.tmp });
    if (got.length !== docs.length || got[0] !== first) throw new NeardupError('ERR_NEARDUP_INTERNAL', 'unexpected document numbers');
    this.meta.batches.push({ ...names, first, count: docs.length });
    await writeIndexFile(path.join(this.dir, 'passages.json'), JSON.stringify(this.meta) + '\n');
    docs.forEach((d, i) => {
      this.ids.push(d.id);
      this.where.push({ batch: k - 1, offset: offsets[i], length: d.text.length });
    });
  }

  /** Rewrites the postings as one segment. */
  merge(): Promise<void> {
    return this.ix.merge();
  }

  text(n: number): Buffer {
    expectInt(n, 'n', 0, Math.max(0, this.ids.length - 1));
    if (this.ids.length === 0) throw invalidArgument(RangeError, 'the index holds no document');
    const w = this.where[n];
    let fd = this.fds.get(w.batch);
    if (fd === undefined) {
      fd = fs.openSync(path.join(this.dir, this.meta.batches[w.batch].texts), 'r');
      this.fds.set(w.batch, fd);
    }
    const b = Buffer.alloc(w.length);
    if (w.length > 0 && fs.readSync(fd, b, 0, w.length, w.offset) !== w.length) {
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${this.meta.batches[w.batch].texts}' is shorter than its document list says`, { file: this.meta.batches[w.batch].texts });
    }
    return b;
  }

  private async blotsOf(n: number) {
    let e = this.blotCache.get(n);
    if (!e) {
      const r = await blot([this.text(n)], this.blotOptions);
      e = { blots: r.blots, begins: r.textBegins, ends: r.textEnds };
      if (this.blotCache.size > 4096) this.blotCache.clear();
      this.blotCache.set(n, e);
    }
    return e;
  }

  /**
   * The windows shared by the most documents first (count descending, then blot ascending), down to
   * max(minDocs, round(mean + sigma * sd)) documents, mean and sd taken over the counts of all indexed
   * windows (dupi's cut-off, over the keys that occur). Each document's first occurrence is given.
   */
  async *extract(options: { sigma?: number; minDocs?: number; limit?: number } = {}): AsyncGenerator<Passage> {
    const o = optionsObject(options);
    if (o.sigma !== undefined) expectNumber(o.sigma, 'sigma', -1e6, 1e6);
    if (o.minDocs !== undefined) expectInt(o.minDocs, 'minDocs', 0, 0xffffffff);
    if (o.limit !== undefined) expectInt(o.limit, 'limit', 0, Number.MAX_SAFE_INTEGER);
    const { keys, counts } = (await this.ix.keyCounts()) as { keys: Uint32Array; counts: Uint32Array };
    let sum = 0;
    for (let i = 0; i < counts.length; i++) sum += counts[i];
    const mean = counts.length ? sum / counts.length : 0;
    let sos = 0;
    for (let i = 0; i < counts.length; i++) sos += (counts[i] - mean) * (counts[i] - mean);
    const sd = counts.length ? Math.sqrt(sos / counts.length) : 0;
    const threshold = Math.max(options.minDocs ?? 2, Math.round(mean + (options.sigma ?? 2) * sd));
    const order: number[] = [];
    for (let i = 0; i < keys.length; i++) if (counts[i] >= threshold) order.push(i);
    order.sort((a, b) => counts[b] - counts[a] || keys[a] - keys[b]);
    const limit = options.limit ?? Infinity;
    for (let i = 0; i < order.length && i < limit; i += 256) {
      const chunk = order.slice(i, Math.min(i + 256, order.length, limit)).map((j) => keys[j]);
      const r = await this.ix.lookup(chunk);
      for (let c = 0; c < chunk.length; c++) {
        const docs: PassageDoc[] = [];
        for (const n of r.docs.subarray(r.offsets[c], r.offsets[c + 1])) {
          const e = await this.blotsOf(n);
          const j = e.blots.indexOf(chunk[c]);
          if (j < 0) continue;
          const t = this.text(n);
          docs.push({ id: this.ids[n], begin: e.begins[j], end: e.ends[j], text: t.subarray(e.begins[j], e.ends[j]).toString('utf8') });
        }
        yield { blot: chunk[c].toString(16).padStart(8, '0'), count: docs.length, docs };
      }
    }
  }

  /** For each query text: the indexed documents sharing at least minShared windows with it, most first. */
  async query(texts: Buffer[], options: { minShared?: number } = {}): Promise<QueryMatch[][]> {
    expectArray(texts, 'texts');
    texts.forEach((t, i) => { if (!(t instanceof Uint8Array)) throw invalidArgument(TypeError, `Expected texts[${i}] to be a Buffer`); });
    if (optionsObject(options).minShared !== undefined) expectInt(options.minShared, 'minShared', 1, 0xffffffff);
    const minShared = options.minShared ?? 1;
    const q = await blot(texts, this.blotOptions);
    const out: QueryMatch[][] = [];
    for (let i = 0; i < texts.length; i++) {
      const a = q.docOffsets[i], b = q.docOffsets[i + 1];
      const blots = q.blots.subarray(a, b);
      const r = await this.ix.lookup(blots);
      const per = new Map<number, { set: Set<number>; spans: Array<[number, number]> }>();
      for (let j = 0; j < blots.length; j++) {
        for (const n of r.docs.subarray(r.offsets[j], r.offsets[j + 1])) {
          let e = per.get(n);
          if (!e) per.set(n, (e = { set: new Set(), spans: [] }));
          e.set.add(blots[j]);
          e.spans.push([q.textBegins[a + j], q.textEnds[a + j]]);
        }
      }
      const matches: QueryMatch[] = [];
      for (const [n, e] of per) {
        if (e.set.size < minShared) continue;
        const d = await this.blotsOf(n);
        const ds: Array<[number, number]> = [];
        for (let k = 0; k < d.blots.length; k++) if (e.set.has(d.blots[k])) ds.push([d.begins[k], d.ends[k]]);
        matches.push({ id: this.ids[n], shared: e.set.size, querySpans: mergeSpans(e.spans), docSpans: mergeSpans(ds) });
      }
      matches.sort((x, y) => y.shared - x.shared);
      out.push(matches);
    }
    return out;
  }

  /**
   * Pairs of documents sharing at least minShared distinct windows: the count and the fraction of each
   * document's bytes covered by the shared windows. Windows held by more than maxDocs documents are not used
   * to form pairs (boilerplate; their pair count is quadratic) but still count once a pair is found.
   */
  async pairs(options: { minShared?: number; maxDocs?: number } = {}): Promise<PairSummary[]> {
    const po = optionsObject(options);
    if (po.minShared !== undefined) expectInt(po.minShared, 'minShared', 1, 0xffffffff);
    if (po.maxDocs !== undefined) expectInt(po.maxDocs, 'maxDocs', 1, 0xffffffff);
    const minShared = options.minShared ?? 1;
    const maxDocs = options.maxDocs ?? 1000;
    const { keys, counts } = (await this.ix.keyCounts()) as { keys: Uint32Array; counts: Uint32Array };
    const use: number[] = [];
    for (let i = 0; i < keys.length; i++) if (counts[i] >= 2 && counts[i] <= maxDocs) use.push(keys[i]);
    const pairCount = new Map<number, number>();
    for (let i = 0; i < use.length; i += 4096) {
      const r = await this.ix.lookup(use.slice(i, i + 4096));
      for (let c = 0; c + 1 < r.offsets.length; c++) {
        const list = r.docs.subarray(r.offsets[c], r.offsets[c + 1]);
        for (let x = 0; x < list.length; x++) {
          for (let y = x + 1; y < list.length; y++) {
            const k = list[x] * 4294967296 + list[y];
            pairCount.set(k, (pairCount.get(k) ?? 0) + 1);
          }
        }
      }
    }
    const out: PairSummary[] = [];
    for (const [k, n] of pairCount) {
      if (n < minShared) continue;
      const a = Math.floor(k / 4294967296), b = k % 4294967296;
      const da = await this.blotsOf(a), db = await this.blotsOf(b);
      const sa = new Set(da.blots), sb = new Set(db.blots);
      let shared = 0;
      for (const x of sa) if (sb.has(x)) shared++;
      const cover = (d: typeof da, other: Set<number>, len: number) => {
        const spans: Array<[number, number]> = [];
        for (let j = 0; j < d.blots.length; j++) if (other.has(d.blots[j])) spans.push([d.begins[j], d.ends[j]]);
        const bytes = mergeSpans(spans).reduce((t, s) => t + s[1] - s[0], 0);
        return len ? bytes / len : 0;
      };
      out.push({ a: this.ids[a], b: this.ids[b], shared, coverA: cover(da, sb, this.where[a].length), coverB: cover(db, sa, this.where[b].length) });
    }
    out.sort((x, y) => y.shared - x.shared);
    return out;
  }

  close(): void {
    for (const fd of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
    this.ix.close();
  }
}
