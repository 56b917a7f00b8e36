// Runtime CPU feature detection. Prebuilds are compiled for the baseline ISA; kernels that need AVX2 are
// compiled with a function-level target attribute and chosen here at run time.
#pragma once

namespace neardup {

struct CpuFeatures {
  bool sse42 = false;
  bool avx2 = false;
  bool popcnt = false, bmi = false, bmi2 = false, sha = false;
  // AVX-512 subsets used by kernels (each kernel states what it needs).
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vbmi = false, avx512vbmi2 = false;
};

// Detected once. NEARDUP_DISABLE_SIMD=1 in the environment forces the portable kernels (used by tests to
// check that both paths agree): every flag is then false.
const CpuFeatures& Cpu();

// Name of the kernel family in use ("avx2" or "portable").
const char* SimdLevel();

}  // namespace neardup

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_X86_DISPATCH 1
#define NEARDUP_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define NEARDUP_X86_DISPATCH 0
#define NEARDUP_TARGET_AVX2
#endif
