// lib/native/ - the addon, once (mirror of native/binding; imports only lib/util):
//   addon.ts       this file: the loader and NativeBinding, the binding's one typed interface
//   types.ts       the option and result shapes the binding shares with the engines (they re-export them)
//   runtime.ts     the process-wide native pool's threads (getThreads, setThreads, runtimeInfo)
// Guarantees: the addon is loaded once per process, from the package root (two folders above dist/native/:
// prebuilds/ first, then build/); no other file in lib/ loads it, and every native call goes through `native`.
//
// Loads the addon (a prebuild from prebuilds/ or the local build/, via node-gyp-build) and types it once,
// at the boundary. Everything else in lib/ talks to the native code through `native` only.
import * as path from 'node:path';
import type { NormalizeForm, ParagraphFilterOptions, ParagraphFilterStats, ShingleHashOptions } from './types';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const load: (dir: string) => unknown = require('node-gyp-build');

/** Documents accepted by batch calls: strings or byte arrays (UTF-8), or one packed buffer with offsets. */
export type TextInput = ReadonlyArray<string | Uint8Array> | PackedTexts;
export interface PackedTexts {
  /** UTF-8 bytes of all documents, back to back. */
  data: Uint8Array;
  /** Document i is data[offsets[i] .. offsets[i+1]); length = documents + 1. */
  offsets: Uint32Array | BigUint64Array;
}

// Shingle options cross the boundary as they are (documented in shingles.ts).
export type NativeShingleOptions = ShingleHashOptions;

export interface NativeShingleResult {
  hashes: BigUint64Array | Uint32Array;
  offsets: Uint32Array;
  invalidUtf8Docs: number;
}

export interface NativeDoubriStats {
  target: string;
  total: number;
  active: number;
  skips: number;
  drops: number;
  /** The stats line exactly as doubri 1.0 prints it (no newline). */
  line: string;
}

export type LshProfile = 'fast' | 'datasketch' | 'doubri';

/** An index's fixed parameters. */
export interface NativeLshParams {
  profile: LshProfile;
  numPerm: number;
  b: number;
  r: number;
  valueBytes: 4 | 8;
  keyType: 'int' | 'string';
}

/** Keys in and out: BigUint64Array for integer keys, string arrays for string keys. */
type NativeKeys = BigUint64Array | string[];

export interface NativeLshIndex {
  insert(keys: NativeKeys, signatures: Uint32Array | BigUint64Array): Promise<void>;
  insertSync(keys: NativeKeys, signatures: Uint32Array | BigUint64Array): void;
  query(signature: Uint32Array | BigUint64Array): NativeKeys;
  queryBatch(signatures: Uint32Array | BigUint64Array, maxResults: number): Promise<{ ids: NativeKeys; offsets: Uint32Array }>;
  remove(key: bigint | string): void;
  has(key: bigint | string): boolean;
  size(): number;
  info(): { size: number; mapped: number; removed: number; added: number; fileVersion: number; storesSignatures: boolean; storesData: boolean };
  candidatePairs(maxPairs: number): { a: NativeKeys; b: NativeKeys };
  pairStream(): { next(chunkPairs: number): Promise<{ a: NativeKeys; b: NativeKeys; done: boolean }> };
  clusters(): { ids: NativeKeys; representatives: NativeKeys };
  save(path: string): Promise<void>;
  params(): NativeLshParams;
  metadata(): string;
  setMetadata(metadata: string): void;
  close(): void;
}

export interface NativeLshIndexClass {
  new (options: { profile?: LshProfile; numPerm?: number; b?: number; r?: number; valueBytes?: number; keyType?: 'int' | 'string' } | { path: string; verify?: boolean }): NativeLshIndex;
  loadAsync(path: string, options: { verify?: boolean }): Promise<NativeLshIndex>;
}

export interface NativeDedupOptions extends Omit<NativeShingleOptions, 'hash' | 'dedupe' | 'seed'> {
  profile?: LshProfile;
  numPerm?: number;
  /** MinHash seed of the profile (documents are signed natively). */
  seed?: number | bigint;
  b: number;
  r: number;
  threshold?: number;
  verify?: 'none' | 'estimate' | 'exact';
  pairs?: boolean;
  /** With pairs: more reported pairs fail with ERR_NEARDUP_TOO_MANY_RESULTS. */
  maxPairs?: number;
  /** With pairs: the reported pairs go to a temporary file (result.pairsFile: 16-byte records u32 a, u32 b, f32 estimate, f32 exact), not maxPairs-capped. */
  pairsFile?: boolean;
  /** Candidate pairs held at once before spilling (0: from memory; tests). */
  pairBuffer?: number;
  memory?: number | bigint;
  tmp?: string;
  /** 'kept' (default): doubri's rule, a document is dropped only for a kept one; 'components': connected components. */
  clustering?: 'kept' | 'components';
  /** verify 'exact': keep the texts in a temporary file in `tmp` (default true), not in memory. */
  spillTexts?: boolean;
  /** Against an index (prior: a native LshIndex) and/or writing one after the run (lib/minhash/dedup-index.ts). */
  index?: { prior?: unknown; write: boolean; keyType: 'int' | 'string'; keyOffset: number };
  /** verify 'none' with clustering 'kept': report buckets over 100 documents (groupDocs/groupEnds). */
  groups?: boolean;
  /** pairs: with estimates (default true; they need the signatures). */
  estimates?: boolean;
  /** Report every distinct candidate pair (`candidates`). */
  candidates?: boolean;
}

