// The text form `neardup simhash find-all` reads without --ids: one decimal u64 fingerprint per line (as
// seomoz's simhash-find-all reads it), repeated values counting once. Parsed in place, natively, from the
// decompressed bytes as they arrive (simhash::ParseFingerprintText: no string, no BigInt, no allocation per
// line; the line under way is carried between pieces in a small state buffer), then sorted and made distinct
// on a libuv thread. The JavaScript reader this replaced was 35 % of the command's time on 1M fingerprints.
// The rules are those of the line reader before it: a line is trimmed of the whitespace
// String.prototype.trim removes (in latin1: TAB, LF, VT, FF, CR, space, NBSP), empty lines are skipped, and
// anything else must be 1 to 20 digits at most 2^64 - 1; an error names FILE:LINE.
import { NeardupError } from '../util/errors';
import { openInputFile, readError } from '../io/input';
import { native } from '../native/addon';

export const U64_MAX = (1n << 64n) - 1n;

/** A decimal u64 of a text line ("FILE:LINE: WHAT must be a decimal u64" otherwise): find-all's rule for fingerprints and ids. */
export function parseU64(s: string, file: string, line: number, what: string): bigint {
  if (!/^\d{1,20}$/.test(s)) throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: ${what} must be a decimal u64, got '${s.slice(0, 40)}'`, { file, line });
  const v = BigInt(s);
  if (v > U64_MAX) throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: ${what} ${s} is larger than 2^64-1`, { file, line });
  return v;
}

export interface FingerprintText {
  /** The distinct fingerprints, ascending. */
  fps: BigUint64Array;
  /** Non-empty lines read. */
  lines: number;
}

/** sizeof(simhash::FingerprintLineState): the line under way, as the native parser keeps it. */
const LINE_STATE_BYTES = 88;
/** Where the state keeps the bad line's first 64 bytes (from its first non-blank one), and their count. */
const HEAD_AT = 24, HEAD_LEN_AT = 12;

/** Reads the fingerprints of `files` ('-': standard input; gzip and zstd decompressed, by their magic bytes). */
export async function readFingerprintText(files: string[], onLines?: (lines: number) => void): Promise<FingerprintText> {
  let values = new BigUint64Array(1 << 16);
  let count = 0, lines = 0;
  const state = new Uint8Array(LINE_STATE_BYTES);
  for (const file of files) {
    const opened = await openInputFile(file, 1 << 20);
    if (opened.stream === null)
      throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `'${file}' is a Parquet file: this command reads text lines`, { file });
    let line = 0;  // newlines taken in this file
    state.fill(0);
    const take = (piece: Uint8Array, final: boolean) => {
      for (let off = 0; ;) {
        const [at, used, ended, newlines, bad] = native.simhashParseFingerprintText(piece.subarray(off), final, state, values, count);
        count = at;
        off += used;
        line += newlines;
        if (onLines && (lines >>> 16) !== ((lines + ended) >>> 16)) onLines(lines + ended);
        lines += ended;
        if (bad) badLine(file, line + 1, state);
        // done once the piece is taken and, at the end of the file, its last line ended
        if (off === piece.length && !(final && stateStarted(state))) return;
        // out is full: room for the rest of the piece (a value per 2 bytes at most), and 1.5x at least
        const grown = new BigUint64Array(Math.max(Math.ceil(values.length * 1.5), count + Math.ceil((piece.length - off) / 2) + 1));
        grown.set(values.subarray(0, count));
        values = grown;
      }
    };
    try {
      for await (const chunk of opened.stream as AsyncIterable<Buffer>) take(chunk, false);
    } catch (e) {
      if (e instanceof NeardupError) throw e;
      throw readError(file, e);
    } finally {
      opened.stream.destroy();
    }
    take(new Uint8Array(0), true);  // a last line without its newline
  }
  const fps = await native.simhashSortDistinct(values, count);
  return { fps, lines };
}

/** Whether the state holds a line under way (its `started` byte). */
const stateStarted = (state: Uint8Array) => state[16] !== 0;

/** The error of a line that is not a fingerprint, worded as for any line: from its first 64 bytes, kept by the parser. */
function badLine(file: string, line: number, state: Uint8Array): never {
  const headLen = state[HEAD_LEN_AT] | (state[HEAD_LEN_AT + 1] << 8);
  const text = Buffer.from(state.buffer, state.byteOffset + HEAD_AT, headLen).toString('latin1').trim();
  parseU64(text, file, line, 'fingerprint');
  // the first 64 bytes may look valid when the fault comes after them
  throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: fingerprint must be a decimal u64, got '${text.slice(0, 40)}...'`, { file, line });
}

/** The longest pair line: two 20-digit numbers, a space and a newline (simhash::kMaxPairLine). */
export const MAX_PAIR_LINE = 42;

/**
 * Pairs as find-all prints them, "a b\n" in decimal, from pair `first` on into `into` (native, in place, whole
 * lines while they fit): the bytes written and the next pair. Bounded work per call: the buffer's size.
 */
export function formatPairLines(a: BigUint64Array, b: BigUint64Array, first: number, into: Uint8Array): { bytes: number; next: number } {
  const [bytes, next] = native.simhashFormatPairs(a, b, first, into);
  return { bytes, next };
}
