// lib/minhash/ - MinHash and what stands on it (mirror of native/core/minhash):
//   minhash.ts     this file: signatures, signature files; lsh.ts: LshIndex, banding; dedup.ts: dedup() and
//   DedupSession; dedup-index.ts: the index of earlier runs and dedup's options; doubri-dedup.ts: doubri's
//   self/other on .hash files. Imports text/, io/, native/, util/ only, no other engine.
//
// MinHash signatures: k unsigned 32-bit values per document, in three profiles (docs/minhash.md):
//   'fast' (default)  fast64 shingle hash, one-permutation hashing with optimal densification
//   'doubri-v1'       byte-compatible with doubri 1.0 (800 x MurmurHash3_x86_32, seeds 0..799)
//   'datasketch'      byte-compatible with datasketch 1.x MinHash (SHA-1, numpy RandomState permutations)
//
// Layout of every result: `signatures` is one flat Uint32Array, document-major: document i's values are
// signatures[i*numPerm .. (i+1)*numPerm). Its bytes (signatures.buffer, host order = little-endian on
// every supported platform) read in Python as numpy.frombuffer(buf, dtype='<u4').reshape(count, numPerm).
import * as fs from 'node:fs';
import { NeardupError, nativeCall, nativeSync, invalidArgument } from '../util/errors';
import { expectArray, expectInt, expectString, expectTexts, expectUint32Array, optionsObject } from '../util/validate';
import { native, type NativeSignatureWriter, type TextInput } from '../native/addon';
import type { ShingleOptions } from '../text/shingles';
import {
  BatchEncoder, Slicer, abortable, checkSignal, checkSource, encodedBatches, isPacked, knownTotal, raceAbort, throwIfAborted,
  type DocumentInput, type DocumentSource, type EncodedBatch, type LongCallOptions,
} from '../io/batching';

export type MinHashProfile = 'fast' | 'doubri-v1' | 'datasketch';

export interface MinHashOptions extends ShingleOptions {
  /** 'fast' (default), 'doubri-v1' or 'datasketch'. */
  profile?: MinHashProfile;
  /**
   * Values per signature (k). Defaults: fast 128 (1..1024), doubri-v1 800, datasketch 128 (1..65536).
   */
  numPerm?: number;
  /**
   * fast: the fast64 seed (64-bit, default 0); doubri-v1: the first Murmur3 seed (value i uses seed+i,
   * default 0); datasketch: numpy RandomState seed (0..2^32-1, default 1).
   */
  seed?: number | bigint;
}

/**
 * Shingle defaults per profile (each overridable by the ShingleOptions):
 * - fast and doubri-v1: code-point 5-grams of the text as is (unit 'char', n 5, no normalisation);
 * - datasketch: Python's `text.lower().split()` word 5-grams (unit 'word', n 5, lowercase, split
 *   'whitespace'); pass unit 'char' for the code points of `text.lower()`.
 * Texts shorter than n: one shingle of all of it (fast, datasketch; empty texts have none and give
 * 0xFFFFFFFF everywhere) or, for doubri-v1, the single shingle "EMPTY" (doubri's rule).
 */
export interface MinHashResult {
  /** count x numPerm values, document-major. */
  signatures: Uint32Array;
  /** Values per signature (k). */
  numPerm: number;
  /** Number of documents. */
  count: number;
  /** Documents that had invalid UTF-8 (decoded with U+FFFD substitution). */
  invalidUtf8Docs: number;
}

/** Signatures of a batch, computed on the native thread pool (the event loop is not blocked). */
export function minhash(texts: TextInput, options?: MinHashOptions): Promise<MinHashResult> {
  return nativeCall(native.minhash(texts, options));
}

/** The same, synchronously on the calling thread (single-threaded): for small inputs. */
export function minhashSync(texts: TextInput, options?: MinHashOptions): MinHashResult {
  return nativeSync(() => native.minhashSync(texts, options));
}

/**
 * Signatures of given shingle sets (no tokenizing: each shingle is hashed as its UTF-8 bytes), e.g. to
 * reproduce `MinHash.update_batch([s.encode() for s in shingles])` exactly whatever the tokenizer.
 */