export interface NativeDedupResult {
  representative: Uint32Array;
  pairA: Uint32Array;
  pairB: Uint32Array;
  pairEstimate: Float32Array;
  pairExact: Float32Array;
  candidatePairs: number;
  keptPairs: number;
  duplicates: number;
  clusters: number;
  spilledBytes: number;
  runs: number;
  /** Sorted runs of candidate pairs spilled to `tmp`. */
  pairRuns: number;
  /** pairsFile: the reported pairs' file in the spill folder (removed by close()). */
  pairsFile?: string;
  indexMatches?: { docs: Uint32Array; keys: BigUint64Array | string[] };
  indexPairs?: { docs: Uint32Array; keys: BigUint64Array | string[]; estimate: Float32Array; exact: Float32Array };
  /** groups: bucket g holds groupDocs[groupEnds[g-1] .. groupEnds[g]). */
  groupDocs: Uint32Array;
  groupEnds: BigUint64Array;
  /** candidates: a << 32 | b, sorted. */
  candidates: BigUint64Array;
}

export interface NativeVerifiedPairs {
  pairA: Uint32Array;
  pairB: Uint32Array;
  /** With signatures. */
  pairEstimate: Float32Array;
  /** verify 'exact'. */
  pairExact: Float32Array;
  /** Distinct candidate pairs decided. */
  candidatePairs: number;
  /** Text bytes read (a text read again for another block counts again). */
  textBytes: number;
  verifyDocs: number;
  verifySets: number;
}

export interface NativeLshDedup {
  /** Signs the documents on the pool and enters them in order; keys: their ids (an index with string keys). */
  add(texts: TextInput, valid?: Uint8Array, keys?: string[]): Promise<void>;
  /** Enters documents by band keys (n x b) computed elsewhere; texts for verify 'exact', signatures for estimates. */
  addKeys(keys: BigUint64Array, valid: Uint8Array | null, texts: TextInput | null, signatures: Uint32Array | null): Promise<void>;
  /** Signatures (n x numPerm) and band keys (n x b) of documents, nothing entered; crcs: each text's CRC-32C too. */
  sign(texts: TextInput, valid?: Uint8Array | null, crcs?: boolean): Promise<{ signatures: Uint32Array; keys: BigUint64Array; crcs?: Uint32Array }>;
  finish(): Promise<NativeDedupResult>;
  keyConflicts(max: number): Promise<{ doc: number; other: number; key: string }[]>;
  saveIndex(path: string, metadata: string): Promise<{ entries: number }>;
  close(): void;
}

export interface NativeSimhashOptions extends Omit<NativeShingleOptions, 'hash' | 'dedupe'> {
  profile?: 'default' | 'seomoz';
  hash?: 'fast64' | 'murmur3_64' | 'md5_64';
  weighting?: 'count' | 'binary';
}

export interface NativeSimhashFindAllOptions {
  blocks: number;
  distance: number;
  clusters: boolean;
  /** false: clusters only, the pairs are never held. */
  pairs: boolean;
}

export interface NativeSimhashFindAllResult {
  pairs: BigUint64Array;
  clusterOffsets?: Uint32Array;
  clusterIds?: BigUint64Array;
}

export interface NativeSimhashIndex {
  insert(ids: BigUint64Array, fps: BigUint64Array): void;
  insertAsync(ids: BigUint64Array, fps: BigUint64Array): Promise<void>;
  remove(ids: BigUint64Array): number;
  removeAsync(ids: BigUint64Array): Promise<number>;
  has(id: bigint): boolean;
  findFirst(fp: bigint): bigint | null;
  findAll(fp: bigint): BigUint64Array;
  findFirstMany(fps: BigUint64Array): Promise<{ ids: BigUint64Array; found: Uint8Array }>;
  findFirstManySync(fps: BigUint64Array): { ids: BigUint64Array; found: Uint8Array };
  findAllMany(fps: BigUint64Array): Promise<{ offsets: Uint32Array; ids: BigUint64Array }>;
  findAllManySync(fps: BigUint64Array): { offsets: Uint32Array; ids: BigUint64Array };
  compact(): void;
  save(path: string): Promise<void>;
  saveSync(path: string): void;
  stats(): {
    blocks: number; distance: number; tables: number; size: number; slots: number; tombstones: number;
    buffered: number; tableBytes: number; entryBytes: number; mapped: boolean;
  };
  close(): void;
}

