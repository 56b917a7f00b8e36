#include "minhash/mt19937.h"

namespace neardup {
namespace minhash {

Mt19937::Mt19937(uint32_t seed) {
  mt_[0] = seed;
  for (uint32_t i = 1; i < 624; i++) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
  i_ = 624;
}

void Mt19937::Twist() {
  for (size_t k = 0; k < 624; k++) {
    const uint32_t y = (mt_[k] & 0x80000000u) | (mt_[(k + 1) % 624] & 0x7fffffffu);
    mt_[k] = mt_[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
  i_ = 0;
}

uint32_t Mt19937::Next() {
  if (i_ >= 624) Twist();
  uint32_t y = mt_[i_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t NumpyRandint64(Mt19937& rng, uint64_t low, uint64_t high) {
  const uint64_t range = high - 1 - low;
  uint64_t mask = range;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  for (;;) {
    const uint64_t hi = rng.Next();
    const uint64_t v = ((hi << 32) | rng.Next()) & mask;
    if (v <= range) return low + v;
  }
}

void DatasketchPermutations(uint32_t seed, size_t k, uint64_t* a, uint64_t* b) {
  Mt19937 rng(seed);
  for (size_t i = 0; i < k; i++) {
    a[i] = NumpyRandint64(rng, 1, kMersenne61);
    b[i] = NumpyRandint64(rng, 0, kMersenne61);
  }
}

}  // namespace minhash
}  // namespace neardup
