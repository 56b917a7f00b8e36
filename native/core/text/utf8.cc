#include "text/utf8.h"

#include <cstring>

namespace neardup {
namespace utf8 {

bool IsAscii(const uint8_t* p, size_t n) {
  size_t i = 0;
  uint64_t acc = 0;
  for (; i + 32 <= n; i += 32) {
    uint64_t a, b, c, d;
    std::memcpy(&a, p + i, 8);
    std::memcpy(&b, p + i + 8, 8);
    std::memcpy(&c, p + i + 16, 8);
    std::memcpy(&d, p + i + 24, 8);
    if ((a | b | c | d) & 0x8080808080808080ull) return false;
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t a;
    std::memcpy(&a, p + i, 8);
    acc |= a;
  }
  if (acc & 0x8080808080808080ull) return false;
  for (; i < n; i++)
    if (p[i] & 0x80) return false;
  return true;
}

namespace {

// Scans for the first invalid byte (returned; n when valid), counting code points before it.
size_t Scan(const uint8_t* p, size_t n, size_t* cps_out) {
  const uint8_t* end = p + n;
  size_t i = 0, cps = 0;
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t a;
      std::memcpy(&a, p + i, 8);
      if ((a & 0x8080808080808080ull) == 0) {
        i += 8;
        cps += 8;
        continue;
      }
    }
    uint32_t cp;
    bool valid;
    const size_t k = Decode(p + i, end, &cp, &valid);
    if (!valid) break;
    i += k;
    cps++;
  }
  *cps_out = cps;
  return i < n ? i : n;
}

}  // namespace

size_t FirstInvalid(const uint8_t* p, size_t n) {
  size_t cps;
  return Scan(p, n, &cps);
}

bool IsValid(const uint8_t* p, size_t n) { return FirstInvalid(p, n) == n; }

bool CountIfValid(const uint8_t* p, size_t n, size_t* count) {
  size_t cps;
  if (Scan(p, n, &cps) != n) return false;
  *count = cps;
  return true;
}

}  // namespace utf8
}  // namespace neardup
