// Reference UTF-8 decoder (tests only), written from the rule in native/core/text/utf8.h: the well-formed
// byte sequences of Unicode Table 3-7, and "U+FFFD substitution of maximal subparts" for everything else:
// a maximal prefix of a well-formed sequence that cannot be completed becomes one U+FFFD, and a byte that
// cannot start (or continue) any well-formed sequence becomes one U+FFFD by itself.

export const REPLACEMENT = 0xfffd;

/** The allowed range of the second byte after a lead byte, and the total length; null: not a lead byte. */
function leadInfo(b: number): { len: number; lo2: number; hi2: number } | null {
  if (b >= 0xc2 && b <= 0xdf) return { len: 2, lo2: 0x80, hi2: 0xbf };
  if (b === 0xe0) return { len: 3, lo2: 0xa0, hi2: 0xbf };           // no overlongs
  if (b === 0xed) return { len: 3, lo2: 0x80, hi2: 0x9f };           // no surrogates
  if (b >= 0xe1 && b <= 0xef) return { len: 3, lo2: 0x80, hi2: 0xbf };
  if (b === 0xf0) return { len: 4, lo2: 0x90, hi2: 0xbf };           // no overlongs
  if (b === 0xf4) return { len: 4, lo2: 0x80, hi2: 0x8f };           // nothing above U+10FFFF
  if (b >= 0xf1 && b <= 0xf3) return { len: 4, lo2: 0x80, hi2: 0xbf };
  return null;
}

export interface Decoded {
  cps: number[];
  invalid: boolean;
}

export function decodeUtf8(bytes: Uint8Array): Decoded {
  const cps: number[] = [];
  let invalid = false;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      cps.push(b);
      i++;
      continue;
    }
    const info = leadInfo(b);
    if (info === null) {
      cps.push(REPLACEMENT);
      invalid = true;
      i++;
      continue;
    }
    // Count how many continuation bytes follow and are allowed in their position.
    let j = 1;
    while (j < info.len && i + j < bytes.length) {
      const c = bytes[i + j];
      const lo = j === 1 ? info.lo2 : 0x80;
      const hi = j === 1 ? info.hi2 : 0xbf;
      if (c < lo || c > hi) break;
      j++;
    }
    if (j < info.len) {
      // A maximal subpart (the lead byte plus j-1 fitting continuation bytes): one U+FFFD.
      cps.push(REPLACEMENT);
      invalid = true;
      i += j;
      continue;
    }
    let cp = b & (info.len === 2 ? 0x1f : info.len === 3 ? 0x0f : 0x07);
    for (let k = 1; k < info.len; k++) cp = cp * 64 + (bytes[i + k] & 0x3f);
    cps.push(cp);
    i += info.len;
  }
  return { cps, invalid };
}

/** UTF-8 encoding of code points (no surrogates expected), without building a JS string. */
export function encodeCps(cps: readonly number[]): Uint8Array {
  let n = 0;
  for (const c of cps) n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  const out = new Uint8Array(n);
  let o = 0;
  for (const c of cps) {
    if (c < 0x80) out[o++] = c;
    else if (c < 0x800) {
      out[o++] = 0xc0 | (c >> 6);
      out[o++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      out[o++] = 0xe0 | (c >> 12);
      out[o++] = 0x80 | ((c >> 6) & 0x3f);
      out[o++] = 0x80 | (c & 0x3f);
    } else {
      out[o++] = 0xf0 | (c >> 18);
      out[o++] = 0x80 | ((c >> 12) & 0x3f);
      out[o++] = 0x80 | ((c >> 6) & 0x3f);
      out[o++] = 0x80 | (c & 0x3f);
    }
  }
  return out;
}