export interface NativeSimhashIndexClass {
  new (options?: { blocks?: number; distance?: number }): NativeSimhashIndex;
  open(path: string, options?: { verify?: boolean }): NativeSimhashIndex;
  openAsync(path: string, options?: { verify?: boolean }): Promise<NativeSimhashIndex>;
}

export interface NativeMinHashOptions extends Omit<NativeShingleOptions, 'hash' | 'seed' | 'dedupe'> {
  profile?: 'fast' | 'doubri-v1' | 'datasketch';
  numPerm?: number;
  seed?: number | bigint;
}

export interface NativeMinHashResult {
  signatures: Uint32Array;
  numPerm: number;
  count: number;
  invalidUtf8Docs: number;
}

export interface NativeSignatureWriterOptions {
  format?: 'neardup' | 'doubri';
  numPerm?: number;
  profile?: 'fast' | 'doubri-v1' | 'datasketch';
  /** JSON stored after the signatures (neardup format only). */
  options?: string;
}

export interface NativeSignatureWriter {
  append(signatures: Uint32Array): void;
  /** Returns the number of records written. */
  commit(): number;
  abort(): void;
  readonly records: number;
}

// The paragraph filter's options and statistics cross the boundary as they are (documented in paragraphs.ts).
export type NativeParagraphFilterOptions = ParagraphFilterOptions;
export type NativeParagraphFilterStats = ParagraphFilterStats;

export interface NativeParagraphFilter {
  /** options.into: the text goes there when it fits (text is then a Uint8Array view of it); flags: false, no flags. */
  pushVertical(chunk: Uint8Array, final: boolean, options?: { into?: Uint8Array; flags?: boolean }): Promise<{ flags: Uint8Array; text: Buffer | Uint8Array }>;
  pushParagraphs(texts: TextInput, docOffsets: Uint32Array): Promise<{ dup: Uint8Array; docRemoved: Uint8Array; tokens: Uint32Array }>;
  saveSeen(path: string): Promise<void>;
  loadSeen(path: string): Promise<{ kind: 'exact' | 'approx'; size: number }>;
  startSecondPass(): void;
  /** Onion's -f (ngramHash 'onion'): raw little-endian u64 hashes of duplicate n-grams; resolves to the set's size. */
  addDuplicateNgrams(hashes: Uint8Array): Promise<number>;
  stats(): NativeParagraphFilterStats;
  close(): void;
}

// The decontamination index (lib/filter/decontaminate.ts; core: filter/decontam.h).
export interface NativeDecontamOptions {
  n?: number;
  minTokens?: number;
  approx?: boolean;
  fpRate?: number;
}

export interface NativeDecontamProbe {
  /** Per document: its tokens after normalisation. */
  tokens: Uint32Array;
  /** Per document: n-gram positions (tokens - n + 1; 1 for a document of minTokens..n-1 tokens; else 0). */
  ngrams: Uint32Array;
  /** Per document: n-gram positions found in the benchmark. */
  matched: Uint32Array;
  /** Per document: occurrences of benchmark rows shorter than n tokens. */
  shortFound: Uint32Array;
  /** Per document: tokens inside any matched span. */
  covered: Uint32Array;
  /** Per document: distinct benchmark rows matched (exact mode; 0 in approx mode). */
  rowsTotal: Uint32Array;
  /** Document i's rows are rows[rowStart[i] .. rowStart[i+1]) (at most maxRows, ascending). */
  rowStart: Uint32Array;
  rows: Uint32Array;
  /** Document i's samples are j in [sampleStart[i], sampleStart[i+1]): sampleText bytes sampleOffsets[j] .. sampleOffsets[j+1]. */
  sampleStart: Uint32Array;
  sampleOffsets: Uint32Array;
  sampleText: Buffer;
}

export interface NativeDecontamIndex {
  add(texts: TextInput, rows: Uint32Array): Promise<void>;
  seal(): Promise<void>;
  probe(texts: TextInput, options?: { valid?: Uint8Array; maxRows?: number; maxSamples?: number }): Promise<NativeDecontamProbe>;
  stats(): { keys: number; texts: number; memoryBytes: number; shortLengths: number[]; fpBound: number; sealed: boolean };
  close(): void;
}

