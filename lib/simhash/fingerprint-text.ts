// The text form `neardup simhash find-all` reads without --ids: one decimal u64 fingerprint per line (as
// seomoz's simhash-find-all reads it), repeated values counting once. Parsed in place from the decompressed
// bytes: the digits of a line are accumulated in four 16-bit limbs, straight into a Uint32Array (low, high
// words), and repeats are found in an open-addressing table of those words, so a line costs no string,
// no BigInt and no allocation (the per-line BigInt and Set<bigint> of the old reader were 80 % of the
// command's time on 1M fingerprints). The rules are those of the line reader it replaces: a line is trimmed of
// the whitespace String.prototype.trim removes (in latin1: TAB, LF, VT, FF, CR, space, NBSP), empty lines are
// skipped, and anything else must be 1 to 20 digits at most 2^64 - 1; an error names FILE:LINE.
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

/** The bytes String.prototype.trim removes from a latin1 string. */
const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0;

export interface FingerprintText {
  /** The distinct fingerprints, in the order of their first line. */
  fps: BigUint64Array;
  /** Non-empty lines read. */
  lines: number;
}

/** A set of 64-bit values kept as (low, high) words, first occurrences in order. */
class DistinctU64 {
  private words = new Uint32Array(2 * 1024);  // the values, in order
  private count = 0;
  private slots = new Int32Array(2048).fill(-1);  // value index, or -1
  private mask = 2047;

  get size(): number {
    return this.count;
  }

  add(lo: number, hi: number): void {
    let h = (Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 0) & this.mask;
    for (;;) {
      const s = this.slots[h];
      if (s < 0) break;
      if (this.words[2 * s] === lo && this.words[2 * s + 1] === hi) return;
      h = (h + 1) & this.mask;
    }
    if (2 * (this.count + 1) > this.words.length) {
      const w = new Uint32Array(this.words.length * 2);
      w.set(this.words);
      this.words = w;
    }
    this.words[2 * this.count] = lo;
    this.words[2 * this.count + 1] = hi;
    this.slots[h] = this.count++;
    if (this.count * 2 > this.slots.length) this.grow();
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    for (let i = 0; i < this.count; i++) {
      const lo = this.words[2 * i], hi = this.words[2 * i + 1];
      let h = (Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 0) & mask;
      while (slots[h] >= 0) h = (h + 1) & mask;
      slots[h] = i;
    }
    this.slots = slots;
    this.mask = mask;
  }

  /** The values as a BigUint64Array (little-endian words: low then high). */
  values(): BigUint64Array {
    this.slots = new Int32Array(0);  // the table is no longer needed
    const little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
    if (little) return new BigUint64Array(this.words.buffer, 0, this.count);  // the words themselves: no copy
    const out = new BigUint64Array(this.count);
    for (let i = 0; i < this.count; i++) out[i] = (BigInt(this.words[2 * i + 1]) << 32n) | BigInt(this.words[2 * i]);
    return out;
  }
}

/** Reads the fingerprints of `files` ('-': standard input; gzip and zstd decompressed, by their magic bytes). */
export async function readFingerprintText(files: string[], onLines?: (lines: number) => void): Promise<FingerprintText> {
  const set = new DistinctU64();
  let lines = 0;
  for (const file of files) {
    const opened = await openInputFile(file, 1 << 20);
    if (opened.stream === null)
      throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `'${file}' is a Parquet file: this command reads text lines`, { file });
    let line = 0;
    // the line under way (its state survives chunk boundaries), and its first bytes from its first non-blank
    // one, to word an error
    let digits = 0, l0 = 0, l1 = 0, l2 = 0, l3 = 0, over = false, bad = false, trailing = false, started = false;
    const head = Buffer.alloc(64);
    let headLen = 0;
    const endLine = () => {
      line++;
      if (started) {
        lines++;
        if (bad || over) {
          // worded as for any line; the first 64 bytes may look valid when the fault comes after them
          const text = head.toString('latin1', 0, headLen).trim();
          parseU64(text, file, line, 'fingerprint');
          throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: fingerprint must be a decimal u64, got '${text.slice(0, 40)}...'`, { file, line });
        }
        set.add(((l1 << 16) | l0) >>> 0, ((l3 << 16) | l2) >>> 0);
        if ((lines & 0xffff) === 0) onLines?.(lines);
      }
      digits = l0 = l1 = l2 = l3 = headLen = 0;
      over = bad = trailing = started = false;
    };
    try {
      for await (const chunk of opened.stream as AsyncIterable<Buffer>) {
        for (let i = 0; i < chunk.length; i++) {
          const c = chunk[i];
          if (c === 0x0a) {
            endLine();
          } else if (c >= 0x30 && c <= 0x39) {
            if (trailing) bad = true;  // a digit after blanks inside the line
            started = true;
            if (headLen < 64) head[headLen++] = c;
            if (bad || over) continue;
            if (++digits > 20) { over = true; continue; }
            // value = value * 10 + digit, in 16-bit limbs; a carry out of the top limb is over 2^64 - 1
            let v = l0 * 10 + (c - 0x30); l0 = v & 0xffff;
            v = l1 * 10 + (v >>> 16); l1 = v & 0xffff;
            v = l2 * 10 + (v >>> 16); l2 = v & 0xffff;
            v = l3 * 10 + (v >>> 16); l3 = v & 0xffff;
            if (v >>> 16) over = true;
          } else if (isSpace(c)) {
            if (started) {
              trailing = true;  // blanks after the digits: fine at the end of the line
              if (headLen < 64) head[headLen++] = c;
            }
          } else {
            started = bad = true;
            if (headLen < 64) head[headLen++] = c;
          }
        }
      }
    } catch (e) {
      if (e instanceof NeardupError) throw e;
      throw readError(file, e);
    } finally {
      opened.stream.destroy();
    }
    if (started) endLine();  // a last line without its newline
  }
  return { fps: set.values(), lines };
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
