// lib/util/ - the ground floor: imports nothing in lib/ outside this folder (test/layout.test.ts).
//   errors.ts      this file: NeardupError, its ERR_NEARDUP_* codes, coded native errors converted
//   validate.ts    argument checks of the API (TypeError/RangeError with code ERR_NEARDUP_INVALID_ARGUMENT)
//   options.ts     option-value checks of the CLI and of the plans that store flags (UsageError)
//   version.ts     the package's version; test-hooks.ts: NEARDUP_TEST_* (HACKING.md, "Test hooks")
// Guarantee: what lib/ throws at a library caller is a NeardupError with a stable code, or a TypeError /
// RangeError with code ERR_NEARDUP_INVALID_ARGUMENT; UsageError is the CLI's and the plans' only.
//
// One error class with stable codes. Argument mistakes are TypeError/RangeError (with code
// ERR_NEARDUP_INVALID_ARGUMENT), as Node's own APIs do; everything that goes wrong at run time is a
// NeardupError.

export type NeardupErrorCode =
  | 'ERR_NEARDUP_INVALID_ARGUMENT'
  | 'ERR_NEARDUP_INVALID_INPUT'
  | 'ERR_NEARDUP_BAD_LINE'
  | 'ERR_NEARDUP_IO'
  | 'ERR_NEARDUP_CORRUPT'
  | 'ERR_NEARDUP_UNSUPPORTED'
  | 'ERR_NEARDUP_CANCELLED'
  | 'ERR_NEARDUP_CLOSED'
  | 'ERR_NEARDUP_INTERNAL'
  | 'ERR_NEARDUP_TOO_MANY_RESULTS'
  /** A key inserted into an index that already holds it (datasketch's ValueError), or used twice in one batch. */
  | 'ERR_NEARDUP_DUPLICATE_KEY'
  /** A key removed from an index that does not hold it (datasketch's KeyError). */
  | 'ERR_NEARDUP_KEY_NOT_FOUND'
  /** A long call stopped by its AbortSignal (`cause`: the signal's reason). */
  | 'ERR_NEARDUP_ABORTED'
  /** A result too large for one typed array (buffer.constants.MAX_LENGTH): split the batch. */
  | 'ERR_NEARDUP_RESULT_TOO_LARGE'
  /** A file written since it was read (another writer): saving over it would lose that writer's changes. */
  | 'ERR_NEARDUP_CONFLICT';

export interface NeardupErrorDetails {
  /** The file the problem is in, when there is one. */
  file?: string;
  /** 1-based line number (JSONL inputs). */
  line?: number;
  /** Byte offset in the file (binary formats). */
  offset?: number;
  cause?: unknown;
}

/**
 * Every run-time failure of neardup (bad input data, I/O, corrupt files, closed objects, aborted calls): `code`
 * says which, `file`/`line`/`offset` where, when known. Argument mistakes are TypeError/RangeError instead.
 */
export class NeardupError extends Error {
  readonly code: NeardupErrorCode;
  readonly file?: string;
  readonly line?: number;
  readonly offset?: number;

  constructor(code: NeardupErrorCode, message: string, details: NeardupErrorDetails = {}) {
    super(message, details.cause !== undefined ? { cause: details.cause } : undefined);
    this.name = 'NeardupError';
    this.code = code;
    if (details.file !== undefined) this.file = details.file;
    if (details.line !== undefined) this.line = details.line;
    if (details.offset !== undefined) this.offset = details.offset;
  }
}

const CODES = new Set<string>([
  'ERR_NEARDUP_INVALID_INPUT', 'ERR_NEARDUP_BAD_LINE', 'ERR_NEARDUP_IO', 'ERR_NEARDUP_CORRUPT',
  'ERR_NEARDUP_UNSUPPORTED', 'ERR_NEARDUP_CANCELLED', 'ERR_NEARDUP_CLOSED', 'ERR_NEARDUP_INTERNAL',
  'ERR_NEARDUP_RESULT_TOO_LARGE',
  'ERR_NEARDUP_TOO_MANY_RESULTS', 'ERR_NEARDUP_DUPLICATE_KEY', 'ERR_NEARDUP_KEY_NOT_FOUND',
]);

/** Converts a coded Error from the addon into a NeardupError; argument errors pass through unchanged. */
export function fromNative(e: unknown): unknown {
  if (e instanceof Error && !(e instanceof NeardupError) && !(e instanceof TypeError) && !(e instanceof RangeError)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CODES.has(code)) return new NeardupError(code as NeardupErrorCode, e.message);
  }
  return e;
}

/** Awaits a native promise, converting its rejection. */
export async function nativeCall<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw fromNative(e);
  }
}

/** Runs a synchronous native call, converting what it throws. */
export function nativeSync<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw fromNative(e);
  }
}

/** An argument mistake: a TypeError (wrong type) or RangeError (bad value) with code ERR_NEARDUP_INVALID_ARGUMENT. */
export function invalidArgument(kind: TypeErrorConstructor | RangeErrorConstructor, message: string): TypeError | RangeError {
  return Object.assign(new kind(message), { code: 'ERR_NEARDUP_INVALID_ARGUMENT' as const });
}

/** A size for an error message: "1.5 GiB", "64.0 MiB" or "512 bytes". */
export function formatBytes(n: number): string {
  return n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(1)} GiB` : n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MiB` : `${n} bytes`;
}
