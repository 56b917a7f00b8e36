// Bit-level codecs of the posting store (docs/FORMAT.md, section 10): a bit stream (bit i of the stream is
// bit i mod 8 of byte i / 8), Rice codes (key gaps and counts in the key blocks) and Elias-Fano lists (the
// doc ids of one key). An Elias-Fano list of n ids in a universe of U ids takes EfBits(n, U) bits, a
// function of n alone within a segment, so list offsets need not be stored: they are summed from counts.
//
// Readers get a pointer to the stream and its length in bits; every read stays below that length and
// every 64-bit load stays within 8 bytes past the last byte of the stream (the segment layout guarantees
// that those bytes exist), so hostile streams cannot read out of bounds.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hash/crc32c.h"
#include "hash/fast64.h"
#include "util/endian.h"

namespace neardup {
namespace postings {

inline unsigned BitWidth(uint64_t v) { return v ? 64 - unsigned(__builtin_clzll(v)) : 0; }

// Little-endian 64-bit load from any address, one instruction on little-endian hosts (util/endian.h's
// byte loop is not merged into one load by GCC): fast64's loader.
inline uint64_t Load64(const uint8_t* p) { return fast64::R64(p); }

// Elias-Fano: low-bit width of a list of n >= 1 ids in [0, U): floor(log2(U / n)), 0 when U <= n. The
// largest l with n << l <= U, which is BitWidth(U) - BitWidth(n) or one less (no division).
inline unsigned EfLowBits(uint64_t n, uint64_t universe) {
  if (universe <= n) return 0;
  const unsigned l = BitWidth(universe) - BitWidth(n);
  return (n << l) > universe ? l - 1 : l;
}
// Bits of a list of n >= 1 ids in [0, U): n low parts of L bits, then the high parts in unary (one 1 bit
// per id, after as many 0 bits as its high part grew), padded with 0 bits to n + ((U - 1) >> L).
inline uint64_t EfBits(uint64_t n, uint64_t universe) {
  const unsigned l = EfLowBits(n, universe);
  return n * l + n + ((universe - 1) >> l);
}

// A key block's checksum (segment version 3): CRC-32C of the stream bytes floor(from / 8) .. ceil(to / 8) - 1
// with the bits outside [from, to) taken as 0 (the bytes at both ends are shared with the neighbouring blocks).
inline uint8_t MaskByte(uint8_t c, uint64_t byte, uint64_t from, uint64_t to) {
  if (byte == from >> 3) c = uint8_t(c & (0xff << (from & 7)));
  if (byte == (to - 1) >> 3 && (to & 7)) c = uint8_t(c & (0xff >> (8 - (to & 7))));
  return c;
}
inline uint32_t BitRangeCrc(const uint8_t* d, uint64_t from, uint64_t to) {
  if (to <= from) return 0;
  const uint64_t b0 = from >> 3, b1 = (to + 7) >> 3;
  uint8_t c = MaskByte(d[b0], b0, from, to);
  uint32_t crc = Crc32c(&c, 1);
  if (b1 - b0 == 1) return crc;
  crc = Crc32c(d + b0 + 1, size_t(b1 - b0 - 2), crc);
  c = MaskByte(d[b1 - 1], b1 - 1, from, to);
  return Crc32c(&c, 1, crc);
}

class BitWriter {
 public:
  // Appends the low `bits` bits of v (bits <= 64; v has no bits above them).
  void Put(uint64_t v, unsigned bits) {
    acc_ |= v << fill_;  // fill_ < 64
    fill_ += bits;
    bits_ += bits;
    if (fill_ >= 64) {
      Emit64(acc_);
      fill_ -= 64;
      acc_ = fill_ ? v >> (bits - fill_) : 0;
    }
  }
  void Zeros(uint64_t n) {
    while (n >= 64) Put(0, 64), n -= 64;
    Put(0, unsigned(n));
  }
  // q 0 bits, then a 1 bit.
  void Unary(uint64_t q) {
    Zeros(q);
    Put(1, 1);
  }
  void Rice(uint64_t v, unsigned k) {
    Put(k ? v & (~uint64_t(0) >> (64 - k)) : 0, k);
    Unary(k < 64 ? v >> k : 0);
  }
  // Appends n bits of another stream, from its bit `bit` on (each 64-bit load stays within 8 bytes past the
  // byte holding the last bit copied, as the readers' loads do).
  void Copy(const uint8_t* src, uint64_t bit, uint64_t n) {
    constexpr uint64_t kMask56 = (uint64_t(1) << 56) - 1;
    for (; n >= 56; n -= 56, bit += 56) Put((Load64(src + (bit >> 3)) >> (bit & 7)) & kMask56, 56);
    if (n) Put((Load64(src + (bit >> 3)) >> (bit & 7)) & ((uint64_t(1) << n) - 1), unsigned(n));
  }
  uint64_t bits() const { return bits_; }
  // BitRangeCrc of the stream's bits [from, bits()): the bytes from floor(from / 8) on must still be held
  // (not taken out of bytes() since).
  uint32_t RangeCrc(uint64_t from) const {
    const uint64_t to = bits_;
    if (to <= from) return 0;
    const uint64_t emitted = (bits_ - fill_) >> 3, held = emitted - out_.size();
    const uint64_t b0 = from >> 3, b1 = (to + 7) >> 3;
    uint8_t pend[8];
    for (unsigned i = 0; i < 8; i++) pend[i] = uint8_t(acc_ >> (8 * i));
    auto at = [&](uint64_t i) { return i < emitted ? out_[size_t(i - held)] : pend[i - emitted]; };
    uint8_t c = MaskByte(at(b0), b0, from, to);
    uint32_t crc = Crc32c(&c, 1);
    uint64_t i = b0 + 1;
    const uint64_t m = std::min(emitted, b1 - 1);
    if (m > i) {
      crc = Crc32c(out_.data() + (i - held), size_t(m - i), crc);
      i = m;
    }
    for (; i < b1; i++) {
      c = MaskByte(at(i), i, from, to);
      crc = Crc32c(&c, 1, crc);
    }
    return crc;
  }
  // Whole bytes written so far (the partial last byte stays until Finish).
  std::vector<uint8_t>& bytes() { return out_; }
  // Pads the stream to a whole byte and moves the remaining bits into bytes().
  void Finish() {
    while (fill_ > 0) {
      out_.push_back(uint8_t(acc_));
      acc_ >>= 8;
      fill_ = fill_ >= 8 ? fill_ - 8 : 0;
    }
    acc_ = 0;
  }

