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

void AppendJsonString(const uint8_t* p, size_t n, std::vector<uint8_t>* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  const uint8_t* end = p + n;
  while (p < end) {
    const uint8_t* run = p;  // printable ASCII other than '"' and '\\' is copied as it is
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    out->insert(out->end(), run, p);
    if (p == end) break;
    const uint8_t b = *p;
    if (b < 0x80) {
      out->push_back('\\');
      switch (b) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '\b': out->push_back('b'); break;
        case '\t': out->push_back('t'); break;
        case '\n': out->push_back('n'); break;
        case '\f': out->push_back('f'); break;
        case '\r': out->push_back('r'); break;
        default:
          out->insert(out->end(), {'u', '0', '0', uint8_t(kHex[b >> 4]), uint8_t(kHex[b & 15])});
      }
      p++;
      continue;
    }
    uint32_t cp = 0;
    bool valid = false;
    const size_t k = Decode(p, end, &cp, &valid);
    if (valid)
      out->insert(out->end(), p, p + k);
    else
      out->insert(out->end(), {0xEF, 0xBF, 0xBD});
    p += k;
  }
  out->push_back('"');
}

}  // namespace utf8
}  // namespace neardup