export interface NativePostingIndex {
  append(keys: Uint32Array | BigUint64Array, offsets: Uint32Array, memory: number, tmp?: string): Promise<Uint32Array>;
  appendTexts(texts: TextInput, blot: import('./types').BlotOptions, keyModulus: number, memory: number, tmp?: string): Promise<Uint32Array>;
  beginAppend(memory: number, tmp: string | undefined, keyBits: number | undefined): Promise<void>;
  addKeys(keys: Uint32Array | BigUint64Array, offsets: Uint32Array): Promise<Uint32Array>;
  addTexts(texts: TextInput, blot: import('./types').BlotOptions, keyModulus: number): Promise<Uint32Array>;
  commitAppend(commitData?: Uint8Array): Promise<void>;
  abortAppend(): Promise<void>;
  delete(ids: Uint32Array): Promise<void>;
  merge(): Promise<void>;
  appendIndexes(dirs: string[], commitData?: Uint8Array): Promise<void>;
  appendKeyRanges(files: string[], documents: number, commitData?: Uint8Array): Promise<void>;
  /** The commit data of the manifest held (null: none). */
  commitData(): Buffer | null;
  lookup(keys: Uint32Array | BigUint64Array): Promise<{ docs: Uint32Array; offsets: Uint32Array }>;
  keyCounts(): Promise<{ keys: Uint32Array | BigUint64Array; counts: Uint32Array }>;
  extractStart(sigma: number, minDocs: number, memory: number, tmp: string | undefined, texts: import('./types').TextSourceArg,
    blot: import('./types').BlotOptions): Promise<{
    cursor: number; threshold: number; keys: number; mean: number; sd: number; chosenKeys: number; passages: number;
    spilledBytes: number; peakBytes: number;
  }>;
  extractNext(cursor: number, maxOccurrences: number, maxTextBytes: number, lines: boolean): Promise<{
    done: boolean; windows: Uint32Array; firstBlot: BigUint64Array; docOffsets: Uint32Array; docs: Uint32Array; begins: Uint32Array;
    ends: Uint32Array; text: Uint8Array;
  } | { done: boolean; passages: number; lines: Uint8Array }>;
  extractEnd(cursor: number): void;
  queryPassages(queries: TextInput, texts: import('./types').TextSourceArg, blot: import('./types').BlotOptions, minPassages: number, maxDocs: number,
    lines: boolean): Promise<{
    matchOffsets: Uint32Array; doc: Uint32Array; windows: Uint32Array; runOffsets: Uint32Array;
    qBegin: Uint32Array; qEnd: Uint32Array; dBegin: Uint32Array; dEnd: Uint32Array; runWindows: Uint32Array; text: Uint8Array;
  } | { lines: Uint8Array; lineOffsets: Float64Array }>;
  setDocIds(json: Uint8Array, offsets: Float64Array): void;
  pairsStart(minPassages: number, maxDocs: number, memory: number, tmp: string | undefined, texts: import('./types').TextSourceArg,
    blot: import('./types').BlotOptions): Promise<{
    cursor: number; eligibleKeys: number; occurrences: number; matches: number; pairs: number; partitions: number; blocks: number;
    spilledBytes: number; peakBytes: number;
  }>;
  pairsNext(cursor: number, maxPairs: number, lines: boolean, into?: Uint8Array): Promise<{
    done: boolean; a: Uint32Array; b: Uint32Array; passages: Uint32Array; windows: Uint32Array; bytesA: Float64Array; bytesB: Float64Array;
  } | { done: boolean; pairs: number; lines: Uint8Array } | { done: boolean; pairs: number; bytes: number }>;
  dupiOrder(shards: number, sigma: number): Promise<{ order: Uint32Array; posts: number; mean: number; sigma: number }>;
  formatLists(keys: Uint32Array, table: Uint8Array, tableOffsets: Uint32Array, out: Uint8Array, start: number): Promise<{ next: number; bytes: number; need: number }>;
  info(): import('./types').PostingIndexInfo;
  close(): void;
}

export interface NativeChunkIndexInfo {
  generation: number;
  documents: number;
  slots: number;
  segments: number;
  tombstones: number;
  recordFiles: number;
  postings: number;
  params: {
    n: number; bits: number; seed: bigint; split: 'whitespace' | 'nonword'; lowercase: boolean; stripPunctuation: boolean;
    short: 'whole' | 'none'; parts: number; k: number; minShared: number; minSimilarity: number;
  };
}

export interface NativeChunkIndex {
  info(): NativeChunkIndexInfo;
  /** Names of the files this generation uses. */
  files(): string[];
  liveIds(): Uint32Array;
  /** Internal ids of ids given as JSON text (0xffffffff: unknown). */
  find(ids: string[]): Uint32Array;
  docs(ids: Uint32Array): { chunks: Uint32Array; ids: Buffer; idOffsets: Uint32Array };
  /** The first K entries of each list. */
  top(ids: Uint32Array): Promise<{ offsets: Uint32Array; other: Uint32Array; shared: Uint32Array }>;
  query(texts: TextInput): Promise<{ chunks: Uint32Array; offsets: Uint32Array; other: Uint32Array; shared: Uint32Array }>;
  close(): void;
}

