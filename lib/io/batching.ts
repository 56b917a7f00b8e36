// What long batch calls share: documents from arrays, packed buffers or (async) iterables, encoded once to
// UTF-8 on the JS thread in bounded time slices (yielding to the event loop between them), cut into batches
// bounded in documents and bytes; AbortSignal handling.
import { NeardupError } from '../util/errors';
import type { PackedTexts } from '../native/addon';

/** One document: its text, its UTF-8 bytes, or null (a skipped slot: keeps its number, never matches). */
export type DocumentInput = string | Uint8Array | null;

/**
 * Documents of a long call: an array, one packed buffer (packTexts), or any iterable or async iterable of
 * documents (a generator, a stream in object mode, ...), consumed once, in order.
 */
export type DocumentSource = ReadonlyArray<DocumentInput> | PackedTexts | Iterable<DocumentInput> | AsyncIterable<DocumentInput>;

/** Progress of a long call, reported after each batch. */
export interface BatchProgress {
  /** Documents done so far. */
  documents: number;
  /** Total documents, when the input says (arrays and packed input), else undefined. */
  total?: number;
  /** Bytes of UTF-8 text done so far. */
  bytes: number;
}

/** Options every long call takes. */
export interface LongCallOptions {
  /** Stops the call: it rejects with a NeardupError of code ERR_NEARDUP_ABORTED (cause: the signal's reason). */
  signal?: AbortSignal;
  /** Called after each batch (and never after the call settles). */
  onProgress?: (progress: BatchProgress) => void;
}

/** Longest time the JS thread spends encoding before it yields to the event loop. */
const SLICE_MS = 5;
/** Batch bounds: documents, and bytes of text (which bound the per-batch work on the JS thread). */
export const BATCH_DOCS = 4096;
export const BATCH_BYTES = 4 << 20;

export function isPacked(x: unknown): x is PackedTexts {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && 'data' in x && 'offsets' in x &&
    (x as PackedTexts).data instanceof Uint8Array &&
    ((x as PackedTexts).offsets instanceof Uint32Array || (x as PackedTexts).offsets instanceof BigUint64Array);
}

