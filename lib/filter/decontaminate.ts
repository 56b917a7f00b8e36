// Benchmark decontamination (docs/decontaminate.md): an index of the word n-grams of benchmark rows
// (DecontaminationIndex; core: native/core/filter/decontam.h), filled from benchmark files (JSONL, Parquet,
// plain text one row per line: addBenchmarkFiles) and probed with batches of corpus documents on the native
// pool. Exact by default (128-bit keys, each naming the rows that hold it), approximate with `approx` (the
// blocked Bloom chain of the paragraph filter's seen-set: no false negatives, no rows). Imports io/, native/,
// util/ only.
import { NeardupError, fromNative, invalidArgument } from '../util/errors';
import { expectArray, expectString, expectTexts, optionsObject } from '../util/validate';
import { native, type NativeDecontamIndex, type NativeDecontamProbe, type TextInput } from '../native/addon';
import { readDocuments, sniffFile, displayName } from '../io/input';
import { openInput, readLines } from '../io/jsonl';

export interface DecontaminationOptions {
  /** n-gram length in word tokens (default 13). */
  n?: number;
  /**
   * The fewest tokens a text is matched by as a whole when it is shorter than n (default 8, at most n; n:
   * n-grams only). A benchmark row of minTokens..n-1 tokens is found where it occurs whole; a document of
   * that length where it occurs whole in a benchmark text. Texts under minTokens tokens are never matched.
   */
  minTokens?: number;
  /** A Bloom chain instead of the exact table: much smaller, no false negatives, no benchmark rows. */
  approx?: boolean;
  /** approx: the false-positive bound of each of its two sets (default 1e-8). */
  fpRate?: number;
}

export interface DecontaminationProbeOptions {
  /** 0 for a slot to skip (a bad line): its counts are all 0. One entry per text. */
  valid?: Uint8Array;
  /** Benchmark rows listed per document (default 16; rowsTotal counts them all). */
  maxRows?: number;
  /** Matched n-grams given as text per document (default 3). */
  maxSamples?: number;
}

/** The flat result of a probe: per document (Uint32Arrays of one entry each), rows and samples as CSR lists. */
export type DecontaminationProbe = NativeDecontamProbe;

/** One contaminated document of a probe. */
export interface Contamination {
  /** Its position in the probed batch. */
  index: number;
  /** Tokens after normalisation. */
  tokens: number;
  /** n-gram positions (tokens - n + 1; 1 for a document of minTokens..n-1 tokens, its whole; else 0). */
  ngrams: number;
  /** Of those, found in the benchmark. */
  matched: number;
  /** Occurrences of benchmark rows shorter than n tokens. */
  shortFound: number;
  /** Tokens inside any matched span. */
  covered: number;
  /** covered / tokens: the fraction of the document that matches the benchmark. */
  overlap: number;
  /** Global benchmark rows (the first maxRows, ascending; none in approx mode). */
  rows: number[];
  rowsTotal: number;
  /** Matched n-grams as normalised text. */
  samples: string[];
}

export interface DecontaminationStats {
  /** Distinct keys (approx: insertions). */
  keys: number;
  /** Benchmark texts added. */
  texts: number;
  memoryBytes: number;
  /** Lengths (tokens) of the benchmark's short rows, each probed as its own n-gram length. */
  shortLengths: number[];
  /** approx: the false-positive bound of a probe; exact: 0. */
  fpBound: number;
  sealed: boolean;
}

/**
 * The benchmark side: add() benchmark texts with their rows, seal(), then probe() corpus batches. Calls run
 * in order; probes after seal() may run side by side.
 */
export class DecontaminationIndex {
  private handle: NativeDecontamIndex | null;
  readonly n: number;
  readonly minTokens: number;
  readonly approx: boolean;

  constructor(options: DecontaminationOptions = {}) {
    optionsObject(options);
    try {
      this.handle = new native.DecontamIndex(options);
    } catch (e) {
      throw fromNative(e);
    }
    this.n = options.n ?? 13;
    this.minTokens = options.minTokens ?? Math.min(8, this.n);
    this.approx = Boolean(options.approx);
  }

  private live(): NativeDecontamIndex {
    if (!this.handle) throw new NeardupError('ERR_NEARDUP_CLOSED', 'the decontamination index is closed');
    return this.handle;
  }