export function minhashOfShingles(
  sets: ReadonlyArray<ReadonlyArray<string | Uint8Array>>,
  options?: MinHashOptions,
): MinHashResult {
  expectArray(sets, 'sets');
  sets.forEach((s, i) => expectTexts(s, `sets[${i}]`));
  optionsObject(options);
  const flat: (string | Uint8Array)[] = [];
  const counts = new Uint32Array(sets.length);
  sets.forEach((s, i) => {
    counts[i] = s.length;
    for (const x of s) flat.push(x);
  });
  return nativeSync(() => native.minhashShinglesSync(flat, counts, options));
}

/** datasketch 1.x permutations (a_i, b_i) for a seed, as numpy RandomState(seed) draws them. */
export function datasketchPermutations(seed: number | bigint = 1, numPerm = 128): { a: BigUint64Array; b: BigUint64Array } {
  return nativeSync(() => native.datasketchPermutations({ seed, numPerm }));
}

/** Document i's signature (a view, not a copy). */
export function signatureAt(result: Pick<MinHashResult, 'signatures' | 'numPerm'>, i: number): Uint32Array {
  optionsObject(result, 'result');
  expectUint32Array(result.signatures, 'result.signatures');
  expectInt(result.numPerm, 'result.numPerm', 1, 2 ** 32);
  expectInt(i, 'i', 0, result.signatures.length / result.numPerm - 1);
  return result.signatures.subarray(i * result.numPerm, (i + 1) * result.numPerm);
}

/** The MinHash estimate of Jaccard similarity: the fraction of equal values. */
export function estimateJaccard(a: Uint32Array, b: Uint32Array): number {
  expectUint32Array(a, 'a');
  expectUint32Array(b, 'b');
  if (a.length !== b.length || a.length === 0)
    throw invalidArgument(RangeError, 'estimateJaccard: signatures must have the same, non-zero length');
  let eq = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) eq++;
  return eq / a.length;
}

/**
 * Streaming form for inputs larger than memory. The source is either documents (an array, packed input, or
 * an iterable / async iterable of strings, UTF-8 bytes or null), cut into batches of at most 4096 documents or
 * about 4 MiB of text and encoded once in time slices, or batches (an iterable / async iterable of TextInput,
 * e.g. arrays of a few thousand texts), signed as they are. Yields each batch's result in order; a null
 * document gets a row of 0xFFFFFFFF. One batch is in flight at a time, so memory stays at one batch of texts
 * plus its signatures. `signal` stops the stream (ERR_NEARDUP_ABORTED); `onProgress` follows each batch.
 */
export async function* minhashStream(
  source: DocumentSource | AsyncIterable<TextInput> | Iterable<TextInput>,
  options?: MinHashOptions & LongCallOptions,
): AsyncGenerator<MinHashResult> {
  const { signal: sig, onProgress, ...mh } = options ?? {};
  const signal = checkSignal(sig);
  checkSource(source);
  throwIfAborted(signal);
  const total = knownTotal(source as DocumentSource);
  let documents = 0, bytes = 0;
  const done = (r: MinHashResult, b: number) => {
    documents += r.count;
    bytes += b;
    if (!signal?.aborted) onProgress?.({ documents, total, bytes });
    return r;
  };
  if (isPacked(source) || Array.isArray(source)) {
    for await (const b of encodedBatches(source as DocumentSource, signal)) yield done(await signBatch(b, mh, signal), b.bytes);
    return;
  }
  // An iterable of batches or of documents: the first item tells which.
  const it = source as AsyncIterable<unknown>;
  if (typeof it?.[Symbol.asyncIterator] !== 'function' && typeof (it as unknown as Iterable<unknown>)?.[Symbol.iterator] !== 'function')
    throw Object.assign(new TypeError('minhashStream: the source must be documents or an (async) iterable of batches'),
      { code: 'ERR_NEARDUP_INVALID_ARGUMENT' });
  const isDoc = (x: unknown) => x === null || typeof x === 'string' || x instanceof Uint8Array;
  let mode: 'docs' | 'batches' | undefined;
  const enc = new BatchEncoder(); // each document encoded as it comes (its string can die young)
  let n = 0;
  const slicer = new Slicer();
  for await (const item of abortable(it, signal)) {
    mode ??= isDoc(item) ? 'docs' : 'batches';
    if (mode !== (isDoc(item) ? 'docs' : 'batches'))
      throw Object.assign(new TypeError('minhashStream: the source mixes documents and batches'), { code: 'ERR_NEARDUP_INVALID_ARGUMENT' });
    throwIfAborted(signal);
    if (mode === 'batches') {
      yield done(await raceAbort(minhash(item as TextInput, mh), signal), 0);
      continue;
    }
    const b = enc.add(item as DocumentInput);
    if (b) yield done(await signBatch(b, mh, signal), b.bytes);
    if ((++n & 31) === 0) await slicer.tick();
  }
  const last = enc.take();
  if (last) yield done(await signBatch(last, mh, signal), last.bytes);
}

