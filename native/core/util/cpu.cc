#include "util/cpu.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#if NEARDUP_X86_DISPATCH
#include <cpuid.h>
#endif

namespace neardup {

#if NEARDUP_X86_DISPATCH
// Straight from CPUID and XGETBV rather than __builtin_cpu_supports: that builtin needs the compiler runtime's
// __cpu_model (absent from Zig's runtime for the musl prebuild, and from MSVC's for a ClangCL build), and clang
// before 18 rejects "sha". A feature counts only when the OS saves its registers (XCR0), as the builtin checks.
static uint64_t Xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}
#endif

static CpuFeatures Detect() {
  CpuFeatures f;
  const char* off = std::getenv("NEARDUP_DISABLE_SIMD");
  if (off != nullptr && *off != '\0' && std::strcmp(off, "0") != 0) return f;
#if NEARDUP_X86_DISPATCH
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  f.sse42 = (c >> 20) & 1u;
  f.popcnt = (c >> 23) & 1u;
  const bool osxsave = (c >> 27) & 1u, avx = (c >> 28) & 1u;
  const uint64_t xcr0 = osxsave ? Xcr0() : 0;
  const bool ymm = avx && (xcr0 & 0x6) == 0x6;            // SSE and AVX state
  const bool zmm = ymm && (xcr0 & 0xE0) == 0xE0;          // opmask, upper ZMM0-15, ZMM16-31
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  f.bmi = (b >> 3) & 1u;
  f.bmi2 = (b >> 8) & 1u;
  f.avx2 = ymm && ((b >> 5) & 1u);
  f.sha = (b >> 29) & 1u;
  f.avx512f = zmm && ((b >> 16) & 1u);
  f.avx512dq = zmm && ((b >> 17) & 1u);
  f.avx512bw = zmm && ((b >> 30) & 1u);
  f.avx512vbmi = zmm && ((c >> 1) & 1u);
  f.avx512vbmi2 = zmm && ((c >> 6) & 1u);
#endif
  return f;
}

const CpuFeatures& Cpu() {
  static const CpuFeatures features = Detect();
  return features;
}

const char* SimdLevel() { return Cpu().avx2 ? "avx2" : "portable"; }

}  // namespace neardup