/** A TypeError/RangeError with code ERR_NEARDUP_INVALID_ARGUMENT, as the rest of the API throws. */
function argError(E: typeof TypeError | typeof RangeError, message: string): Error {
  return Object.assign(new E(message), { code: 'ERR_NEARDUP_INVALID_ARGUMENT' });
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A clock for slicing: yields to the event loop once SLICE_MS have passed since the last yield. */
export class Slicer {
  private t0 = performance.now();
  async tick(): Promise<void> {
    if (performance.now() - this.t0 < SLICE_MS) return;
    await yieldToLoop();
    this.t0 = performance.now();
  }
}

/** A batch ready for the native calls: packed UTF-8, and which documents are real (not null). */
export interface EncodedBatch {
  packed: PackedTexts;
  /** 1 = a document, 0 = a null slot; undefined when every document is real. */
  valid?: Uint8Array;
  count: number;
  bytes: number;
}

/** First capacity of a batch's buffer; it doubles as documents come, up to the batch bound. */
const FIRST_CAPACITY = 64 << 10;

/**
 * Packs documents into one UTF-8 buffer as they come, so that a caller's strings can die young (a string
 * kept until its whole batch is encoded survives the young generation's collections, and copying and
 * promoting them was most of the event loop's longest stalls). Cut into batches of at most `maxDocs`
 * documents and `maxBytes` bytes (a larger document is a batch of its own).
 */
export class BatchEncoder {
  private data: Buffer = Buffer.allocUnsafe(0);
  private pos = 0;
  private offsets: Uint32Array;
  private count = 0;
  private valid: Uint8Array | undefined;
  /** Documents added before this batch (for error messages). */
  private before = 0;

  constructor(private readonly maxDocs = BATCH_DOCS, private readonly maxBytes = BATCH_BYTES) {
    this.offsets = new Uint32Array(Math.min(maxDocs, 1024) + 1);
  }

  /** Documents in the batch being filled. */
  get size(): number {
    return this.count;
  }

  /** Adds one document; returns the batch it closed when it did not fit (the document opens the next). */
  add(d: DocumentInput): EncodedBatch | undefined {
    let out: EncodedBatch | undefined;
    if (this.count >= this.maxDocs || (this.count > 0 && this.pos >= this.maxBytes)) out = this.take();
    if (d === null || d === undefined) {
      this.slot();
      this.valid ??= new Uint8Array(this.offsets.length - 1).fill(1);
      this.valid[this.count - 1] = 0;
      this.offsets[this.count] = this.pos;
      return out;
    }
    let need: number;
    if (typeof d === 'string') need = this.pos + d.length * 3 <= this.data.length ? 0 : Buffer.byteLength(d, 'utf8');
    else if (d instanceof Uint8Array) need = d.byteLength;
    else throw argError(TypeError, `document ${this.before + this.count} must be a string, a Uint8Array or null, got ${typeof d}`);
    if (need > 0 && this.pos + need > this.data.length) {
      if (this.count > 0 && this.pos + need > this.maxBytes && out === undefined) out = this.take();
      this.grow(this.pos + need);
    }
    this.slot();
    this.pos += typeof d === 'string' ? this.data.write(d, this.pos, 'utf8') : (this.data.set(d, this.pos), d.byteLength);
    this.offsets[this.count] = this.pos;
    return out;
  }

  /** The batch so far (undefined when empty); the next one starts empty. */
  take(): EncodedBatch | undefined {
    if (this.count === 0) return undefined;
    const n = this.count;
    const batch: EncodedBatch = {
      packed: { data: this.data.subarray(0, this.pos), offsets: this.offsets.subarray(0, n + 1) },
      valid: this.valid?.subarray(0, n), count: n, bytes: this.pos,
    };
    this.before += n;
    this.data = Buffer.allocUnsafe(0);
    this.pos = 0;
    this.offsets = new Uint32Array(Math.min(this.maxDocs, 1024) + 1);
    this.count = 0;
    this.valid = undefined;
    return batch;
  }

  /** Room for one more document number. */
  private slot(): void {
    if (this.count + 1 >= this.offsets.length) {
      const o = new Uint32Array(Math.min(this.maxDocs, 2 * (this.offsets.length - 1)) + 1);
      o.set(this.offsets);
      this.offsets = o;
      if (this.valid) {
        const v = new Uint8Array(o.length - 1).fill(1);
        v.set(this.valid);
        this.valid = v;
      }
    }
    this.count++;
  }

  private grow(min: number): void {
    if (min > 0xffffffff) throw argError(RangeError, 'a batch holds more than 4 GiB of text');
    let cap = Math.max(FIRST_CAPACITY, this.data.length);
    while (cap < min) cap *= 2;
    // within the bound: doubling up to it; a document past it: exactly its size (it is a batch of its own)
    cap = min <= this.maxBytes ? Math.min(cap, this.maxBytes) : this.count === 0 && Number.isFinite(this.maxBytes) ? min : cap;
    const next = Buffer.allocUnsafe(cap);
    this.data.copy(next, 0, 0, this.pos);
    this.data = next;
  }
}

/**
 * Encodes documents once into one packed buffer, in slices of at most a few milliseconds of JS-thread
 * time (a single string is encoded in one go, so one huge document still takes its own encoding time).
 */
export async function encodeBatch(docs: ReadonlyArray<DocumentInput>, signal?: AbortSignal): Promise<EncodedBatch> {
  if (!Array.isArray(docs)) throw argError(TypeError, `documents must be an array of strings, Uint8Arrays or null, got ${typeof docs}`);
  const enc = new BatchEncoder(Infinity, Infinity);
  const slicer = new Slicer();
  for (let i = 0; i < docs.length; i++) {
    enc.add(docs[i]);
    if ((i & 31) === 31) {
      await slicer.tick();
      throwIfAborted(signal);
    }
  }
  return enc.take() ?? { packed: { data: Buffer.alloc(0), offsets: new Uint32Array(1) }, count: 0, bytes: 0 };
}

/** Documents i .. j of packed input as packed input of their own (a view of the data, offsets rebased). */
function packedSlice(p: PackedTexts, i: number, j: number): EncodedBatch {
  const at = (k: number) => Number(p.offsets[k]);
  const base = at(i);
  const offsets = new Uint32Array(j - i + 1);
  for (let k = i; k <= j; k++) offsets[k - i] = at(k) - base;
  return { packed: { data: p.data.subarray(base, at(j)), offsets }, count: j - i, bytes: at(j) - base };
}

/**
 * The source cut into encoded batches of at most BATCH_DOCS documents and BATCH_BYTES bytes of UTF-8 (a larger
 * document is a batch of its own), each document encoded as it comes.
 */
export async function* encodedBatches(source: DocumentSource, signal?: AbortSignal): AsyncGenerator<EncodedBatch> {
  checkSource(source);
  if (isPacked(source)) {
    const n = source.offsets.length - 1;
    if (n < 0) throw argError(RangeError, 'packed input: offsets must hold documents + 1 values');
    const end = Number(source.offsets[n]);
    if (end > source.data.byteLength || Number(source.offsets[0]) > end)
      throw argError(RangeError, 'packed input: offsets run past the data');
    for (let i = 0; i < n;) {
      let j = i + 1;
      while (j < n && j - i < BATCH_DOCS && Number(source.offsets[j + 1]) - Number(source.offsets[i]) <= BATCH_BYTES) j++;
      if (Number(source.offsets[j]) < Number(source.offsets[i]))
        throw argError(RangeError, `packed input: offsets decrease between documents ${i} and ${j}`);
      throwIfAborted(signal);
      yield packedSlice(source, i, j);
      i = j;
    }
    return;
  }
  const it = source as Iterable<DocumentInput> | AsyncIterable<DocumentInput>;
  if (typeof (it as AsyncIterable<DocumentInput>)[Symbol.asyncIterator] !== 'function' && typeof (it as Iterable<DocumentInput>)[Symbol.iterator] !== 'function')
    throw argError(TypeError, 'documents must be an array, packed input ({ data, offsets }) or an (async) iterable');
  const enc = new BatchEncoder();
  const slicer = new Slicer();
  let i = 0;
  if (Array.isArray(source)) {
    // read by index: no async iteration per document
    const docs = source as ReadonlyArray<DocumentInput>;
    for (let k = 0; k < docs.length; k++) {
      const b = enc.add(docs[k]);
      if (b) yield b;
      if ((++i & 31) === 0) {
        await slicer.tick();
        throwIfAborted(signal);
      }
    }
  } else {
    for await (const d of abortable(it, signal)) {
      const b = enc.add(d);
      if (b) yield b;
      if ((++i & 31) === 0) {
        await slicer.tick();
        throwIfAborted(signal);
      }
    }
  }
  throwIfAborted(signal);
  const last = enc.take();
  if (last) yield last;
}

/**
 * The items of an (async) iterable; with a signal, a next() that is still waiting (a source that stalls)
 * loses to the abort, and the source is then told to stop (return()) without waiting for it.
 */
export async function* abortable<T>(source: Iterable<T> | AsyncIterable<T>, signal?: AbortSignal): AsyncGenerator<T> {
  if (!signal) {
    yield* source as AsyncIterable<T>;
    return;
  }
  const it: Iterator<T> | AsyncIterator<T> = typeof (source as AsyncIterable<T>)[Symbol.asyncIterator] === 'function'
    ? (source as AsyncIterable<T>)[Symbol.asyncIterator]()
    : (source as Iterable<T>)[Symbol.iterator]();
  let finished = false;
  try {
    for (;;) {
      const r = await raceAbort(Promise.resolve(it.next()), signal);
      if (r.done) {
        finished = true;
        return;
      }
      yield r.value;
    }
  } finally {
    if (!finished && it.return) Promise.resolve().then(() => it.return!()).catch(() => undefined);
  }
}

/** A string or a byte array is iterable, but as one document it is a mistake, not a source: say so. */
export function checkSource(source: unknown): void {
  if (typeof source === 'string' || source instanceof Uint8Array)
    throw argError(TypeError, 'documents must be an array, packed input ({ data, offsets }) or an (async) iterable of documents, not a single ' +
      (typeof source === 'string' ? 'string' : 'Uint8Array'));
}

/** Total documents of a source, when it says (arrays, packed input). */
export function knownTotal(source: DocumentSource): number | undefined {
  if (isPacked(source)) return source.offsets.length - 1;
  if (Array.isArray(source)) return source.length;
  return undefined;
}

export function abortedError(signal: AbortSignal): NeardupError {
  return new NeardupError('ERR_NEARDUP_ABORTED', 'the operation was aborted', { cause: signal.reason });
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}

/** Settles like p, or rejects with ERR_NEARDUP_ABORTED as soon as the signal aborts. */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(abortedError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => undefined);
      reject(abortedError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}

export function checkSignal(signal: unknown): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (!(signal instanceof AbortSignal))
    throw argError(TypeError, 'signal must be an AbortSignal');
  return signal;
}
