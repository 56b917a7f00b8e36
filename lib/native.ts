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

export interface NativeBinding {
  getThreads(): number;
  setThreads(n: number): void;
  runtimeInfo(): { simd: string; defaultThreads: number };
  shingleHashes(texts: TextInput, options?: NativeShingleOptions): Promise<NativeShingleResult>;
  shingleHashesSync(texts: TextInput, options?: NativeShingleOptions): NativeShingleResult;
  minhash(texts: TextInput, options?: NativeMinHashOptions): Promise<NativeMinHashResult>;
  minhashSync(texts: TextInput, options?: NativeMinHashOptions): NativeMinHashResult;
  minhashShinglesSync(shingles: TextInput, counts: Uint32Array, options?: NativeMinHashOptions): NativeMinHashResult;
  datasketchPermutations(options?: { seed?: number | bigint; numPerm?: number }): { a: BigUint64Array; b: BigUint64Array };
  SignatureWriter: new (path: string, options?: NativeSignatureWriterOptions) => NativeSignatureWriter;
}

export const native = load(path.join(__dirname, '..')) as NativeBinding;