async function signBatch(b: EncodedBatch, options: MinHashOptions, signal?: AbortSignal): Promise<MinHashResult> {
  const r = await raceAbort(minhash(b.packed, options), signal);
  if (b.valid) {
    for (let i = 0; i < b.count; i++) if (b.valid[i] === 0) r.signatures.fill(0xffffffff, i * r.numPerm, (i + 1) * r.numPerm);
  }
  return r;
}

export type SignatureFileFormat = 'neardup' | 'doubri';

/**
 * Writes signatures to a file as they are computed (docs/FORMAT.md section 5): 'neardup' ("MHSG": the
 * common 64-byte header, N*k u32 LE, then the options as JSON) or 'doubri' (doubri 1.0's `.hash`).
 * The file appears under its name only on commit() (temporary file + fsync + rename).
 */
export class SignatureWriter {
  private readonly w: NativeSignatureWriter;
  readonly numPerm: number;

  constructor(path: string, options: { format?: SignatureFileFormat; numPerm: number; profile?: MinHashProfile; meta?: unknown }) {
    this.numPerm = options.numPerm;
    this.w = nativeSync(() => new native.SignatureWriter(path, {
      format: options.format ?? 'neardup',
      numPerm: options.numPerm,
      profile: options.profile ?? 'fast',
      options: JSON.stringify(options.meta ?? {}, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    }));
  }
  /** Appends records (length a multiple of numPerm). */
  append(signatures: Uint32Array): void {
    nativeSync(() => this.w.append(signatures));
  }
  /** Finishes the file; returns the number of records. */
  commit(): number {
    return nativeSync(() => this.w.commit());
  }
  /** Drops the temporary file (no-op after commit). */
  abort(): void {
    this.w.abort();
  }
  get records(): number {
    return this.w.records;
  }
}

export interface SignatureFile {
  format: SignatureFileFormat;
  count: number;
  numPerm: number;
  /** Profile id from the header (neardup format), undefined for doubri files. */
  profile?: MinHashProfile;
  /** The options stored in the file (neardup format). */
  meta?: unknown;
  signatures: Uint32Array;
}

/** True when `head` starts like a doubri 1.0 `.hash` file (24-byte header, "MinHash" magic). */
function isDoubriHash(head: Buffer): boolean {
  return head.length >= 24 && head.subarray(0, 7).toString('latin1') === 'MinHash';
}

/**
 * The header of a doubri 1.0 `.hash` file ("MinHash", u8 bytes per value, u64 LE N, u64 LE k), checked against
 * the file size (24 + N*k*bytes exactly). `head` holds at least the file's first 24 bytes.
 */
export function doubriHashHeader(head: Buffer, fileSize: number, file: string): { count: number; numPerm: number; valueBytes: number } {
  if (!isDoubriHash(head))
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is not a doubri .hash file (no "MinHash" header)`, { file, offset: 0 });
  const valueBytes = head[7];
  const n = head.readBigUInt64LE(8), k = head.readBigUInt64LE(16);
  if (k === 0n) throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}': header announces 0 values per record`, { file, offset: 16 });
  if (BigInt(fileSize) !== 24n + n * k * BigInt(valueBytes))
    throw new NeardupError('ERR_NEARDUP_CORRUPT',
      `'${file}': header announces ${n} records of ${k} values (${valueBytes} bytes each) but the file has ${fileSize} bytes`,
      { file, offset: 8 });
  return { count: Number(n), numPerm: Number(k), valueBytes };
}