/** A rejected document of an add(): its index in the batch and why. */
export interface NativeBadDocument { bad: number; code: string; message: string }

export interface NativeChunkBuilder {
  add(ids: string[], texts: TextInput): Promise<NativeBadDocument | undefined>;
  finishDocs(): Promise<void>;
  finish(): Promise<NativeChunkIndex>;
  close(): void;
}

export interface NativeChunkUpdater {
  add(ids: string[], texts: TextInput, deleted: Uint8Array): Promise<NativeBadDocument | undefined>;
  prepare(compact: boolean): Promise<{
    added: number; modified: number; deleted: number; affected: number; recounted: number; compacted: boolean;
    /** Deleted ids not reused (their rows go); added or replaced ids (their rows are rewritten). */
    removed: Uint32Array; upserted: Uint32Array;
    /** Row changes of the other documents: shared 0 removes (doc, other), else sets it. */
    rowDoc: Uint32Array; rowOther: Uint32Array; rowShared: Uint32Array;
    pending: NativeChunkIndex | null;
  }>;
  close(): void;
}

/** Packed documents of one parseJsonl call: line i of the segments is document i. */
export interface NativeJsonlBatch {
  /** Set (and nothing else) when a line is longer than maxLineBytes: its index in the segments. */
  tooLong?: number;
  lines: number;
  text: Uint8Array;
  offsets: Uint32Array;
  /** Per line: 1 for a bad line; absent when no line is bad. */
  bad?: Uint8Array;
  /** Bad lines (ascending) and their reasons. */
  badLines: Uint32Array;
  reasons: string[];
  /** With idField: each line's id (UTF-8 of a string, digits of an integer), its offsets and kind (0 none, 1 string, 2 integer). */
  ids?: Uint8Array;
  idOffsets?: Uint32Array;
  idKinds?: Uint8Array;
}

export interface NativeZstdDecoder {
  decompress(input: Uint8Array, offset: number, maxOut: number): Promise<{ output: Uint8Array; consumed: number }>;
  finish(): void;
}

export interface NativeExactDedupOptions {
  normalize?: boolean; unit?: 'char' | 'word'; split?: 'whitespace' | 'nonword'; lowercase?: boolean; stripPunctuation?: boolean;
  foldWhitespace?: boolean; memory?: number; tmp?: string; indexOut?: boolean;
}
export interface NativeExactDedupResult {
  representative: Uint32Array; documents: number; duplicates: number; distinct: number; spilledBytes: number; runs: number; tableBytes: number;
  /** Documents found in the index (their representative is 0xffffffff), counted in duplicates too. */
  indexMatched: number;
  /** docs[k] was found in the index: the indexed document's number indexDocs[k] (and id, JSON text, ids[k]). */
  indexMatches: { docs: Uint32Array; indexDocs: Float64Array; ids?: string[] };
}
export interface NativeExactDedup {
  /** Each document's representative (0xffffffff: pending, once the table has spilled; resolved by finish). */
  add(texts: TextInput, valid?: Uint8Array | null): Promise<Uint32Array>;
  addHashes(hashes: BigUint64Array, valid?: Uint8Array | null): Promise<Uint32Array>;
  finish(): Promise<NativeExactDedupResult>;
  loadIndex(path: string): Promise<{ entries: number; documents: number; meta: string; hasIds: boolean }>;
  saveIndex(path: string, options: { meta: string; firstDoc: number; ids?: TextInput }): Promise<void>;
  close(): void;
}

/** Removed spans of repeated substrings (native/core/substr): flat arrays, one entry per span, by doc then start. */
export interface NativeSubstringSpans {
  doc: Float64Array;
  start: Float64Array;
  end: Float64Array;
  firstDoc: Float64Array;
  firstOffset: Float64Array;
  stats: {
    documents: number; bytes: number; removedBytes: number; spans: number; documentsChanged: number; groups: number;
    /** Token mode: tokens and distinct tokens of the corpus (0 in byte mode). */
    tokens: number; distinctTokens: number;
    suffixArrayBytes: 4 | 8; buildSeconds: number; buildCpuSeconds: number; scanSeconds: number;
  };
}

export interface NativeSubstringCorpus {
  /** Appends documents; a text that is not UTF-8 refuses the batch: { bad (its index), code, message }. */
  add(texts: TextInput): Promise<undefined | { bad: number; code: string; message: string }>;
  /** indexPath: also write the text and its suffix array there (byte mode; docs/FORMAT.md section 16). */
  find(options: { length?: number; unit?: 'byte' | 'token'; dropAll?: boolean; indexPath?: string }): Promise<NativeSubstringSpans>;
  documents(): number;
  close(): void;
}

