// Shared helpers of the parity tests: input forms and a comparison with a useful failure message.
import * as assert from 'uvu/assert';
import type { ShingleHashOptions } from '../../lib/index';
import { refShingleHashes, toBytes, type RefOptions } from '../reference/index';

export type Form = 'strings' | 'buffers0' | 'buffers1' | 'buffers16' | 'packed0' | 'packed1' | 'packed16' | 'packed64';
export const FORMS: readonly Form[] = ['strings', 'buffers0', 'buffers1', 'buffers16', 'packed0', 'packed1', 'packed16', 'packed64'];

/** A copy of b that lives at byteOffset `at` of a larger ArrayBuffer (with junk around it). */
export function placed(b: Uint8Array, at: number): Buffer {
  const big = Buffer.alloc(at + b.length + 7, 0xc3);
  big.set(b, at);
  return big.subarray(at, at + b.length);
}

/**
 * The texts in one input form. 'strings' keeps the items as given (strings stay strings); 'buffersK' passes
 * every item as a Buffer at byteOffset K; 'packedK' packs them into one { data, offsets } whose data is a
 * subarray at byteOffset K and whose offsets start after a junk prefix (not at 0); packed64 uses
 * BigUint64Array offsets.
 */
export function inForm(texts: ReadonlyArray<string | Uint8Array>, form: Form):
  ReadonlyArray<string | Uint8Array> | { data: Uint8Array; offsets: Uint32Array | BigUint64Array } {
  if (form === 'strings') return texts;
  const bytes = texts.map(toBytes);
  if (form.startsWith('buffers')) {
    const at = Number(form.slice(7));
    return bytes.map((b) => placed(b, at));
  }
  const at = form === 'packed64' ? 3 : Number(form.slice(6));
  const prefix = 5;
  const total = bytes.reduce((s, b) => s + b.length, prefix);
  const data = Buffer.alloc(total, 0xff);
  const offs: number[] = [prefix];
  let o = prefix;
  for (const b of bytes) {
    data.set(b, o);
    o += b.length;
    offs.push(o);
  }
  const placedData = placed(data, at);
  return {
    data: placedData,
    offsets: form === 'packed64' ? BigUint64Array.from(offs, BigInt) : Uint32Array.from(offs),
  };
}

export interface Plain {
  hashes: string[];
  offsets: number[];
  invalidUtf8Docs: number;
}

export function plain(r: { hashes: ArrayLike<bigint | number> & Iterable<bigint | number>; offsets: ArrayLike<number> & Iterable<number>; invalidUtf8Docs: number }): Plain {
  return { hashes: Array.from(r.hashes, String), offsets: Array.from(r.offsets), invalidUtf8Docs: r.invalidUtf8Docs };
}

/** Asserts equality, naming the first document that differs. */
export function expectSame(got: Plain, want: Plain, texts: ReadonlyArray<string | Uint8Array>, label: string): void {
  if (got.offsets.length !== want.offsets.length) assert.unreachable(`${label}: ${got.offsets.length - 1} documents, want ${want.offsets.length - 1}`);
  for (let i = 0; i + 1 < want.offsets.length; i++) {
    const g = got.hashes.slice(got.offsets[i], got.offsets[i + 1]);
    const w = want.hashes.slice(want.offsets[i], want.offsets[i + 1]);
    if (g.length !== w.length || g.some((h, k) => h !== w[k])) {
      const t = texts[i];
      const shown = typeof t === 'string' ? JSON.stringify(t.slice(0, 80)) : `<${Buffer.from(t).toString('hex').slice(0, 160)}>`;
      assert.unreachable(`${label}: document ${i} ${shown} differs: got ${g.length} hashes [${g.slice(0, 4)}...], want ${w.length} [${w.slice(0, 4)}...]`);
    }
  }
  assert.equal(got.offsets, want.offsets, `${label}: offsets`);
  assert.is(got.invalidUtf8Docs, want.invalidUtf8Docs, `${label}: invalidUtf8Docs`);
}

export function reference(texts: ReadonlyArray<string | Uint8Array>, o: ShingleHashOptions): Plain {
  return plain(refShingleHashes(texts, o as RefOptions) as never);
}