 private:
  void Emit64(uint64_t w) {
    const size_t at = out_.size();
    out_.resize(at + 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    std::memcpy(out_.data() + at, &w, 8);
  }
  std::vector<uint8_t> out_;
  uint64_t acc_ = 0, bits_ = 0;
  unsigned fill_ = 0;  // bits in acc_ (< 64)
};

// Cost in bits of Rice-coding values with parameter k, and the k (<= max_k) that minimises it.
inline uint64_t RiceCost(const uint64_t* v, size_t n, unsigned k) {
  uint64_t c = uint64_t(n) * (k + 1);
  for (size_t i = 0; i < n; i++) c += k < 64 ? v[i] >> k : 0;
  return c;
}
inline unsigned BestRiceK(const uint64_t* v, size_t n, unsigned max_k) {
  uint64_t hi = 0;
  for (size_t i = 0; i < n; i++) hi |= v[i];
  const unsigned top = BitWidth(hi) < max_k ? BitWidth(hi) : max_k;
  unsigned best = 0;
  uint64_t best_cost = RiceCost(v, n, 0);
  // the cost is convex in k (cost(k + 1) - cost(k) = n - sum(ceil((v >> k) / 2)) does not decrease with k):
  // the first k that costs no less than the best so far ends the search
  for (unsigned k = 1; k <= top; k++) {
    const uint64_t c = RiceCost(v, n, k);
    if (c >= best_cost) break;
    best = k, best_cost = c;
  }
  return best;
}

class BitReader {
 public:
  BitReader(const uint8_t* data, uint64_t bits) : d_(data), end_(bits) {}
  uint64_t end() const { return end_; }
  // `bits` (<= 56) bits at pos; pos + bits <= end() is the caller's check.
  uint64_t Get56(uint64_t pos, unsigned bits) const {
    if (bits == 0) return 0;
    return (Load64(d_ + (pos >> 3)) >> (pos & 7)) & (~uint64_t(0) >> (64 - bits));
  }
  uint64_t Get(uint64_t pos, unsigned bits) const {
    if (bits <= 56) return Get56(pos, bits);
    return Get56(pos, 32) | Get56(pos + 32, bits - 32) << 32;
  }
  // Counts the 0 bits from *pos to the next 1 bit and moves *pos past it; false if no 1 bit before limit.
  bool Unary(uint64_t* pos, uint64_t limit, uint64_t* q) const {
    const uint64_t start = *pos;
    uint64_t p = start;
    while (p < limit) {
      const uint64_t w = Load64(d_ + (p >> 3)) >> (p & 7);
      if (w != 0) {
        p += unsigned(__builtin_ctzll(w));
        if (p >= limit) return false;
        *q = p - start;
        *pos = p + 1;
        return true;
      }
      p += 64 - (p & 7);
    }
    return false;
  }
  // A Rice code with parameter k at *pos (below limit); false if it runs past limit or exceeds 64 bits.
  bool Rice(uint64_t* pos, uint64_t limit, unsigned k, uint64_t* v) const {
    // Fast path: the whole code lies in the (at least) 57 bits of one load, well before limit.
    if (k <= 56 && *pos + 64 <= limit) {
      const uint64_t w = Load64(d_ + (*pos >> 3)) >> (*pos & 7);
      const uint64_t rest = w >> k;
      if (rest != 0) {
        const unsigned q = unsigned(__builtin_ctzll(rest));
        *v = uint64_t(q) << k | (w & ((uint64_t(1) << k) - 1));
        *pos += k + q + 1;
        return true;
      }
    }
    if (*pos > limit || limit - *pos < k) return false;
    const uint64_t low = Get(*pos, k);
    *pos += k;
    uint64_t q = 0;
    if (!Unary(pos, limit, &q)) return false;
    if (k < 64 && q > (~uint64_t(0) >> k)) return false;
    if (k == 64 && q != 0) return false;
    *v = (k < 64 ? q << k : 0) | low;
    return true;
  }
  // Decodes an Elias-Fano list of n ids in [0, U) occupying bits [pos, pos + EfBits(n, U)) (the caller
  // checked that range) into out[0..n), adding base. False if the list is malformed (too few 1 bits, ids
  // not strictly ascending or not below U).
  bool EliasFano(uint64_t pos, uint64_t n, uint64_t universe, uint32_t base, uint32_t* out) const {
    const unsigned l = EfLowBits(n, universe);
    const uint64_t low_mask = l ? ~uint64_t(0) >> (64 - l) : 0;
    const uint64_t hi_start = pos + n * l;
    const uint64_t hi_end = hi_start + n + ((universe - 1) >> l);
    uint64_t at = hi_start - (hi_start & 7);  // bit position of the 64-bit window (a whole byte)
    uint64_t w = Load64(d_ + (at >> 3)) & (~uint64_t(0) << (hi_start - at));
    uint64_t prev = 0;
    for (uint64_t i = 0; i < n; i++) {
      while (w == 0) {
        at += 64;
        if (at >= hi_end) return false;
        w = Load64(d_ + (at >> 3));
      }
      const uint64_t p = at + unsigned(__builtin_ctzll(w));
      w &= w - 1;
      if (p >= hi_end) return false;
      const uint64_t hi = p - hi_start - i;
      const uint64_t lo_at = pos + i * l;
      const uint64_t x = hi << l | ((Load64(d_ + (lo_at >> 3)) >> (lo_at & 7)) & low_mask);
      if (x >= universe || (i > 0 && x <= prev)) return false;
      prev = x;
      out[i] = uint32_t(base + x);
    }
    return true;
  }

 private:
  const uint8_t* d_;
  uint64_t end_;
};

// Writes an Elias-Fano list: ids ascending, distinct, in [base, base + U).
inline void PutEliasFano(BitWriter* w, const uint32_t* ids, size_t n, uint32_t base, uint64_t universe) {
  const unsigned l = EfLowBits(n, universe);
  const uint64_t mask = l ? ~uint64_t(0) >> (64 - l) : 0;
  for (size_t i = 0; i < n; i++) w->Put((ids[i] - base) & mask, l);
  // High parts: bit (h_i + i) set, i.e. h_i - h_{i-1} zeros before each one; built 64 bits at a time.
  const uint64_t len = n + ((universe - 1) >> l);
  uint64_t word = 0, at = 0;  // bits [at, at + 64) are in word
  for (size_t i = 0; i < n; i++) {
    const uint64_t p = (uint64_t(ids[i] - base) >> l) + i;
    while (p >= at + 64) {
      w->Put(word, 64);
      word = 0;
      at += 64;
    }
    word |= uint64_t(1) << (p - at);
  }
  while (len - at > 64) {
    w->Put(word, 64);
    word = 0;
    at += 64;
  }
  w->Put(word, unsigned(len - at));
}

}  // namespace postings
}  // namespace neardup