  /** Adds benchmark texts; text i belongs to row rows[i] (several texts of one row are each indexed on their own). */
  async add(texts: TextInput, rows: Uint32Array | readonly number[]): Promise<void> {
    const h = this.live();
    if (Array.isArray(texts)) expectTexts(texts, 'texts');
    const r = rows instanceof Uint32Array ? rows : Uint32Array.from(expectArray(rows as readonly number[], 'rows'), (x, i) => {
      if (!Number.isInteger(x) || x < 0 || x > 0xffffffff) throw invalidArgument(RangeError, `rows[${i}] must be an integer from 0 to 2^32-1`);
      return x;
    });
    try {
      await h.add(texts, r);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** Builds the lookup table: no add() after it; probe() only after it. */
  async seal(): Promise<void> {
    try {
      await this.live().seal();
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** Probes a batch of documents (tokenising, hashing and lookups on the native pool). */
  async probe(texts: TextInput, options: DecontaminationProbeOptions = {}): Promise<DecontaminationProbe> {
    optionsObject(options);
    const h = this.live();
    if (Array.isArray(texts)) expectTexts(texts, 'texts');
    try {
      return await h.probe(texts, options);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** The contaminated documents of a batch. */
  async check(texts: TextInput, options: DecontaminationProbeOptions = {}): Promise<Contamination[]> {
    return contaminations(await this.probe(texts, options));
  }

  stats(): DecontaminationStats {
    return this.live().stats();
  }

  close(): void {
    this.handle?.close();
    this.handle = null;
  }
}

/** Whether document i of a probe is contaminated (a matched n-gram or a short row found). */
export function isContaminated(p: DecontaminationProbe, i: number): boolean {
  return p.matched[i] > 0 || p.shortFound[i] > 0;
}

/** Document i of a probe as a Contamination (whether contaminated or not). */
export function contaminationAt(p: DecontaminationProbe, i: number): Contamination {
  const samples: string[] = [];
  for (let j = p.sampleStart[i]; j < p.sampleStart[i + 1]; j++) samples.push(p.sampleText.toString('utf8', p.sampleOffsets[j], p.sampleOffsets[j + 1]));
  return {
    index: i, tokens: p.tokens[i], ngrams: p.ngrams[i], matched: p.matched[i], shortFound: p.shortFound[i], covered: p.covered[i],
    overlap: p.tokens[i] === 0 ? 0 : p.covered[i] / p.tokens[i],
    rows: Array.from(p.rows.subarray(p.rowStart[i], p.rowStart[i + 1])), rowsTotal: p.rowsTotal[i], samples,
  };
}

/** The contaminated documents of a probe, in order. */
export function contaminations(p: DecontaminationProbe): Contamination[] {
  const out: Contamination[] = [];
  for (let i = 0; i < p.tokens.length; i++) if (isContaminated(p, i)) out.push(contaminationAt(p, i));
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Benchmark files

export type BenchmarkFormat = 'jsonl' | 'parquet' | 'text';

export interface BenchmarkFileOptions {
  /** JSONL/Parquet: the fields (dot paths) holding a row's texts (default ['text']). Plain text: unused. */
  fields?: readonly string[];
  /** Join a row's fields with a newline into one text (default: each field is indexed on its own). */
  join?: boolean;
  /** 'auto' (default): Parquet by its magic bytes, JSONL when the first line is a JSON object, else text. */
  format?: 'auto' | 'jsonl' | 'text';
  /** Texts per add() call (default 16384). */
  batchTexts?: number;
}

export interface BenchmarkFile {
  file: string;
  format: BenchmarkFormat;
  /** Global row of its row 0. */
  firstRow: number;
  rows: number;
}

/** The benchmark file and 0-based row (JSONL: line - 1; Parquet: row; text: line - 1) of a global row. */
export function benchmarkRow(files: readonly BenchmarkFile[], row: number): { file: string; fileIndex: number; row: number } {
  expectArray(files, 'files');
  if (files.length === 0) throw invalidArgument(RangeError, 'files must hold at least one benchmark file');
  const last = files[files.length - 1];
  if (!Number.isInteger(row) || row < 0 || !(row < last.firstRow + last.rows))
    throw invalidArgument(RangeError, `row must be an integer from 0 to ${last.firstRow + last.rows - 1}, got ${String(row)}`);
  let lo = 0, hi = files.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (files[mid].firstRow <= row) lo = mid;
    else hi = mid - 1;
  }
  return { file: files[lo].file, fileIndex: lo, row: row - files[lo].firstRow };
}

/** A benchmark file's format: Parquet by its first bytes, JSONL when its first line is a JSON object, else text. */
export async function benchmarkFormat(file: string): Promise<BenchmarkFormat> {
  if (sniffFile(file).format === 'parquet') return 'parquet';
  const stream = await openInput(file);
  try {
    for await (const line of readLines(stream, displayName(file))) {
      const s = line.toString('utf8').replace(/^\uFEFF/, '').trim();
      if (!s.startsWith('{')) return 'text';
      try {
        const v = JSON.parse(s) as unknown;
        return v !== null && typeof v === 'object' && !Array.isArray(v) ? 'jsonl' : 'text';
      } catch {
        return 'text';
      }
    }
    return 'text';
  } finally {
    stream.destroy();
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads benchmark files into the index (not sealed): rows numbered across the files in order. A malformed
 * JSONL line, a missing field or invalid UTF-8 is an error naming file:line. Returns each file's rows.
 */
export async function addBenchmarkFiles(index: DecontaminationIndex, files: readonly string[], options: BenchmarkFileOptions = {}): Promise<BenchmarkFile[]> {
  if (!(index instanceof DecontaminationIndex)) throw invalidArgument(TypeError, 'Expected index to be a DecontaminationIndex');
  expectArray(files, 'files').forEach((f, i) => expectString(f, `files[${i}]`));
  optionsObject(options);
  if (options.format !== undefined && !['auto', 'jsonl', 'text'].includes(options.format)) throw invalidArgument(RangeError, "format must be 'auto', 'jsonl' or 'text'");
  if (options.batchTexts !== undefined && !(Number.isInteger(options.batchTexts) && options.batchTexts >= 1)) throw invalidArgument(RangeError, 'batchTexts must be a positive integer');
  const fields = options.fields ?? ['text'];
  expectArray(fields, 'fields').forEach((f, i) => expectString(f, `fields[${i}]`));
  if (fields.length === 0) throw invalidArgument(RangeError, 'fields must name at least one field');
  const batchTexts = options.batchTexts ?? 16384;
  const out: BenchmarkFile[] = [];
  let firstRow = 0;
  for (const file of files) {
    const name = displayName(file);
    const sniffed = await benchmarkFormat(file);
    const format: BenchmarkFormat = options.format === 'text' ? 'text' : options.format === 'jsonl' && sniffed === 'text' ? 'jsonl' : sniffed;
    let rows = 0;
    if (format === 'text') {
      let texts: string[] = [];
      let ids: number[] = [];
      const flush = async () => {
        if (texts.length) await index.add(texts, ids);
        texts = [];
        ids = [];
      };
      let line = 0;
      for await (const raw of readLines(await openInput(file), name)) {
        line++;
        let b = raw;
        if (line === 1 && b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) b = b.subarray(3);
        let s: string;
        try {
          s = UTF8.decode(b);
        } catch {
          throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${name}:${line}: invalid UTF-8`, { file: name, line });
        }
        texts.push(s);
        ids.push(firstRow + line - 1);
        if (texts.length >= batchTexts) await flush();
      }
      await flush();
      rows = line;
    } else if (!options.join || fields.length === 1) {
      // each field on its own: the packed batches go to the index as they are
      for (const [k, field] of fields.entries()) {
        let count = 0;
        for await (const b of readDocuments([file], { field, onBadLine: 'error' })) {
          const ids = new Uint32Array(b.count);
          for (let i = 0; i < b.count; i++) ids[i] = firstRow + b.firstLine - 1 + i;
          await index.add(b.packed, ids);
          count = b.firstLine - 1 + b.count;
        }
        if (k === 0) rows = count;
      }
    } else {
      // joined: every field of a row, then one text per row
      const perField: string[][] = [];
      for (const field of fields) {
        const texts: string[] = [];
        for await (const b of readDocuments([file], { field, onBadLine: 'error' })) {
          const buf = Buffer.from(b.packed.data.buffer, b.packed.data.byteOffset, b.packed.data.length);
          for (let i = 0; i < b.count; i++) texts.push(buf.toString('utf8', b.packed.offsets[i], b.packed.offsets[i + 1]));
        }
        perField.push(texts);
      }
      rows = perField[0].length;
      for (let at = 0; at < rows; at += batchTexts) {
        const end = Math.min(rows, at + batchTexts);
        const texts: string[] = [];
        const ids: number[] = [];
        for (let r = at; r < end; r++) {
          texts.push(perField.map((f) => f[r]).join('\n'));
          ids.push(firstRow + r);
        }
        await index.add(texts, ids);
      }
    }
    out.push({ file, format, firstRow, rows });
    firstRow += rows;
    if (firstRow > 0xffffffff) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${name}: the benchmark has more than 2^32 rows`, { file: name });
  }
  return out;
}
