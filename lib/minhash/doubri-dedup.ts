// doubri 1.0's group deduplication on existing `.hash` files (doubri-self, doubri-other, doubri-apply), byte
// for byte: flag files updated in place, index files PREFIX.00000..00039, one stats line per hash file.
// See docs/lsh.md ("doubri drop-in") for the workflow and the differences from doubri 1.0.
import * as fs from 'node:fs';
import { NeardupError, nativeCall } from '../util/errors';
import { native, type NativeDoubriStats } from '../native/addon';

export type DoubriStats = NativeDoubriStats;

/**
 * doubri-self: deduplicates the records of `hashFiles` (in order) against each other, updating each
 * `<file>.f` in place, and writes the 40 index files `<indexPrefix>.00000` .. `.00039`.
 */
export function doubriSelf(hashFiles: string[], indexPrefix: string): Promise<DoubriStats[]> {
  return nativeCall(native.doubriSelf(hashFiles, indexPrefix));
}

/**
 * doubri-other: marks as duplicates the records of `hashFiles` that share a band with the index written by
 * an earlier doubriSelf (`indexPrefix`). Every one of the 40 index files must exist.
 */
export function doubriOther(indexPrefix: string, hashFiles: string[]): Promise<DoubriStats[]> {
  return nativeCall(native.doubriOther(indexPrefix, hashFiles));
}

/** Reads and checks a flag file (`1`/`0` bytes, no newline). */
export function readFlags(file: string): Buffer {
  let flags: Buffer;
  try {
    flags = fs.readFileSync(file);
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': ${(e as Error).message}`, { file, cause: e });
  }
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] !== 0x30 && flags[i] !== 0x31)
      throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `'${file}': byte ${i} is not a flag ('0' or '1')`, { file, offset: i });
  }
  return flags;
}

/** Reads a list of hash files (one path per line; empty lines ignored). */
export function parseFileList(text: string): string[] {
  return text.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.length > 0);
}
