// MT19937 (Matsumoto & Nishimura), seeded like C++ std::mt19937(seed) and numpy's RandomState(seed), and
// numpy's legacy masked bounded 64-bit draw: what datasketch 1.x uses to pick its permutations.
#pragma once
#include <cstddef>
#include <cstdint>

namespace neardup {
namespace minhash {

class Mt19937 {
 public:
  explicit Mt19937(uint32_t seed);
  uint32_t Next();

 private:
  void Twist();
  uint32_t mt_[624];
  size_t i_ = 624;
};

// numpy RandomState.randint(low, high, dtype=uint64) for one value, high exclusive, when high-1-low needs
// more than 32 bits: mask = the smallest 2^m-1 >= high-1-low; draw v = (Next() << 32) | Next(), keep
// v & mask if it is <= high-1-low, otherwise draw again; return low + (v & mask).
// Requires high - 1 - low > 0xFFFFFFFF (numpy takes a different path below that).
uint64_t NumpyRandint64(Mt19937& rng, uint64_t low, uint64_t high);

constexpr uint64_t kMersenne61 = (uint64_t(1) << 61) - 1;

// datasketch 1.x permutations: RandomState(seed); for i in [0, k): a[i] = randint(1, 2^61-1),
// b[i] = randint(0, 2^61-1) (draws interleaved a, b, a, b).
void DatasketchPermutations(uint32_t seed, size_t k, uint64_t* a, uint64_t* b);

}  // namespace minhash
}  // namespace neardup
