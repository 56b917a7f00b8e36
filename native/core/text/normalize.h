// Character classes and case mapping used by the normalisers and tokenizers. The tables are generated
// (tools/gen-unicode.mjs) from Unicode data; docs/FORMAT.md ("Text rules") states each rule.
#pragma once
#include <cstddef>
#include <cstdint>

namespace neardup {
namespace text {

// Python's str.isspace() set: \t \n \v \f \r, \x1c-\x1f, space, \x85, \xa0, U+1680, U+2000-U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000. (JavaScript's \s differs: it has U+FEFF and lacks \x1c-\x1f,
// \x85.)
inline bool IsSpace(uint32_t c) {
  if (c < 0x80) return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20);
  return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
         c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

// Word characters: letters (\p{L}), numbers (\p{N}) and '_' — Python's \w for str patterns.
bool IsWordSlow(uint32_t c);
inline bool IsWord(uint32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return IsWordSlow(c);
}

// Punctuation: \p{P}.
bool IsPunctSlow(uint32_t c);
inline bool IsPunct(uint32_t c) {
  if (c < 0x80)
    return (c >= 0x21 && c <= 0x23) || (c >= 0x25 && c <= 0x2a) || (c >= 0x2c && c <= 0x2f) || c == 0x3a ||
           c == 0x3b || c == 0x3f || c == 0x40 || (c >= 0x5b && c <= 0x5d) || c == 0x5f || c == 0x7b ||
           c == 0x7d;
  return IsPunctSlow(c);
}

// Word-break classes of the unicode word split (docs/languages.md; the table: tools/gen-unicode.mjs):
// letters and numbers make words, extend characters (marks, format characters) stay with the character
// before them, connectors (\p{Pc}) join, a MidLetter / MidNum / MidNumLet character (UAX #29) stays inside
// a word between two letters (MidLetter, MidNumLet) or two digits (MidNum, MidNumLet), and a cluster letter
// (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) is a unit of its own.
enum WordBreak : uint8_t {
  kWbOther = 0,
  kWbLetter = 1,
  kWbNumeric = 2,
  kWbExtend = 3,
  kWbConnector = 4,
  kWbMidLetter = 5,
  kWbMidNum = 6,
  kWbMidNumLet = 7,
  kWbCluster = 8,
};
uint8_t WordBreakSlow(uint32_t c);
inline uint8_t WordBreakOf(uint32_t c) {
  if (c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return kWbLetter;
    if (c >= '0' && c <= '9') return kWbNumeric;
    if (c == '_') return kWbConnector;
    if (c == ':') return kWbMidLetter;
    if (c == ',' || c == ';') return kWbMidNum;
    if (c == '.' || c == '\'') return kWbMidNumLet;
    return kWbOther;
  }
  return WordBreakSlow(c);
}

// Lower-cases one code point, context-free (the full mappings of String.prototype.toLowerCase and
// Python's str.lower(), except that final sigma is not applied: U+03A3 always becomes U+03C3). Writes 1..3
// code points to out and returns the count.
size_t LowerSlow(uint32_t c, uint32_t out[3]);
inline size_t Lower(uint32_t c, uint32_t out[3]) {
  if (c < 0x80) {
    out[0] = (c >= 'A' && c <= 'Z') ? c + 32 : c;
    return 1;
  }
  return LowerSlow(c, out);
}

}  // namespace text
}  // namespace neardup
