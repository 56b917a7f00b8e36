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