/** Copied-code matches (native/core/code): pairs of groups, largest shared fraction first; regions flat, pair i's at [regionStart[i], regionStart[i + 1]). */
export interface NativeCodeMatches {
  groupA: Uint32Array;
  groupB: Uint32Array;
  sharedA: Float64Array;
  sharedB: Float64Array;
  tokens: Float64Array;
  matchedA: Float64Array;
  matchedB: Float64Array;
  regionStart: Uint32Array;
  regions: {
    fileA: Uint32Array; fileB: Uint32Array;
    aFirstLine: Uint32Array; aLastLine: Uint32Array; bFirstLine: Uint32Array; bLastLine: Uint32Array;
    tokens: Uint32Array; aBegin: Uint32Array; aEnd: Uint32Array; bBegin: Uint32Array; bEnd: Uint32Array;
  };
  stats: {
    files: number; baseFiles: number; tokens: number; fingerprints: number; baseKgrams: number; baseFingerprints: number;
    boilerplateHashes: number; boilerplateFingerprints: number; repeatedFingerprints: number;
    pairEntries: number; passes: number; candidatePairs: number; mems: number; fingerprintSeconds: number; pairSeconds: number;
  };
}

export interface NativeCodeCorpus {
  /** Each source's state: 0 indexed, 1 binary (a NUL byte), 2 not UTF-8, 3 larger than maxFileBytes, 4 base code. */
  add(sources: { texts?: TextInput; paths?: string[]; langs: Uint8Array; groups?: Uint32Array; base?: Uint8Array }): Promise<Uint8Array>;
  match(options: { maxGroups?: number; maxRepeat?: number; mergeGap?: number; minShared?: number; pairBudget?: number }): Promise<NativeCodeMatches>;
  files(): number;
  close(): void;
}

