#include "postings/blot.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "text/normalize.h"
#include "text/utf8.h"

namespace neardup {
namespace postings {

namespace {
#include "postings/dupi_unicode13.inc"

size_t EncodeUtf8(uint32_t c, uint8_t* o) {
  if (c < 0x80) {
    o[0] = uint8_t(c);
    return 1;
  }
  if (c < 0x800) {
    o[0] = uint8_t(0xC0 | (c >> 6));
    o[1] = uint8_t(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    o[0] = uint8_t(0xE0 | (c >> 12));
    o[1] = uint8_t(0x80 | ((c >> 6) & 0x3F));
    o[2] = uint8_t(0x80 | (c & 0x3F));
    return 3;
  }
  o[0] = uint8_t(0xF0 | (c >> 18));
  o[1] = uint8_t(0x80 | ((c >> 12) & 0x3F));
  o[2] = uint8_t(0x80 | ((c >> 6) & 0x3F));
  o[3] = uint8_t(0x80 | (c & 0x3F));
  return 4;
}

inline uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
inline uint32_t Fmix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

inline uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t Fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace

bool DupiIsWord(uint32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  size_t lo = 0, hi = sizeof(kDupiWord) / sizeof(kDupiWord[0]);
  while (lo < hi) {
    const size_t m = (lo + hi) / 2;
    if (kDupiWord[m][1] < c)
      lo = m + 1;
    else
      hi = m;
  }
  return lo < sizeof(kDupiWord) / sizeof(kDupiWord[0]) && kDupiWord[lo][0] <= c;
}

uint32_t DupiLower(uint32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  size_t lo = 0, hi = sizeof(kDupiLower) / sizeof(kDupiLower[0]);
  while (lo < hi) {
    const size_t m = (lo + hi) / 2;
    if (kDupiLower[m][0] < c)
      lo = m + 1;
    else
      hi = m;
  }
  return lo < sizeof(kDupiLower) / sizeof(kDupiLower[0]) && kDupiLower[lo][0] == c ? kDupiLower[lo][1] : c;
}

// ASCII classes: bit 0 = word character in the dupi profile, bit 1 = in the neardup profile ('_' too).
struct AsciiTables {
  uint8_t cls[128];
  uint8_t lower[128];
  AsciiTables() {
    for (int c = 0; c < 128; c++) {
      const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      cls[c] = uint8_t((alnum ? 1 : 0) | ((alnum || c == '_') ? 2 : 0));
      lower[c] = uint8_t((c >= 'A' && c <= 'Z') ? c + 32 : c);
    }
  }
};
const AsciiTables kAscii;

void Blotter::Run(const uint8_t* d, size_t n) { Tokenise(d, n, true); }
void Blotter::RunBlots(const uint8_t* d, size_t n) { Tokenise(d, n, false); }

template <bool kSpans, bool kWide>
const uint8_t* Blotter::Hash(const uint8_t* d, const uint8_t* end) {
  // One pass: split into word / other runs and hash each word's lower-cased bytes (FNV-1 32, or with kWide
  // FNV-1 64 then mixed) on the way; with kSpans, also record the runs (tokens) and which are words.
  const bool dupi = o_.profile == BlotProfile::kDupi;
  const uint8_t ascii_bit = dupi ? 1 : 2;
  const uint8_t* p = d;
  int cur = -1;  // class of the open token
  uint32_t h = 0;
  uint64_t h64 = 0;
  auto open = [&](bool w) {
    if (kSpans) {
      const uint32_t at = uint32_t(p - d);
      if (!tokens_.empty()) tokens_.back().end = at;
      tokens_.push_back(Token{at, at, w});
      if (w) words_.push_back(uint32_t(tokens_.size() - 1));
    }
    if (cur == 1) {
      if (kWide)
        hashes64_.push_back(Fmix64(h64));
      else
        hashes_.push_back(h);
    }
    if (w) {
      if (kWide)
        h64 = 0xCBF29CE484222325ull;
      else
        h = 0x811C9DC5u;
    }
    cur = int(w);
  };
  while (p < end) {
    // ASCII run
    while (p < end && *p < 0x80) {
      const uint8_t b = *p;
      const bool w = (kAscii.cls[b] & ascii_bit) != 0;
      if (cur != int(w)) open(w);
      if (w) {
        if (kWide)
          h64 = (h64 * 0x100000001B3ull) ^ kAscii.lower[b];
        else
          h = (h * 0x01000193u) ^ kAscii.lower[b];
      }
      p++;
    }
    if (p == end) break;
    uint32_t cp;
    bool valid = true;
    const size_t len = utf8::Decode(p, end, &cp, &valid);
    const bool w = valid && (dupi ? DupiIsWord(cp) : text::IsWord(cp));
    if (cur != int(w)) open(w);
    if (w) {
      uint8_t buf[12];
      size_t m = 0;
      if (dupi) {
        m = EncodeUtf8(DupiLower(cp), buf);
      } else {
        uint32_t lo[3];
        const size_t k = text::Lower(cp, lo);
        for (size_t i = 0; i < k; i++) m += EncodeUtf8(lo[i], buf + m);
      }
      if (kWide)
        h64 = Fnv1_64(buf, m, h64);
      else
        h = Fnv1(buf, m, h);
    }
    p += len;
  }
  if (cur == 1) {
    if (kWide)
      hashes64_.push_back(Fmix64(h64));
    else
      hashes_.push_back(h);
  }
  return p;
}

// 64-bit blots (neardup profile): window j = words j .. j+S-1 of rings I; ordered: x = 0, then for each
// word x = (rotl64(x, 5) ^ h) * 0x9E3779B97F4A7C15, then Fmix64 (MurmurHash3's 64-bit finaliser); xor: the
// XOR of the (mixed) word hashes.
void Blotter::Windows64() {
  const size_t W = hashes64_.size();
  const size_t S = o_.seq_len, I = o_.interleave, span = S * I;
  if (S == 0 || I == 0 || W < span) return;
  blots64_.reserve(W - span + 1);
  for (size_t j = 0; j + span <= W; j++) {
    const size_t k = j + span - 1;  // last word of the window
    uint64_t x = 0;
    if (o_.hash == WindowHash::kXor) {
      for (size_t t = 0; t < S; t++) x ^= hashes64_[k - t * I];
    } else {
      for (size_t t = S; t-- > 0;) x = (Rotl64(x, 5) ^ hashes64_[k - t * I]) * 0x9E3779B97F4A7C15ull;
      x = Fmix64(x);
    }
    blots64_.push_back(x);
  }
}

void Blotter::Tokenise(const uint8_t* d, size_t n, bool spans) {
  tokens_.clear();
  words_.clear();
  hashes_.clear();
  blots_.clear();
  hashes64_.clear();
  blots64_.clear();
  const bool dupi = o_.profile == BlotProfile::kDupi;
  const uint8_t* end = d + n;
  if (dupi) {
    // Invalid UTF-8 anywhere: no tokens. Otherwise the last code point is dropped.
    const uint8_t* p = d;
    const uint8_t* last = d;
    while (p < end) {
      if (end - p >= 8) {  // ASCII fast path, 8 bytes at a time
        uint64_t w;
        std::memcpy(&w, p, 8);
        if ((w & 0x8080808080808080ull) == 0) {
          p += 8;
          last = p - 1;
          continue;
        }
      }
      uint32_t cp;
      bool valid;
      last = p;
      p += utf8::Decode(p, end, &cp, &valid);
      if (!valid) return;
    }
    end = last;
  }
  const bool wide = !dupi && o_.bits == 64;
  if (spans)
    wide ? Hash<true, true>(d, end) : Hash<true, false>(d, end);
  else
    wide ? Hash<false, true>(d, end) : Hash<false, false>(d, end);
  if (!tokens_.empty()) tokens_.back().end = uint32_t(end - d);
  if (wide) return Windows64();
  const size_t W = hashes_.size();
  const size_t S = o_.seq_len, I = o_.interleave, span = S * I;
  if (S == 0 || I == 0) return;
  if (dupi) {
    if (W <= span) return;
    // Ring of span entries; blot_k = XOR of h_k, h_{k-I}, ..., h_{k-(S-1)I} (indices >= 0), for k >= span.
    if (o_.hash == WindowHash::kXor && I == 1) {
      uint32_t x = 0;
      for (size_t k = 0; k < W; k++) {
        x ^= hashes_[k];
        if (k >= S) x ^= hashes_[k - S];
        if (k >= span) blots_.push_back(x);
      }
      return;
    }
    for (size_t k = span; k < W; k++) {
      uint32_t x = 0;
      if (o_.hash == WindowHash::kXor) {
        for (size_t t = 0; t < S; t++) x ^= hashes_[k - t * I];
      } else {
        for (size_t t = S; t-- > 0;) x = Rotl(x, 5) ^ hashes_[k - t * I], x *= 0x27d4eb2du;
        x = Fmix(x);
      }
      blots_.push_back(x);
    }
    return;
  }
  if (W < span) return;
  if (o_.hash == WindowHash::kXor && I == 1) {
    uint32_t x = 0;
    for (size_t k = 0; k < W; k++) {
      x ^= hashes_[k];
      if (k >= S) x ^= hashes_[k - S];
      if (k + 1 >= S) blots_.push_back(x);
    }
    return;
  }
  for (size_t j = 0; j + span <= W; j++) {
    const size_t k = j + span - 1;  // last word of the window
    uint32_t x = 0;
    if (o_.hash == WindowHash::kXor) {
      for (size_t t = 0; t < S; t++) x ^= hashes_[k - t * I];
    } else {
      for (size_t t = S; t-- > 0;) x = Rotl(x, 5) ^ hashes_[k - t * I], x *= 0x27d4eb2du;
      x = Fmix(x);
    }
    blots_.push_back(x);
  }
}

uint32_t Blotter::first_word(size_t j) const { return uint32_t(j); }

uint32_t Blotter::last_word(size_t j) const {
  const size_t span = size_t(o_.seq_len) * o_.interleave;
  return uint32_t(o_.profile == BlotProfile::kDupi ? j + span : j + span - 1);
}

// ------------------------------------------------------------------------ Go 1.19 sort.Slice (pdqsort)
//
// Written from the description of Go's algorithm (sort/zsortfunc.go, Go 1.19): insertion sort up to 12
// elements, heap sort once `limit` bad pivots were taken, pattern breaking with Go's xorshift after an
// unbalanced partition, Tukey ninther for 50+ elements, partial insertion sort when the slice looks
// sorted, and the "equal elements" partition when the pivot equals the element before the slice.

namespace {

struct GoSorter {
  std::vector<uint32_t>& v;
  const uint32_t* cnt;
  bool Less(long i, long j) const { return cnt[v[size_t(i)]] > cnt[v[size_t(j)]]; }
  void Swap(long i, long j) { std::swap(v[size_t(i)], v[size_t(j)]); }

  void InsertionSort(long a, long b) {
    for (long i = a + 1; i < b; i++)
      for (long j = i; j > a && Less(j, j - 1); j--) Swap(j, j - 1);
  }
  void SiftDown(long lo, long hi, long first) {
    long root = lo;
    for (;;) {
      long child = 2 * root + 1;
      if (child >= hi) return;
      if (child + 1 < hi && Less(first + child, first + child + 1)) child++;
      if (!Less(first + root, first + child)) return;
      Swap(first + root, first + child);
      root = child;
    }
  }
  void HeapSort(long a, long b) {
    const long first = a, hi = b - a;
    for (long i = (hi - 1) / 2; i >= 0; i--) SiftDown(i, hi, first);
    for (long i = hi - 1; i >= 0; i--) {
      Swap(first, first + i);
      SiftDown(0, i, first);
    }
  }
  static unsigned BitLen(uint64_t x) {
    unsigned n = 0;
    while (x) n++, x >>= 1;
    return n;
  }
  void BreakPatterns(long a, long b) {
    const long length = b - a;
    if (length < 8) return;
    uint64_t r = uint64_t(length);
    const uint64_t modulus = uint64_t(1) << BitLen(uint64_t(length));
    for (long idx = a + (length / 4) * 2 - 1; idx <= a + (length / 4) * 2 + 1; idx++) {
      r ^= r << 13;
      r ^= r >> 17;
      r ^= r << 5;
      long other = long(r & (modulus - 1));
      if (other >= length) other -= length;
      Swap(idx, a + other);
    }
  }
  long Order2(long a, long b, long* lo_out, int* swaps) {
    if (Less(b, a)) {
      ++*swaps;
      *lo_out = b;
      return a;
    }
    *lo_out = a;
    return b;
  }
  long Median(long a, long b, long c, int* swaps) {
    long x, y;
    y = Order2(a, b, &x, swaps);
    a = x, b = y;
    y = Order2(b, c, &x, swaps);
    b = x, c = y;
    y = Order2(a, b, &x, swaps);
    a = x, b = y;
    return b;
  }
  // hint: 0 unknown, 1 increasing, 2 decreasing
  long ChoosePivot(long a, long b, int* hint) {
    const long l = b - a;
    int swaps = 0;
    long i = a + l / 4 * 1, j = a + l / 4 * 2, k = a + l / 4 * 3;
    if (l >= 8) {
      if (l >= 50) {
        i = Median(i - 1, i, i + 1, &swaps);
        j = Median(j - 1, j, j + 1, &swaps);
        k = Median(k - 1, k, k + 1, &swaps);
      }
      j = Median(i, j, k, &swaps);
    }
    *hint = swaps == 0 ? 1 : swaps == 12 ? 2 : 0;
    return j;
  }
  void ReverseRange(long a, long b) {
    for (long i = a, j = b - 1; i < j; i++, j--) Swap(i, j);
  }
  bool PartialInsertionSort(long a, long b) {
    long i = a + 1;
    for (int step = 0; step < 5; step++) {
      while (i < b && !Less(i, i - 1)) i++;
      if (i == b) return true;
      if (b - a < 50) return false;
      Swap(i, i - 1);
      if (i - a >= 2) {
        for (long j = i - 1; j >= 1; j--) {  // sic: Go 1.19 stops at 1, not a + 1
          if (!Less(j, j - 1)) break;
          Swap(j, j - 1);
        }
      }
      if (b - i >= 2) {
        for (long j = i + 1; j < b; j++) {
          if (!Less(j, j - 1)) break;
          Swap(j, j - 1);
        }
      }
    }
    return false;
  }
  long PartitionEqual(long a, long b, long pivot) {
    Swap(a, pivot);
    long i = a + 1, j = b - 1;
    for (;;) {
      while (i <= j && !Less(a, i)) i++;
      while (i <= j && Less(a, j)) j--;
      if (i > j) break;
      Swap(i, j);
      i++, j--;
    }
    return i;
  }
  long Partition(long a, long b, long pivot, bool* already) {
    Swap(a, pivot);
    long i = a + 1, j = b - 1;
    while (i <= j && Less(i, a)) i++;
    while (i <= j && !Less(j, a)) j--;
    if (i > j) {
      Swap(j, a);
      *already = true;
      return j;
    }
    Swap(i, j);
    i++, j--;
    for (;;) {
      while (i <= j && Less(i, a)) i++;
      while (i <= j && !Less(j, a)) j--;
      if (i > j) break;
      Swap(i, j);
      i++, j--;
    }
    Swap(j, a);
    *already = false;
    return j;
  }
  void Pdq(long a, long b, int limit) {
    bool was_balanced = true, was_partitioned = true;
    for (;;) {
      const long length = b - a;
      if (length <= 12) {
        InsertionSort(a, b);
        return;
      }
      if (limit == 0) {
        HeapSort(a, b);
        return;
      }
      if (!was_balanced) {
        BreakPatterns(a, b);
        limit--;
      }
      int hint;
      long pivot = ChoosePivot(a, b, &hint);
      if (hint == 2) {
        ReverseRange(a, b);
        pivot = (b - 1) - (pivot - a);
        hint = 1;
      }
      if (was_balanced && was_partitioned && hint == 1) {
        if (PartialInsertionSort(a, b)) return;
      }
      if (a > 0 && !Less(a - 1, pivot)) {
        a = PartitionEqual(a, b, pivot);
        continue;
      }
      bool already;
      const long mid = Partition(a, b, pivot, &already);
      was_partitioned = already;
      const long left = mid - a, right = b - mid;
      const long balance = length / 8;
      if (left < right) {
        was_balanced = left >= balance;
        Pdq(a, mid, limit);
        a = mid + 1;
      } else {
        was_balanced = right >= balance;
        Pdq(mid + 1, b, limit);
        b = mid;
      }
    }
  }
};

}  // namespace

void GoSortByCountDesc(const uint32_t* counts, uint32_t n, std::vector<uint32_t>* perm) {
  perm->resize(n);
  for (uint32_t i = 0; i < n; i++) (*perm)[i] = i;
  if (n <= 1) return;
  GoSorter s{*perm, counts};
  s.Pdq(0, long(n), int(GoSorter::BitLen(n)));
}

void DupiExtractOrder(const std::vector<std::vector<uint32_t>>& counts, double sigma, std::vector<uint32_t>* order,
                      DupiStats* stats) {
  order->clear();
  const size_t n = counts.size();
  size_t blots = 0;
  uint64_t posts = 0;
  for (const auto& c : counts) {
    blots += c.size();
    for (uint32_t v : c) posts += v;
  }
  // The same operations, in the same order, as dupi's (and neardup's TypeScript) statistics.
  const double mean = blots ? double(posts) / double(blots) : 0;
  double sos = 0;
  for (const auto& c : counts) {
    double s = 0;
    for (uint32_t v : c) s += (mean - v) * (mean - v);
    sos += s;
  }
  stats->posts = posts;
  stats->mean = mean;
  stats->sigma = blots ? std::sqrt(sos / double(blots)) : 0;
  const double x = mean + sigma * stats->sigma;
  const double threshold = std::round(x);
  std::vector<std::vector<uint32_t>> perm(n);
  for (size_t s = 0; s < n; s++) GoSortByCountDesc(counts[s].data(), uint32_t(counts[s].size()), &perm[s]);
  std::vector<size_t> pos(n, 0);
  std::vector<bool> live(n);
  for (size_t s = 0; s < n; s++) live[s] = !counts[s].empty();
  for (;;) {
    long best = -1;
    int64_t best_count = -1;
    for (size_t s = 0; s < n; s++) {
      if (!live[s]) continue;
      const int64_t c = counts[s][perm[s][pos[s]]];
      if (c > best_count) best = long(s), best_count = c;
    }
    if (best < 0) break;
    const uint32_t v = perm[size_t(best)][pos[size_t(best)]];
    if (pos[size_t(best)] + 1 == counts[size_t(best)].size() || best_count <= 1)
      live[size_t(best)] = false;
    else
      pos[size_t(best)]++;
    if (best_count <= 1) continue;
    if (double(best_count) < threshold) break;
    order->push_back(uint32_t(v * n + size_t(best)));
  }
}

}  // namespace postings
}  // namespace neardup
