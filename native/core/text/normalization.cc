#include "text/normalization.h"

#include <algorithm>
#include <cstring>

#include "hash/fast64.h"
#include "text/normalize.h"
#include "text/utf8.h"

namespace neardup {
namespace text {
namespace {

struct NormRecord {
  uint8_t ccc;    // canonical combining class, as a rank (0: a starter)
  uint8_t flags;  // kBoundaryNfc | kBoundaryNfkc | kLowerChanges | kSecond
  uint8_t nfd_len, nfkd_len;
  uint16_t nfd_off, nfkd_off;
};
struct ComposePair {
  uint64_t key;  // first << 21 | second
  uint32_t composite;
};

#include "text/normalization_tables.inc"

constexpr uint8_t kBoundaryNfc = 1, kBoundaryNfkc = 2, kLowerChanges = 4, kSecond = 8;

// A segment's code point in scratch: the rank of its combining class in the top byte, bit 23 set when it can
// be the second of a composition, the code point in the low 21 bits.
constexpr uint32_t kCpMask = 0x1FFFFF, kSecondBit = 1u << 23;

constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

inline const NormRecord& Rec(uint32_t c) {
  constexpr uint32_t mask = (1u << kNormShift) - 1;
  return kNormRecords[kNormStage2[(static_cast<uint32_t>(kNormStage1[c >> kNormShift]) << kNormShift) | (c & mask)]];
}

inline uint32_t Packed(uint32_t c, const NormRecord& r) {
  return (static_cast<uint32_t>(r.ccc) << 24) | ((r.flags & kSecond) ? kSecondBit : 0) | c;
}

// The primary composite of (a, b), if any.
bool Compose(uint32_t a, uint32_t b, uint32_t* out) {
  if (a - kLBase < kLCount && b - kVBase < kVCount) {
    *out = kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    return true;
  }
  if (a - kSBase < kSCount && (a - kSBase) % kTCount == 0 && b - kTBase - 1 < kTCount - 1) {
    *out = a + (b - kTBase);
    return true;
  }
  constexpr size_t n = sizeof(kComposePairs) / sizeof(kComposePairs[0]);
  const uint64_t key = (static_cast<uint64_t>(a) << 21) | b;
  const ComposePair* it =
      std::lower_bound(kComposePairs, kComposePairs + n, key, [](const ComposePair& e, uint64_t k) { return e.key < k; });
  if (it == kComposePairs + n || it->key != key) return false;
  *out = it->composite;
  return true;
}

// The boundary flag of every BMP code point as a bit, for the three kinds of run (NFC, NFKC, NFC of
// lower-cased text): one load where the records take three. Built once, from the records.
struct BmpBoundaries {
  uint64_t bits[3][1024] = {};
  BmpBoundaries() {
    for (uint32_t c = 0; c < 0x10000; c++) {
      const uint8_t f = Rec(c).flags;
      const uint64_t bit = uint64_t(1) << (c & 63);
      if (f & kBoundaryNfc) bits[0][c >> 6] |= bit;
      if (f & kBoundaryNfkc) bits[1][c >> 6] |= bit;
      if ((f & kBoundaryNfc) && !(f & kLowerChanges)) bits[2][c >> 6] |= bit;
    }
  }
};

const BmpBoundaries& Bmp() {
  static const BmpBoundaries b;
  return b;
}

// utf8::Decode with the well-formed two- and three-byte forms inline (the rest, invalid bytes included, by
// utf8::Decode).
inline size_t DecodeFast(const uint8_t* p, const uint8_t* end, uint32_t* cp, bool* valid) {
  const uint8_t b0 = p[0];
  if (b0 >= 0xC2 && b0 <= 0xDF && end - p >= 2 && (p[1] & 0xC0) == 0x80) {
    *cp = (uint32_t(b0 & 0x1F) << 6) | (p[1] & 0x3F);
    *valid = true;
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF && end - p >= 3 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
    const uint32_t c = (uint32_t(b0 & 0x0F) << 12) | (uint32_t(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    if (c >= 0x800 && (c < 0xD800 || c > 0xDFFF)) {
      *cp = c;
      *valid = true;
      return 3;
    }
  }
  return utf8::Decode(p, end, cp, valid);
}

template <typename V>
inline void EnsureSize(V& v, size_t n) {
  if (v.size() < n) v.Allocate(n + n / 4 + 16);
}

// Stable sort of a run of non-starters by combining class: insertion sort for the usual few marks, a
// counting sort (stable, linear) for long runs.
void SortMarks(uint32_t* v, size_t n, RawBuffer<uint32_t>* tmp) {
  if (n <= 32) {
    for (size_t i = 1; i < n; i++) {
      const uint32_t x = v[i];
      size_t j = i;
      while (j > 0 && (v[j - 1] >> 24) > (x >> 24)) {
        v[j] = v[j - 1];
        j--;
      }
      v[j] = x;
    }
    return;
  }
  EnsureSize(*tmp, n);
  size_t count[257] = {};
  for (size_t i = 0; i < n; i++) count[(v[i] >> 24) + 1]++;
  for (size_t k = 1; k < 257; k++) count[k] += count[k - 1];
  uint32_t* t = tmp->data();
  for (size_t i = 0; i < n; i++) t[count[v[i] >> 24]++] = v[i];
  std::memcpy(v, t, n * sizeof(uint32_t));
}

inline uint8_t* CopyRun(const uint8_t* b, const uint8_t* e, bool lower, uint8_t* o) {
  const size_t n = static_cast<size_t>(e - b);
  if (!lower) {
    std::memcpy(o, b, n);
    return o + n;
  }
  for (size_t i = 0; i < n; i++) o[i] = static_cast<uint8_t>(b[i] + (static_cast<uint8_t>(b[i] - 'A') < 26 ? 32 : 0));
  return o + n;
}

}  // namespace

size_t NormalizedBytesBound(NormalForm f, size_t len) {
  return f == NormalForm::kNone ? 3 * len : kNormBound[static_cast<int>(f)][0] * len;
}

size_t NormalizedCodePointsBound(NormalForm f, size_t len) {
  return f == NormalForm::kNone ? len : kNormBound[static_cast<int>(f)][1] * len;
}

// One segment [p, end): a boundary code point (unless the text starts with marks) and the code points up to
// the next boundary. Decomposed into cps_, put in canonical order, composed in place, encoded to out.
size_t Normalizer::Segment(bool compat, bool lower, const uint8_t* p, const uint8_t* end, uint8_t* out) {
  const size_t per_byte = lower ? kNormLowerBound : kNormBound[compat ? 2 : 1][1];
  EnsureSize(cps_, static_cast<size_t>(end - p) * per_byte + 8);
  uint32_t* cps = cps_.data();
  size_t n = 0;
  auto decompose = [&](uint32_t c) {
    if (c - kSBase < kSCount) {
      const uint32_t s = c - kSBase;
      cps[n++] = kLBase + s / kNCount;
      cps[n++] = kSecondBit | (kVBase + (s % kNCount) / kTCount);
      if (s % kTCount != 0) cps[n++] = kSecondBit | (kTBase + s % kTCount);
      return;
    }
    const NormRecord& r = Rec(c);
    const size_t k = compat ? r.nfkd_len : r.nfd_len;
    if (k == 0) {
      cps[n++] = Packed(c, r);
      return;
    }
    const uint32_t* d = kNormPool + (compat ? r.nfkd_off : r.nfd_off);
    for (size_t i = 0; i < k; i++) cps[n++] = Packed(d[i], Rec(d[i]));
  };
  while (p < end) {
    uint32_t c;
    bool valid;
    p += utf8::Decode(p, end, &c, &valid);  // valid: Run ends segments before invalid bytes
    if (lower) {
      uint32_t low[3];
      const size_t k = Lower(c, low);
      for (size_t i = 0; i < k; i++) decompose(low[i]);
    } else {
      decompose(c);
    }
  }
  // Canonical ordering: each run of non-starters, by class.
  for (size_t a = 0; a < n;) {
    if ((cps[a] >> 24) == 0) {
      a++;
      continue;
    }
    size_t b = a + 1;
    while (b < n && (cps[b] >> 24) != 0) b++;
    if (b - a > 1) SortMarks(cps + a, b - a, &tmp_);
    a = b;
  }
  // Composition: each code point with the last starter, unless blocked (a code point between them of class 0
  // or of a class not below its own) or adjacent to it.
  size_t w = 0, starter = SIZE_MAX;
  uint32_t prev = 0;  // the class of the last code point kept
  for (size_t a = 0; a < n; a++) {
    const uint32_t v = cps[a];
    const uint32_t cc = v >> 24;
    uint32_t comp;
    if (starter != SIZE_MAX && (v & kSecondBit) && (w == starter + 1 || prev < cc) &&
        Compose(cps[starter] & kCpMask, v & kCpMask, &comp)) {
      cps[starter] = comp;  // primary composites are starters
      continue;
    }
    if (cc == 0) starter = w;
    prev = cc;
    cps[w++] = v;
  }
  uint8_t* o = out;
  for (size_t a = 0; a < w; a++) o += utf8::Encode(cps[a] & kCpMask, o);
  return static_cast<size_t>(o - out);
}

// Copies runs of boundary code points; normalises each segment that holds anything else. Under `lower`
// (nfkc_casefold's second pass) a code point that lower-casing changes is no boundary (ASCII is lower-cased
// in the copy).
size_t Normalizer::Run(bool compat, bool lower, const uint8_t* p, size_t len, uint8_t* out, bool* invalid) {
  const uint8_t* end = p + len;
  const uint8_t bnd = compat ? kBoundaryNfkc : kBoundaryNfc;
  const uint8_t stop = bnd | (lower ? kLowerChanges : 0);  // copied iff (flags & stop) == bnd
  const uint64_t* bmp = Bmp().bits[lower ? 2 : compat ? 1 : 0];
  auto boundary = [&](uint32_t c) {
    return c < 0x10000 ? ((bmp[c >> 6] >> (c & 63)) & 1) != 0 : (Rec(c).flags & stop) == bnd;
  };
  uint8_t* o = out;
  const uint8_t* i = p;
  while (i < end) {
    const uint8_t* r = i;
    const uint8_t* last = nullptr;  // the last boundary code point of the run
    size_t bad = 0;                 // the length of the invalid sequence that ended the run
    while (r < end) {
      if (*r < 0x80) {
        if (end - r >= 8) {
          // the ASCII bytes of the next eight at once (little-endian: the lowest set top bit is the first
          // byte that is not ASCII)
          const uint64_t high = fast64::R64(r) & 0x8080808080808080ull;
          const size_t k = high == 0 ? 8 : static_cast<size_t>(__builtin_ctzll(high)) >> 3;
          last = r + k - 1;
          r += k;
          continue;
        }
        last = r++;
        continue;
      }
      uint32_t c;
      bool valid;
      const size_t k = DecodeFast(r, end, &c, &valid);
      if (!valid) {
        bad = k;
        break;
      }
      if (!boundary(c)) break;
      last = r;
      r += k;
    }
    if (r == end || bad != 0) {
      o = CopyRun(i, r, lower, o);
      if (bad != 0) {
        *invalid = true;
        o += utf8::Encode(utf8::kReplacement, o);  // U+FFFD: a boundary
        r += bad;
      }
      i = r;
      continue;
    }
    // r holds a code point that is no boundary: its segment starts at the run's last code point.
    const uint8_t* seg = last != nullptr ? last : r;
    o = CopyRun(i, seg, lower, o);
    const uint8_t* j = r;
    while (j < end) {
      if (*j < 0x80) break;
      uint32_t c;
      bool valid;
      const size_t k = DecodeFast(j, end, &c, &valid);
      if (!valid || boundary(c)) break;
      j += k;
    }
    o += Segment(compat, lower, seg, j, o);
    i = j;
  }
  return static_cast<size_t>(o - out);
}

size_t Normalizer::Normalize(NormalForm f, const uint8_t* p, size_t len, RawBuffer<uint8_t>* out, bool* invalid) {
  if (f != NormalForm::kNfkcCasefold) EnsureSize(*out, NormalizedBytesBound(f, len) + 16);
  switch (f) {
    case NormalForm::kNfc:
      return Run(false, false, p, len, out->data(), invalid);
    case NormalForm::kNfkc:
      return Run(true, false, p, len, out->data(), invalid);
    case NormalForm::kNfkcCasefold: {
      EnsureSize(mid_, NormalizedBytesBound(NormalForm::kNfkc, len) + 16);
      const size_t m = Run(true, false, p, len, mid_.data(), invalid);
      EnsureSize(*out, m * kNormLowerBound + 16);
      bool unused = false;
      return Run(false, true, mid_.data(), m, out->data(), &unused);
    }
    case NormalForm::kNone:
    default: {
      if (utf8::IsValid(p, len)) {
        std::memcpy(out->data(), p, len);
        return len;
      }
      const uint8_t* end = p + len;
      uint8_t* o = out->data();
      while (p < end) {
        uint32_t c;
        bool valid;
        const size_t k = utf8::Decode(p, end, &c, &valid);
        if (valid) {
          std::memcpy(o, p, k);
          o += k;
        } else {
          *invalid = true;
          o += utf8::Encode(utf8::kReplacement, o);
        }
        p += k;
      }
      return static_cast<size_t>(o - out->data());
    }
  }
}

std::string Normalizer::Normalize(NormalForm f, std::string_view s, bool* invalid) {
  RawBuffer<uint8_t> out;
  bool bad = false;
  const size_t n = Normalize(f, reinterpret_cast<const uint8_t*>(s.data()), s.size(), &out, &bad);
  if (invalid != nullptr) *invalid = bad;
  return std::string(reinterpret_cast<const char*>(out.data()), n);
}

}  // namespace text
}  // namespace neardup
