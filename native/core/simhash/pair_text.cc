#include "simhash/pair_text.h"

#include <cstring>

namespace neardup {
namespace simhash {

namespace {

// "00".."99"
struct Digits {
  char pairs[200];
  Digits() {
    for (int i = 0; i < 100; i++) {
      pairs[2 * i] = static_cast<char>('0' + i / 10);
      pairs[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
  }
};
const Digits kDigits;

}  // namespace

size_t FormatU64(uint64_t v, char* out) {
  char tmp[20];
  size_t at = 20;
  while (v >= 100) {
    const unsigned r = static_cast<unsigned>(v % 100);
    v /= 100;
    at -= 2;
    std::memcpy(tmp + at, kDigits.pairs + 2 * r, 2);
  }
  if (v >= 10) {
    at -= 2;
    std::memcpy(tmp + at, kDigits.pairs + 2 * v, 2);
  } else {
    tmp[--at] = static_cast<char>('0' + v);
  }
  const size_t len = 20 - at;
  std::memcpy(out, tmp + at, len);
  return len;
}

size_t FormatPairLines(const uint64_t* a, const uint64_t* b, size_t n, size_t first, char* out, size_t cap, size_t* next) {
  size_t at = 0, i = first;
  for (; i < n && cap - at >= kMaxPairLine; i++) {
    at += FormatU64(a[i], out + at);
    out[at++] = ' ';
    at += FormatU64(b[i], out + at);
    out[at++] = '\n';
  }
  *next = i;
  return at;
}

}  // namespace simhash
}  // namespace neardup