const PROFILES: MinHashProfile[] = ['fast', 'doubri-v1', 'datasketch'];

/** Bytes read per system call by readSignatureFile (fs reads are limited to 2 GiB each). */
const READ_CHUNK = 64 << 20;

/**
 * Reads a whole signature file of either format into memory, in chunks (so files over 2 GiB work; the
 * signatures must fit one Uint32Array). Checks magic, kind, version, header fields and sizes, and for the
 * neardup format both CRC-32C checksums (header and payload), as docs/FORMAT.md requires of readers.
 */
export function readSignatureFile(path: string): SignatureFile {
  expectString(path, 'path');
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${path}': ${(e as Error).message}`, { file: path, cause: e });
  }
  try {
    return readSignatureFd(fd, path);
  } finally {
    fs.closeSync(fd);
  }
}

function readSignatureFd(fd: number, path: string): SignatureFile {
  const corrupt = (why: string, offset = 0) => new NeardupError('ERR_NEARDUP_CORRUPT', `'${path}': ${why}`, { file: path, offset });
  const readAt = (into: Uint8Array, position: number) => {
    for (let done = 0; done < into.length;) {
      const n = Math.min(READ_CHUNK, into.length - done);
      let got: number;
      try {
        got = fs.readSync(fd, into.subarray(done, done + n), 0, n, position + done);
      } catch (e) {
        throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${path}': ${(e as Error).message}`, { file: path, cause: e });
      }
      if (got === 0) throw corrupt(`file ended at offset ${position + done} while reading`, position + done);
      done += got;
    }
  };
  if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', 'big-endian hosts are not supported');
  const size = fs.fstatSync(fd).size;
  const head = Buffer.alloc(Math.min(64, size));
  readAt(head, 0);
  // The signatures, read straight into their array; `crc` (neardup format) is updated chunk by chunk.
  const signatures = (at: number, values: number, crc: number | undefined): { sig: Uint32Array; crc: number } => {
    let sig: Uint32Array;
    try {
      sig = new Uint32Array(values);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_RESULT_TOO_LARGE',
        `'${path}': ${values} signature values do not fit one typed array; split the file`, { file: path, cause: e });
    }
    const bytes = new Uint8Array(sig.buffer);
    for (let done = 0; done < bytes.length; done += READ_CHUNK) {
      const part = bytes.subarray(done, Math.min(bytes.length, done + READ_CHUNK));
      readAt(part, at + done);
      if (crc !== undefined) crc = native.crc32c(part, crc);
    }
    return { sig, crc: crc ?? 0 };
  };
  const h = nativeSync(() => native.signatureFileHeader(head, size, path));
  if (h.format === 'doubri')
    return { format: 'doubri', count: h.count, numPerm: h.numPerm, signatures: signatures(h.valuesOffset, h.count * h.numPerm, undefined).sig };
  const trailer = Buffer.alloc(size - h.trailerOffset);
  const { sig, crc: sigCrc } = signatures(h.valuesOffset, h.count * h.numPerm, 0);
  readAt(trailer, h.trailerOffset);
  if (native.crc32c(trailer, sigCrc) !== h.payloadCrc) throw corrupt('payload checksum mismatch', 32);
  let meta: unknown;
  try {
    meta = JSON.parse(trailer.toString('utf8') || '{}');
  } catch {
    throw corrupt('bad options trailer', h.trailerOffset);
  }
  return { format: 'neardup', count: h.count, numPerm: h.numPerm, profile: PROFILES[h.profile], meta, signatures: sig };
}
