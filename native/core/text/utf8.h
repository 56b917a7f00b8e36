// UTF-8 decoding by code point.
//
// Invalid bytes follow one deterministic rule, the one of the WHATWG Encoding standard and of Unicode's
// "U+FFFD substitution of maximal subparts" (also what Node's Buffer.toString('utf8') and TextDecoder do):
// each maximal prefix of a well-formed sequence that cannot be completed, or each single byte that cannot
// start one, becomes one U+FFFD. So a Buffer and the JavaScript string decoded from it give the same
// shingles. Overlong forms, surrogates (ED A0..BF) and code points above U+10FFFF are invalid.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup {
namespace utf8 {

constexpr uint32_t kReplacement = 0xFFFD;

// Decodes one code point at p (p < end). Returns the bytes consumed (1..4) and stores the code point (or
// U+FFFD) in *cp; *valid is false when the bytes were invalid.
inline size_t Decode(const uint8_t* p, const uint8_t* end, uint32_t* cp, bool* valid) {
  const uint8_t b0 = p[0];
  if (b0 < 0x80) {
    *cp = b0;
    *valid = true;
    return 1;
  }
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;
  uint32_t v;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
    v = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    v = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    v = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    *cp = kReplacement;
    *valid = false;
    return 1;
  }
  size_t i = 1;
  for (; i <= need; i++) {
    if (p + i >= end) break;
    const uint8_t b = p[i];
    if (b < lo || b > hi) break;
    lo = 0x80;
    hi = 0xBF;
    v = (v << 6) | (b & 0x3F);
  }
  if (i <= need) {
    *cp = kReplacement;
    *valid = false;
    return i;
  }
  *cp = v;
  *valid = true;
  return need + 1;
}

// Appends the UTF-8 encoding of cp (a valid scalar value) to out; returns the byte count (1..4).
inline size_t Encode(uint32_t cp, uint8_t* out) {
  if (cp < 0x80) {
    out[0] = static_cast<uint8_t>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<uint8_t>(0xC0 | (cp >> 6));
    out[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<uint8_t>(0xE0 | (cp >> 12));
    out[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<uint8_t>(0xF0 | (cp >> 18));
  out[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  return 4;
}

// Appends JSON.stringify(Buffer.toString('utf8') of the bytes) as UTF-8: the bytes decoded as above
// (invalid ones as U+FFFD), quoted, with '"', '\\' and the controls below U+0020 escaped as JavaScript
// does (\b \t \n \f \r, else \u00xx in lower-case hex).
void AppendJsonString(const uint8_t* p, size_t n, std::vector<uint8_t>* out);

// True when every byte is < 0x80.
bool IsAscii(const uint8_t* p, size_t n);

// True when the bytes are well-formed UTF-8.
bool IsValid(const uint8_t* p, size_t n);

// When the bytes are well-formed UTF-8, stores the number of code points in *count and returns true.
bool CountIfValid(const uint8_t* p, size_t n, size_t* count);

// Offset of the first invalid byte, or n when valid.
size_t FirstInvalid(const uint8_t* p, size_t n);

}  // namespace utf8
}  // namespace neardup
