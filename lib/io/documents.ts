// What every input reader yields and shares (input.ts for JSONL, parquet.ts for Parquet): the batch of
// documents, its ids, the bad-line policy and how a file is named in messages. Below both readers, so that
// input.ts can hand Parquet files to parquet.ts without parquet.ts importing it back. Also the input options as
// option values (--field, --id-field, --on-bad-line; a passages plan stores them so).
import { NeardupError } from '../util/errors';
import { native } from '../native/addon';
import { UsageError, oneOf } from '../util/options';

export type OnBadLine = 'error' | 'skip' | 'empty';
export type InputFormat = 'jsonl' | 'parquet';
export type InputCompression = 'none' | 'gzip' | 'zstd';

/** Document ids of a batch: id i is data[offsets[i] .. offsets[i+1]), a string's UTF-8 (kind 1) or an integer's digits (kind 2); kind 0: none (a bad line). */
export interface DocumentIds {
  data: Uint8Array;
  offsets: Uint32Array;
  kinds: Uint8Array;
}

export interface DocumentBatch {
  /** The file as given ('-' for standard input) and its position in the list. */
  file: string;
  fileIndex: number;
  format: InputFormat;
  compression: InputCompression;
  /** 1-based line (JSONL) or row (Parquet) of document 0 in its file. */
  firstLine: number;
  count: number;
  /** The documents' UTF-8: document i is data[offsets[i] .. offsets[i+1]) (empty for a bad line). */
  packed: { data: Uint8Array; offsets: Uint32Array };
  /** With onBadLine 'skip' and a bad line in the batch: 0 for each skipped slot, else 1. */
  valid?: Uint8Array;
  /** Bad lines of this batch: index -> reason. */
  bad: Map<number, string>;
  ids?: DocumentIds;
  /** With `raw`: each line's bytes without its '\n' (JSONL). */
  raw?: Buffer[];
  /**
   * With `lines`, for a plain JSONL file (not compressed, a regular file): line i is the lineLen[i] bytes at file
   * offset start + lineAt[i] (without its '\n'). Absent for other inputs.
   */
  lines?: { start: number; lineAt: Uint32Array; lineLen: Uint32Array };
  /** Input bytes of this batch (see onProgress). */
  bytes: number;
}

/** The name of a file in messages. */
export const displayName = (file: string) => (file === '-' ? '<stdin>' : file);

/** Checks `field`/`idField` (dot paths) and returns their parts: a RangeError names the mistake. */
export function fieldPath(spec: string): string[] {
  return native.parseFieldPath(spec);
}

export interface BadLinePolicy {
  file: string;
  onBadLine: OnBadLine;
}

/** 'error': the first bad line as ERR_NEARDUP_BAD_LINE; else the skip mask (undefined when not needed). */
export function applyBadLines(name: string, firstLine: number, count: number, bad: Map<number, string>, onBad: OnBadLine): Uint8Array | undefined {
  if (bad.size === 0) return undefined;
  if (onBad === 'error') {
    const [i, reason] = bad.entries().next().value as [number, string];
    const line = firstLine + i;
    throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${name}:${line}: ${reason} (use --on-bad-line skip|empty to go on)`, { file: name, line });
  }
  if (onBad === 'empty') return undefined;
  const valid = new Uint8Array(count).fill(1);
  for (const i of bad.keys()) valid[i] = 0;
  return valid;
}

/** A --field / --id-field value, checked as a dot path. */
export function fieldOption(option: string, v: unknown): string {
  const field = String(v);
  if (field === '') throw new UsageError(`${option} must not be empty`);
  try {
    fieldPath(field);
  } catch (e) {
    throw new UsageError(`${option}: ${(e as Error).message}`);
  }
  return field;
}

export function idFieldOption(v: unknown): string {
  return fieldOption('--id-field', v);
}

export function inputOptionsFrom(values: Record<string, unknown>): { field: string; onBadLine: OnBadLine } {
  const field = values.field === undefined ? 'text' : fieldOption('--field', values.field);
  return { field, onBadLine: oneOf('on-bad-line', values['on-bad-line'], ['error', 'skip', 'empty'] as const, 'error') };
}
