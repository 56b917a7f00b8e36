// Argument checks shared by the API wrappers: each throws a TypeError (wrong type) or RangeError (bad value)
// with code ERR_NEARDUP_INVALID_ARGUMENT, naming the argument, before any work starts.
import { invalidArgument } from './errors';

const U64_MAX = (1n << 64n) - 1n;

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** An options object (undefined: {}). */
export function optionsObject<T extends object>(v: T | undefined, what = 'options'): T {
  if (v === undefined) return {} as T;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalidArgument(TypeError, `Expected ${what} to be an object, got ${typeName(v)}`);
  return v;
}

export function expectArray<T>(v: ReadonlyArray<T>, what: string): ReadonlyArray<T> {
  if (!Array.isArray(v)) throw invalidArgument(TypeError, `Expected ${what} to be an array, got ${typeName(v)}`);
  return v;
}

export function expectString(v: unknown, what: string): string {
  if (typeof v !== 'string') throw invalidArgument(TypeError, `Expected ${what} to be a string, got ${typeName(v)}`);
  return v;
}

/**
 * A path: a string without NUL bytes (the system would cut it at the first one, and a file or folder of the
 * truncated name would be created or read): a TypeError ERR_INVALID_ARG_VALUE, as Node's fs and the addon give.
 */
export function expectPath(v: unknown, what: string): string {
  expectString(v, what);
  const s = v as string;
  if (s.includes('\0'))
    throw Object.assign(new TypeError(`The argument '${what}' must be a string without null bytes. Received ${JSON.stringify(s)}`), { code: 'ERR_INVALID_ARG_VALUE' as const });
  return s;
}

/** Every element a string or Uint8Array (or null where `nullable`). */
export function expectTexts(v: ReadonlyArray<unknown>, what: string, nullable = false): void {
  expectArray(v, what);
  for (let i = 0; i < v.length; i++) {
    const t = v[i];
    if (typeof t !== 'string' && !(t instanceof Uint8Array) && !(nullable && t === null))
      throw invalidArgument(TypeError, `Expected ${what}[${i}] to be a string${nullable ? ', null' : ''} or Uint8Array, got ${typeName(t)}`);
  }
}

export function expectUint32Array(v: unknown, what: string): Uint32Array {
  if (!(v instanceof Uint32Array)) throw invalidArgument(TypeError, `Expected ${what} to be a Uint32Array, got ${typeName(v)}`);
  return v;
}

/** A number that is an integer in [min, max]. */
export function expectInt(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number') throw invalidArgument(TypeError, `Expected ${what} to be a number, got ${typeName(v)}`);
  if (!Number.isInteger(v) || v < min || v > max) throw invalidArgument(RangeError, `${what} must be an integer from ${min} to ${max}, got ${v}`);
  return v;
}

/** A number in [min, max]. */
export function expectNumber(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number') throw invalidArgument(TypeError, `Expected ${what} to be a number, got ${typeName(v)}`);
  if (!(v >= min && v <= max)) throw invalidArgument(RangeError, `${what} must be from ${min} to ${max}, got ${v}`);
  return v;
}

/** A bigint in [0, 2^64) (or a non-negative safe integer number where `numbers`). */
export function expectU64(v: unknown, what: string, numbers = false): bigint {
  if (typeof v === 'number' && numbers) {
    if (!Number.isSafeInteger(v) || v < 0) throw invalidArgument(RangeError, `${what} must be a non-negative integer, got ${v}`);
    return BigInt(v);
  }
  if (typeof v !== 'bigint') throw invalidArgument(TypeError, `Expected ${what} to be a bigint${numbers ? ' or number' : ''}, got ${typeName(v)}`);
  if (v < 0n || v > U64_MAX) throw invalidArgument(RangeError, `${what} must be from 0 to 2^64-1`);
  return v;
}

/** A BigUint64Array as it is, or an array of u64 values (bigints; numbers too where `numbers`) converted. */
export function toU64Array(v: unknown, what: string, numbers = false): BigUint64Array {
  if (v instanceof BigUint64Array) return v;
  if (!Array.isArray(v)) throw invalidArgument(TypeError, `Expected ${what} to be a BigUint64Array or an array of bigints, got ${typeName(v)}`);
  const out = new BigUint64Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = expectU64(v[i], `${what}[${i}]`, numbers);
  return out;
}

/**
 * The default cap of quadratic results (LshIndex.queryBatch ids in all, LshIndex.candidatePairs,
 * simhashFindAll and dedup pairs): 2^25. A result beyond its cap fails with ERR_NEARDUP_TOO_MANY_RESULTS.
 */
export const DEFAULT_MAX_RESULTS = 2 ** 25;

/** The cap option `key` of `options` (default DEFAULT_MAX_RESULTS): a non-negative safe integer. */
export function capOption(options: unknown, key: string): number {
  if (options === null || typeof options !== 'object') throw invalidArgument(TypeError, 'Expected options to be an object');
  const v = (options as Record<string, unknown>)[key] ?? DEFAULT_MAX_RESULTS;
  if (typeof v !== 'number') throw invalidArgument(TypeError, `Expected ${key} to be a number`);
  if (!Number.isSafeInteger(v) || v < 0) throw invalidArgument(RangeError, `${key} must be a non-negative integer`);
  return v;
}

/** A size such as 512M, 8G, 64k or 1024 (bytes; K/M/G/T are powers of 1024); undefined when malformed. */
export function parseByteSize(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)([kKmMgGtT]?)i?[bB]?$/.exec(s);
  if (!m) return undefined;
  const mult = { '': 1, k: 1 << 10, m: 1 << 20, g: 1 << 30, t: 2 ** 40 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Math.floor(Number(m[1]) * mult);
}
