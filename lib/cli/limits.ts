// The per-document limit of the CLI commands that hold one whole document in working memory (minhash,
// simhash fingerprint, shingles, paragraphs; dedup states its own under --memory). A document costs its
// command a few bytes of working memory per input byte (measured, in DOCUMENT_BYTES_PER_BYTE); one whose cost
// would exceed the document memory is refused with its file:line instead of running the machine out of
// memory. The document memory is NEARDUP_DOCUMENT_MEMORY (a size: 512M, 8G) or, by default, half of the
// physical memory.
import { NeardupError, formatBytes } from '../util/errors';
import { UsageError } from './common';
import { documentMemoryFromEnv } from '../io/input';
import type { JsonlBatch } from '../io/jsonl';
import type { DocumentBatch } from '../io/input';
import type { DocumentLimit } from '../io/document-limits';

export { documentOverLimit, guardLines, maxLineBytesFor, type DocumentLimit } from '../io/document-limits';

/**
 * Working memory per input byte of one document: peak RSS over input bytes of a 200 MB one-line JSONL
 * document (the line, its parsed string and its UTF-8 copy included; /usr/bin/time -v), the worst option of
 * each command, rounded up. minhash: fast 5.1, datasketch 9.5, doubri-v1 5.8; simhash fingerprint: count 8.1,
 * binary 13.1; shingles (20 MB document): 14, --dedupe 66; paragraphs: 11.1.
 */
export const DOCUMENT_BYTES_PER_BYTE = {
  minhash: 10,
  'simhash fingerprint': 14,
  shingles: 66,
  paragraphs: 12,
  // decontaminate: 8.6 (exact; --approx 7.6) over a tiny run's RSS, on a 58 MB one-line document of short words
  decontaminate: 10,
  // similar and passages: growth of peak RSS over a run of five small documents, per byte of one document
  // (docs/memory.md, "One large document"), the worst of 50 and 100 MB of words of 3-9 letters and
  // 30 MB of one-letter words (their cost is per word: the latter, the worst text, needs about twice the
  // former), rounded up; the index commands with --memory 256M (the cap bounds the build's own buffers)
  'similar build': 22,
  'similar update': 17,
  'similar query': 16,
  'passages index': 23,
  'passages query': 62,
} as const;

/**
 * Working memory per byte of the largest indexed document of the commands that read an index (the same
 * measurement): `passages pairs` holds each document's windows, first occurrences and matches.
 */
export const INDEXED_DOCUMENT_BYTES_PER_BYTE = {
  'passages pairs': 38,
} as const;

export type LimitedCommand = keyof typeof DOCUMENT_BYTES_PER_BYTE;

/** The document memory: NEARDUP_DOCUMENT_MEMORY, or half of the physical memory. */
export function documentMemory(env: NodeJS.ProcessEnv = process.env): number {
  const n = documentMemoryFromEnv(env);
  if (n === undefined) throw new UsageError(`NEARDUP_DOCUMENT_MEMORY must be a size like 512M or 8G, got '${env.NEARDUP_DOCUMENT_MEMORY}'`);
  return n;
}

/** The largest document (UTF-8 bytes) `command` takes. */
export function documentLimit(command: LimitedCommand, env: NodeJS.ProcessEnv = process.env): number {
  return Math.floor(documentMemory(env) / DOCUMENT_BYTES_PER_BYTE[command]);
}

/** Budgets under 64 MiB count as 64 MiB for the per-document limits (as dedup's: tiny caps that force spilling still work). */
const MIN_LIMIT_BUDGET = 64 * 2 ** 20;
/** What a run of a few small documents holds (peak RSS of `similar build` and `passages index`: 55-62 MiB). */
const PROCESS_BYTES = 64 * 2 ** 20;

/**
 * The per-document limit of `command` (a DocumentLimit): of `memory` (its --memory, at least 64 MiB) when
 * given, else of the document memory; the ~64 MiB the process holds anyway come off first.
 */
export function memoryDocumentLimit(command: LimitedCommand | keyof typeof INDEXED_DOCUMENT_BYTES_PER_BYTE, memory: number | undefined,
  env: NodeJS.ProcessEnv = process.env): DocumentLimit {
  const factor = command in DOCUMENT_BYTES_PER_BYTE ? DOCUMENT_BYTES_PER_BYTE[command as LimitedCommand]
    : INDEXED_DOCUMENT_BYTES_PER_BYTE[command as keyof typeof INDEXED_DOCUMENT_BYTES_PER_BYTE];
  const given = memory !== undefined && memory > 0;
  const m = given ? Math.max(memory, MIN_LIMIT_BUDGET) : documentMemory(env);
  // the factors are growth over what the process holds anyway (Node itself, ~55 MiB): that comes off the
  // memory first (half of it at most), so the whole process stays within it
  const usable = Math.max(m - PROCESS_BYTES, m / 2);
  return {
    command, factor, bytes: Math.floor(usable / factor), memory: m,
    raise: given ? 'raise --memory' : 'raise NEARDUP_DOCUMENT_MEMORY (default half of the physical memory)',
  };
}

/** The UTF-8 bytes of document i of a batch, or -1 when no more than `limit` (cheap checks first). */
function sizeOver(batch: JsonlBatch | DocumentBatch, i: number, limit: number): number {
  if ('packed' in batch) {
    const n = batch.packed.offsets[i + 1] - batch.packed.offsets[i];
    return n > limit ? n : -1;
  }
  // the raw line bounds its text's UTF-8 bytes (JSON escapes only make it longer)
  if (batch.raw[i].length <= limit || batch.texts[i] === null) return -1;
  const n = Buffer.byteLength(batch.texts[i]!, 'utf8');
  return n > limit ? n : -1;
}

/** Throws ERR_NEARDUP_INVALID_INPUT naming file:line for the first document of `batch` over `limit` bytes. */
export function checkDocumentSizes(batch: JsonlBatch | DocumentBatch, limit: number, command: LimitedCommand): void {
  const count = 'packed' in batch ? batch.count : batch.raw.length;
  for (let i = 0; i < count; i++) {
    const n = sizeOver(batch, i, limit);
    if (n < 0) continue;
    const file = batch.file === '-' ? '<stdin>' : batch.file;
    const line = batch.firstLine + i;
    const f = DOCUMENT_BYTES_PER_BYTE[command];
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT',
      `${file}:${line}: a document of ${formatBytes(n)} needs about ${f} bytes of working memory per byte in ` +
      `'neardup ${command}', more than the document memory of ${formatBytes(limit * f)} allows (documents up to ` +
      `${formatBytes(limit)}; NEARDUP_DOCUMENT_MEMORY, default half of the physical memory); split the document ` +
      'or raise NEARDUP_DOCUMENT_MEMORY', { file, line });
  }
}
