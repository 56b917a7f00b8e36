// Loads the addon (a prebuild from prebuilds/ or the local build/, via node-gyp-build) and types it once,
// at the boundary. Everything else in lib/ talks to the native code through `native` only.
import * as path from 'node:path';

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

export interface NativeShingleOptions {
  unit?: 'char' | 'word';
  n?: number;
  split?: 'whitespace' | 'nonword';
  lowercase?: boolean;
  stripPunctuation?: boolean;
  foldWhitespace?: boolean;
  short?: 'whole' | 'none';
  hash?: 'fast64' | 'murmur3_32' | 'murmur3_64' | 'sha1_32' | 'md5_64';
  seed?: number | bigint;
  dedupe?: boolean;
}

export interface NativeShingleResult {
  hashes: BigUint64Array | Uint32Array;
  offsets: Uint32Array;
  invalidUtf8Docs: number;
}

export interface NativeParagraphFilterOptions {
  n?: number;
  threshold?: number;
  smoothing?: boolean;
  maxStub?: number;
  withinDocument?: boolean;
  keepUniqueShort?: boolean;
  seen?: 'exact' | 'approx';
  fpRate?: number;
  docTag?: string;
  parTag?: string;
  output?: 'none' | 'mark' | 'strip';
}

export interface NativeParagraphFilterStats {
  documents: number;
  removedDocuments: number;
  paragraphs: number;
  duplicateParagraphs: number;
  tokens: number;
  removedTokens: number;
  lines: number;
  seenKind: 'exact' | 'approx';
  seenSize: number;
  seenBytes: number;
  seenStages?: number;
  fpBound?: number;
}

export interface NativeParagraphFilter {
  pushVertical(chunk: Uint8Array, final: boolean): Promise<{ flags: Uint8Array; text: Buffer }>;
  pushParagraphs(texts: TextInput, docOffsets: Uint32Array): Promise<{ dup: Uint8Array; docRemoved: Uint8Array; tokens: Uint32Array }>;
  saveSeen(path: string): Promise<void>;
  loadSeen(path: string): Promise<{ kind: 'exact' | 'approx'; size: number }>;
  stats(): NativeParagraphFilterStats;
  close(): void;
}

export interface NativeBinding {
  ParagraphFilter: new (options?: NativeParagraphFilterOptions) => NativeParagraphFilter;
  getThreads(): number;
  setThreads(n: number): void;
  runtimeInfo(): { simd: string; defaultThreads: number };
  shingleHashes(texts: TextInput, options?: NativeShingleOptions): Promise<NativeShingleResult>;
  shingleHashesSync(texts: TextInput, options?: NativeShingleOptions): NativeShingleResult;
}

export const native = load(path.join(__dirname, '..')) as NativeBinding;
