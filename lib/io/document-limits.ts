// The per-document limit of the commands that take --memory (similar, passages): what a limit is, the
// errors that name the document over it, and the reader's cap on lines far over it. The limits themselves
// (measured bytes of working memory per byte of a document) are set by the CLI (cli/limits.ts) and travel in
// a sharded plan to its tasks.
import { NeardupError, formatBytes } from '../util/errors';
import type { DocumentBatch } from './input';

/**
 * The per-document limit of a command that takes --memory: the largest document (UTF-8 bytes) whose working
 * memory fits the budget it was given (at least 64 MiB), or without --memory, the document memory; and what
 * the error says of it.
 */
export interface DocumentLimit {
  command: string;
  /** bytes of working memory per byte of a document */
  factor: number;
  /** the largest document, UTF-8 bytes */
  bytes: number;
  /** the memory it was derived from */
  memory: number;
  /** how to raise it */
  raise: string;
}

/**
 * The longest input line worth reading for a document under `limit`: its text's UTF-8 bytes are at least a
 * sixth of the line's (a \uXXXX escape, 6 bytes, is the least text per byte), less the other fields (1 MiB
 * allowed). A longer line is refused as it is read (not held whole first); lineOverLimit says why.
 */
export function maxLineBytesFor(limit: DocumentLimit): number {
  return 6 * limit.bytes + 2 ** 20;
}

/** `e`, or when it is the reader's refusal of a line over maxLineBytesFor(limit), that refusal with its reason. */
export function lineOverLimit(e: unknown, limit: DocumentLimit): unknown {
  if (!(e instanceof NeardupError) || e.code !== 'ERR_NEARDUP_INVALID_INPUT' || !/: the line is longer than \d+ bytes/.test(e.message)) return e;
  return new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${e.message.replace(/; split the document$/, '')}: its document would need more ` +
    `working memory in 'neardup ${limit.command}' (about ${limit.factor} bytes per byte) than the memory of ${formatBytes(limit.memory)} ` +
    `allows (documents up to ${formatBytes(limit.bytes)}); split the document or ${limit.raise}`, { file: e.file, line: e.line });
}

/** The items of `it` (lines, batches), a line refused as too long for `limit` said so (lineOverLimit). */
export async function* guardLines<T>(it: AsyncIterable<T>, limit: DocumentLimit): AsyncGenerator<T> {
  try {
    yield* it;
  } catch (e) {
    throw lineOverLimit(e, limit);
  }
}

/** The error for a document of `n` bytes over `limit` (`where`: "file:line" or "the indexed document ID"). */
export function documentOverLimit(where: string, n: number, limit: DocumentLimit, meta: { file?: string; line?: number } = {}): NeardupError {
  // exact sizes where the rounded ones would read the same
  const size = (x: number) => formatBytes(n) === formatBytes(limit.bytes) ? `${x} bytes` : formatBytes(x);
  return new NeardupError('ERR_NEARDUP_INVALID_INPUT',
    `${where}: a document of ${size(n)} needs about ${limit.factor} bytes of working memory per byte in ` +
    `'neardup ${limit.command}', more than the memory of ${formatBytes(limit.memory)} allows (documents up to ` +
    `${size(limit.bytes)}); split the document or ${limit.raise}`, meta);
}

/** Throws documentOverLimit naming file:line for the first document of `batch` over `limit`. */
export function checkBatchSizes(batch: DocumentBatch, limit: DocumentLimit): void {
  for (let i = 0; i < batch.count; i++) {
    const n = batch.packed.offsets[i + 1] - batch.packed.offsets[i];
    if (n <= limit.bytes) continue;
    const file = batch.file === '-' ? '<stdin>' : batch.file;
    throw documentOverLimit(`${file}:${batch.firstLine + i}`, n, limit, { file, line: batch.firstLine + i });
  }
}

/** `v` read back from a plan: a DocumentLimit, or undefined when it is not one. */
export function documentLimitFrom(v: unknown): DocumentLimit | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
  if (typeof o.command !== 'string' || typeof o.raise !== 'string' || !num(o.factor) || !num(o.bytes) || !num(o.memory)) return undefined;
  return { command: o.command, factor: o.factor as number, bytes: o.bytes as number, memory: o.memory as number, raise: o.raise };
}
