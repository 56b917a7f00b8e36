// Onion 1.2's n-gram hash (Jan Pomikalek; docs/paragraphs.md, "Two hashes"), used by `neardup onion`, which
// reproduces Onion's decisions including the ones its hash collisions cause.
//
// Token hash (Onion's hash_string): h = 0; for each byte c: h = rotl(h ^ T[c], 1), over the token's bytes up
// to its first NUL (Onion handles tokens as C strings). T is Onion's table of 255 64-bit constants; Onion
// also indexes it with byte 0xFF, reading past its end (undefined behaviour): here T[255] = 0. Any input
// without NUL and 0xFF bytes (all UTF-8 text) is hashed exactly as Onion does.
// n-gram hash (Onion's buzhash): H_i = XOR_{j=0}^{n-1} rotl(t_{i-j}, j mod 64), rolled as
// H_i = rotl(H_{i-1}, 1) ^ rotl(t_{i-n}, n mod 64) ^ t_i (Onion's rotate_left by n >= 64 behaves as a
// rotation by n mod 64 on x86, where its shift counts are reduced mod 64).
//
// Both are linear over GF(2): equal bytes 64 positions apart in a token cancel, so long tokens and
// repetitive n-grams collide far more often than a good 64-bit hash would.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup {
namespace filter {
namespace onion {

extern const uint64_t kChar2Long[256];

inline uint64_t Rotl(uint64_t v, unsigned s) {
  s &= 63;
  return s ? (v << s) | (v >> (64 - s)) : v;
}

uint64_t TokenHash(const uint8_t* p, size_t len);

// out[i - (n-1)] = H_i for i = n-1 .. ntok-1 over the token hashes tok[0..ntok) (nothing if ntok < n).
void NgramHashes(const uint64_t* tok, size_t ntok, uint32_t n, std::vector<uint64_t>* out);

// Onion's hashgen over a stream of vertical text: lines starting with '<' are skipped, every other line is
// a token, and the n-gram hash rolls over all tokens (it is not reset at documents). Each n-gram hash goes
// to file k = the first range whose upper bound (k+1) * floor((2^64-1) / files) (the last: 2^64-1) is >= it.
class Hashgen {
 public:
  Hashgen(uint32_t n, uint32_t files);
  // Lines of a chunk that ends at a line boundary (the final chunk may end without '\n'). Appends the
  // hashes, as u64 little-endian, to out[k] (out has `files` entries).
  void Push(const uint8_t* data, size_t len, std::vector<std::vector<uint8_t>>* out);
  uint64_t lines() const { return lines_; }

 private:
  uint32_t n_;
  std::vector<uint64_t> bounds_, ring_;
  uint64_t count_ = 0, h_ = 0, lines_ = 0;
  size_t at_ = 0;
};

// Onion's hashdup on one file's hashes: sorts them in place and appends each value that occurs more than
// once, once, to *out.
void DuplicateHashes(uint64_t* v, size_t n, std::vector<uint64_t>* out);

}  // namespace onion
}  // namespace filter
}  // namespace neardup