export interface NativeBinding {
  parseJsonl(segments: Uint8Array[], options: { field?: string; idField?: string; maxLineBytes?: number }): Promise<NativeJsonlBatch>;
  parseFieldPath(spec: string): string[];
  JsonlFile: new (path: string) => {
    /** lines: also each line's place (file offset start + lineAt[i], lineLen[i] bytes without the '\n'). */
    next(options: { field?: string; idField?: string; maxLineBytes?: number; batchBytes?: number; lines?: boolean }):
      Promise<NativeJsonlBatch & { bytes: number; eof: boolean; start?: number; lineAt?: Uint32Array; lineLen?: Uint32Array }>;
    close(): void;
  };
  ZstdDecoder: new (name: string) => NativeZstdDecoder;
  ZstdEncoder: new (level?: number) => { compress(input: Uint8Array, end: boolean): Promise<Uint8Array> };
  zstdDecompressSync(input: Uint8Array, name: string, maxBytes?: number): Uint8Array;
  ParagraphFilter: new (options?: NativeParagraphFilterOptions) => NativeParagraphFilter;
  ExactDedup: new (options?: NativeExactDedupOptions) => NativeExactDedup;
  /** The 128-bit hash of each text (high, low), as ExactDedup hashes them. */
  exactHashes(texts: TextInput, options: NativeExactDedupOptions): Promise<BigUint64Array>;
  DecontamIndex: new (options?: NativeDecontamOptions) => NativeDecontamIndex;
  /** Repeated-substring removal over one corpus held in memory (libdivsufsort, loaded at run time). */
  SubstringCorpus: new () => NativeSubstringCorpus;
  /** Whether libdivsufsort loads; message: why not (naming the package to install). */
  substringsLibrary(): { ok: boolean; message: string };
  /** Occurrences of each string in a substring index file (verify: check its CRC first; default true). */
  substringIndexCount(path: string, strings: TextInput, verify?: boolean): Promise<{ counts: Float64Array; documents: number; bytes: number }>;
  /** Copied-code detection: tokenised files, winnowed, matched in memory. */
  CodeCorpus: new (options?: { k?: number; w?: number; keepIdentifiers?: boolean; keepLiterals?: boolean; maxFileBytes?: number }) => NativeCodeCorpus;
  /** One text's tokens, on the calling thread (kind: 0 keyword, 1 identifier, 2 operator, 3 string, 4 number, 5 char, 6 preprocessor). */
  codeTokens(text: string | Uint8Array, lang: string, options?: { keepIdentifiers?: boolean; keepLiterals?: boolean }):
    { kind: Uint8Array; value: Uint32Array; begin: Uint32Array; end: Uint32Array; line: Uint32Array; seconds: number };
  /** Onion's hashgen (neardup onion hashgen): push chunks of vertical text, get one Uint8Array of u64 LE hashes per output file. */
  OnionHashgen: new (options: { n: number; files: number }) => { push(chunk: Uint8Array): Promise<Uint8Array[]>; close(): void };
  /** Onion's hashdup on one file's hashes: each value occurring more than once, once, ascending (u64 LE). */
  onionDuplicateHashes(hashes: Uint8Array): Promise<Uint8Array>;
  getThreads(): number;
  setThreads(n: number): void;
  runtimeInfo(): { simd: string; defaultThreads: number };
  shingleHashes(texts: TextInput, options?: NativeShingleOptions): Promise<NativeShingleResult>;
  shingleHashesSync(texts: TextInput, options?: NativeShingleOptions): NativeShingleResult;
  /** Unicode normalisation of each text (native/core/text/normalization.h), packed UTF-8, on the calling thread. */
  normalizeTextSync(texts: TextInput, form: NormalizeForm): { data: Uint8Array; offsets: Float64Array; invalidUtf8Docs: number };
  LshIndex: NativeLshIndexClass;
  LshDedup: new (options: NativeDedupOptions) => NativeLshDedup;
  /**
   * The staged dedup's verify stage: the candidate lists merged (each pair once) and decided as a session decides
   * them; texts read in place (per signatures shard: the records of its documents' blocks in `locs`, then each text
   * from its plain input's line, parsed for `field`, or from the `texts` file, after `textSkip` header bytes,
   * default 64), each checked against its CRC-32C; signatures (per shard, ascending) for estimates. The kept
   * pairs, sorted.
   */
  verifyPairs(options: NativeDedupOptions & { textSkip?: number; field?: string }, candidates: BigUint64Array[],
              texts: {
                first: number; n: number; locs: string; locsCrc: number; block: number; texts: string | null; textsBytes: number;
                inputs: { path: string; first: number; count: number; inPlace: boolean }[];
              }[] | null,
              signatures: { first: number; data: Uint32Array }[] | null): Promise<NativeVerifiedPairs>;
  lshOptimalParam(threshold: number, numPerm: number, fpWeight?: number, fnWeight?: number): { b: number; r: number };
  lshOptimalParamAsync(threshold: number, numPerm: number, fpWeight?: number, fnWeight?: number): Promise<{ b: number; r: number }>;
  doubriSelf(hashFiles: string[], indexPrefix: string): Promise<NativeDoubriStats[]>;
  doubriOther(indexPrefix: string, hashFiles: string[]): Promise<NativeDoubriStats[]>;
  simhashFingerprints(texts: TextInput, options?: NativeSimhashOptions): Promise<BigUint64Array>;
  simhashFingerprintsSync(texts: TextInput, options?: NativeSimhashOptions): BigUint64Array;
  simhashCompute(features: BigUint64Array, weights?: Float64Array): bigint;
  /** ids undefined: document i has id i. */
  simhashFindAll(ids: BigUint64Array | undefined, fps: BigUint64Array, options: NativeSimhashFindAllOptions, maxPairs: number): Promise<NativeSimhashFindAllResult>;
  simhashFindAllSync(ids: BigUint64Array | undefined, fps: BigUint64Array, options: NativeSimhashFindAllOptions, maxPairs: number): NativeSimhashFindAllResult;
  /** The sorted id pairs in chunks: next(chunkPairs) computes the next chunk on the pool. */
  simhashPairStream(ids: BigUint64Array | undefined, fps: BigUint64Array, options: NativeSimhashFindAllOptions): {
    next(chunkPairs: number): Promise<{ a: BigUint64Array; b: BigUint64Array; done: boolean }>;
  };
  simhashPickBlocks(n: number, distance: number): number;
  /** "a b\n" lines from pair `first` on into `into`, whole lines only: [bytes written, next pair] (find-all's output). */
  simhashFormatPairs(a: BigUint64Array, b: BigUint64Array, first: number, into: Uint8Array): [number, number];
  /**
   * Find-all's plain input: the lines of `piece` parsed in place into out[at..] (simhash::ParseFingerprintText;
   * `state`, 88 bytes, carries the line under way): [at after, bytes taken, non-empty lines, newlines, bad 0/1].
   */
  simhashParseFingerprintText(piece: Uint8Array, final: boolean, state: Uint8Array, out: BigUint64Array, at: number): [number, number, number, number, number];
  /** The distinct values of values[0..n), ascending, sorted on a libuv thread. */
  simhashSortDistinct(values: BigUint64Array, n: number): Promise<BigUint64Array>;
  /** Locks a temporary file the CLI opened, while it stays open (io::os::LockFile); false without lock support. */
  lockTempFile(fd: number, path: string): boolean;
  /** Removes the stale ".NAME.neardup-tmp-PID-RANDOM" files of `dir` (io::CleanStaleTemps); how many. */
  cleanStaleTemps(dir: string): number;
  /** Removes the stale "neardup-spill-PID-XXXXXX" folders of `dir` (io::CleanStaleSpillDirs); how many. */
  cleanStaleSpill(dir: string): number;
  /**
   * Reads the files `paths` whole, in order, into buffer (io::ReadFilesInto, on a libuv thread) until the next
   * one does not fit: the first `files` were read, file i ends at buffer[ends[i]]; with files 0, `need` is the
   * size of paths[0] (larger than the buffer). The buffer must not be used until it settles.
   */
  readFilesInto(paths: string[], buffer: Uint8Array): Promise<{ files: number; ends: Uint32Array; need: number }>;
  /** io::AppendFile: the whole file src appended at fd's position (POSIX descriptors); the bytes appended. */
  appendFile(fd: number, dstPath: string, srcPath: string): Promise<number>;
  SimhashIndex: NativeSimhashIndexClass;
  /** The raw output bytes of one hash (little-endian words for murmur3/fast64). Used by tests. */
  hashBytes(kind: 'fast64' | 'murmur3_32' | 'murmur3_128' | 'sha1' | 'md5', bytes: Uint8Array, seed?: number | bigint): Buffer;
  /** out[i] = min over keys of MurmurHash3_x86_32(key, firstSeed + i) (0xFFFFFFFF with no key). */
  murmur3MinSeq(keys: TextInput, firstSeed: number, count: number): Uint32Array;
  /** Sets (and returns) the largest result ArrayBuffer; NEARDUP_TEST_MAX_RESULT_BYTES caps it (tests). */
  setMaxResultBytes(maxBytes?: number): number;
  /** Stops the native work of this environment between chunks (the CLI's SIGINT/SIGTERM, just before exit). */
  interrupt(): void;
  /** The checked header of a signature file, from its first min(64, fileSize) bytes (readSignatureFile). */
  signatureFileHeader(head: Uint8Array, fileSize: number, name: string): {
    format: 'neardup' | 'doubri'; count: number; numPerm: number; profile: number;
    valuesOffset: number; trailerOffset: number; payloadCrc: number;
  };
  /** CRC-32C of bytes, continuing from crc (default 0). */
  crc32c(bytes: Uint8Array, crc?: number): number;
  minhash(texts: TextInput, options?: NativeMinHashOptions): Promise<NativeMinHashResult>;
  minhashSync(texts: TextInput, options?: NativeMinHashOptions): NativeMinHashResult;
  minhashShinglesSync(shingles: TextInput, counts: Uint32Array, options?: NativeMinHashOptions): NativeMinHashResult;
  datasketchPermutations(options?: { seed?: number | bigint; numPerm?: number }): { a: BigUint64Array; b: BigUint64Array };
  SignatureWriter: new (path: string, options?: NativeSignatureWriterOptions) => NativeSignatureWriter;
  blotBatch(texts: TextInput, options: import('./types').BlotOptions): Promise<import('./types').BlotResult<Uint32Array | BigUint64Array>>;
  createPostingIndex(dir: string, keyBits: number): void;
  writeKeyRange(partDirs: string[], out: string, firstId: number, range: number, ranges: number, tmp?: string): Promise<{ keys: number; posts: number }>;
  openPostingIndex(dir: string, verify: boolean): Promise<NativePostingIndex>;
  chunkIndexProbe(dir: string): { manifest: number | null; pending: number | null; stage: boolean };
  chunkIndexFileName(name: string): boolean;
  /** Whether a process holds the lock file at `path` (io::os::ProbeLock). */
  chunkIndexLockState(path: string): 'held' | 'free' | 'unknown';
  openChunkIndex(dir: string, which: 'MANIFEST' | 'PENDING', verify: boolean): Promise<NativeChunkIndex>;
  chunkIndexCommit(dir: string): void;
  createChunkBuilder(dir: string, params: object, memory: number, tmp?: string): NativeChunkBuilder;
  createChunkUpdater(index: NativeChunkIndex, memory: number, tmp?: string): NativeChunkUpdater;
  chunkStagePart(dir: string, part: number, parts: number | undefined, pairsPath: string, memory: number, tmp?: string): Promise<void>;
  chunkStageFinish(dir: string, pairsPaths: string[], memory: number, tmp?: string): Promise<NativeChunkIndex>;
  chunkTexts(texts: TextInput, options: object): Promise<{ chunks: BigUint64Array; offsets: Uint32Array }>;
}

export const native = load(path.join(__dirname, '..', '..')) as NativeBinding;
// Results are refused with ERR_NEARDUP_RESULT_TOO_LARGE beyond what one ArrayBuffer can hold here.
native.setMaxResultBytes(require('node:buffer').constants.MAX_LENGTH);
