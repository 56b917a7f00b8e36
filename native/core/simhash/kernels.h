// Hamming-distance kernels: a portable version and an AVX2+POPCNT one picked at run time (util/cpu.h).
// Hot functions are written once as always-inline templates and instantiated inside two wrappers, one
// compiled for the baseline ISA and one with NEARDUP_SIMHASH_FAST (the __builtin_popcountll in the
// template then becomes one POPCNT instruction).
#pragma once
#include <cstddef>
#include <cstdint>

#include "util/cpu.h"

#if NEARDUP_X86_DISPATCH
#include <immintrin.h>
#define NEARDUP_SIMHASH_FAST __attribute__((target("avx2,popcnt,bmi,bmi2")))
#else
#define NEARDUP_SIMHASH_FAST
#endif
#define NEARDUP_INLINE inline __attribute__((always_inline))

namespace neardup {
namespace simhash {

inline bool UseFast() {
#if NEARDUP_X86_DISPATCH
  return Cpu().avx2;
#else
  return false;
#endif
}

NEARDUP_INLINE uint32_t Pop(uint64_t x) { return static_cast<uint32_t>(__builtin_popcountll(x)); }

// fn(i) for every i in [0, n) with popcount(a[i] ^ q) <= k. Portable.
template <typename Fn>
NEARDUP_INLINE void ScanWithinPortable(const uint64_t* a, size_t n, uint64_t q, uint32_t k, Fn&& fn) {
  for (size_t i = 0; i < n; i++)
    if (Pop(a[i] ^ q) <= k) fn(i);
}

#if NEARDUP_X86_DISPATCH
// AVX2: four 64-bit lanes at a time; popcount by nibble lookup (vpshufb) and byte sums (vpsadbw).
template <typename Fn>
NEARDUP_SIMHASH_FAST void ScanWithinAvx2(const uint64_t* a, size_t n, uint64_t q, uint32_t k, Fn&& fn) {
  const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2,
                                       3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i qv = _mm256_set1_epi64x(static_cast<long long>(q));
  const __m256i limit = _mm256_set1_epi64x(static_cast<long long>(k));
  const __m256i zero = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i x = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)), qv);
    const __m256i c = _mm256_add_epi8(_mm256_shuffle_epi8(lut, _mm256_and_si256(x, low)),
                                      _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(x, 4), low)));
    const __m256i pc = _mm256_sad_epu8(c, zero);
    const __m256i over = _mm256_cmpgt_epi64(pc, limit);
    unsigned bits = ~static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(over))) & 0xf;
    while (bits) {
      fn(i + static_cast<size_t>(__builtin_ctz(bits)));
      bits &= bits - 1;
    }
  }
  ScanWithinPortable(a + i, n - i, q, k, [&](size_t j) { fn(i + j); });
}
#endif

}  // namespace simhash
}  // namespace neardup
