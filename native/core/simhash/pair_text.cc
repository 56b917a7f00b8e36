#include "simhash/pair_text.h"

#include <cstring>
#include <utility>

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

namespace {

inline bool IsBlank(uint8_t c) { return c == 0x20 || (c >= 0x09 && c <= 0x0d) || c == 0xa0; }

inline void Keep(FingerprintLineState* st, uint8_t c) {
  if (st->head_len < sizeof st->head) st->head[st->head_len++] = static_cast<char>(c);
}

}  // namespace

void ParseFingerprintText(const uint8_t* text, size_t n, bool final, FingerprintLineState* st, uint64_t* out,
                          size_t cap, FingerprintParse* r) {
  *r = FingerprintParse();
  // ends the line under way; false when it is bad (the state keeps it) or out is full
  auto end_line = [&]() -> bool {
    if (st->started) {
      if (st->bad || st->over) {
        r->bad = true;
        return false;
      }
      if (r->values == cap) return false;
      out[r->values++] = st->value;
      r->lines++;
    }
    std::memset(st, 0, sizeof *st);
    return true;
  };
  size_t i = 0;
  while (i < n) {
    const uint8_t c = text[i];
    if (c == '\n') {
      if (!end_line()) break;
      r->newlines++;
      i++;
      continue;
    }
    if (c >= '0' && c <= '9') {
      if (st->trailing) st->bad = 1;  // a digit after blanks inside the line
      st->started = 1;
      Keep(st, c);
      if (!st->bad && !st->over) {
        if (++st->digits > 20) {
          st->over = 1;
        } else {
          uint64_t v;
          if (__builtin_mul_overflow(st->value, uint64_t{10}, &v) || __builtin_add_overflow(v, uint64_t(c - '0'), &v))
            st->over = 1;
          else
            st->value = v;
        }
      }
    } else if (IsBlank(c)) {
      if (st->started) {
        st->trailing = 1;  // fine at the end of the line
        Keep(st, c);
      }
    } else {
      st->started = st->bad = 1;
      Keep(st, c);
    }
    i++;
  }
  if (i == n && final && st->started) end_line();  // a last line without its newline
  r->consumed = i;
}

size_t SortDistinct(uint64_t* a, size_t n, std::vector<uint64_t>* tmp) {
  if (n < 2) return n;
  constexpr int kBits = 11, kPasses = (64 + kBits - 1) / kBits;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<size_t> count(kPasses * kBuckets, 0);
  for (size_t i = 0; i < n; i++) {
    const uint64_t v = a[i];
    for (int p = 0; p < kPasses; p++) count[p * kBuckets + ((v >> (p * kBits)) & (kBuckets - 1))]++;
  }
  tmp->resize(n);
  uint64_t* src = a;
  uint64_t* dst = tmp->data();
  for (int p = 0; p < kPasses; p++) {
    size_t* c = count.data() + p * kBuckets;
    const uint64_t first = (src[0] >> (p * kBits)) & (kBuckets - 1);
    if (c[first] == n) continue;  // every value has this digit: the order stands
    size_t sum = 0;
    for (size_t b = 0; b < kBuckets; b++) {
      const size_t k = c[b];
      c[b] = sum;
      sum += k;
    }
    for (size_t i = 0; i < n; i++) {
      const uint64_t v = src[i];
      dst[c[(v >> (p * kBits)) & (kBuckets - 1)]++] = v;
    }
    std::swap(src, dst);
  }
  if (src != a) std::memcpy(a, src, n * sizeof *a);
  size_t k = 1;
  for (size_t i = 1; i < n; i++)
    if (a[i] != a[k - 1]) a[k++] = a[i];
  return k;
}

}  // namespace simhash
}  // namespace neardup
