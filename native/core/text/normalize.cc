#include "text/normalize.h"

#include <algorithm>

namespace neardup {
namespace text {
namespace {

struct CodeRange {
  uint32_t lo, hi;
};
struct LowerEntry {
  uint32_t from;
  uint32_t to[3];
};

#include "text/unicode_tables.inc"
#include "text/word_break_tables.inc"

template <size_t N>
bool InRanges(const CodeRange (&r)[N], uint32_t c) {
  const CodeRange* it = std::upper_bound(r, r + N, c, [](uint32_t v, const CodeRange& x) { return v < x.lo; });
  if (it == r) return false;
  --it;
  return c <= it->hi;
}

}  // namespace

bool IsWordSlow(uint32_t c) { return InRanges(kWordRanges, c); }
bool IsPunctSlow(uint32_t c) { return InRanges(kPunctRanges, c); }

uint8_t WordBreakSlow(uint32_t c) {
  if (c > 0x10ffff) return kWbOther;
  const uint32_t block = kWordBreakStage1[c >> kWordBreakShift];
  return kWordBreakStage2[(block << kWordBreakShift) | (c & ((1u << kWordBreakShift) - 1))];
}

size_t LowerSlow(uint32_t c, uint32_t out[3]) {
  constexpr size_t n = sizeof(kLowerMap) / sizeof(kLowerMap[0]);
  const LowerEntry* it =
      std::lower_bound(kLowerMap, kLowerMap + n, c, [](const LowerEntry& e, uint32_t v) { return e.from < v; });
  if (it == kLowerMap + n || it->from != c) {
    out[0] = c;
    return 1;
  }
  size_t k = 0;
  for (; k < 3 && it->to[k] != 0; k++) out[k] = it->to[k];
  return k;
}

}  // namespace text
}  // namespace neardup
