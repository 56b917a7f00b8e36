#include "util/cpu.h"

#include <cstdlib>
#include <cstring>
#if NEARDUP_X86_DISPATCH
#include <cpuid.h>
#endif

namespace neardup {

#if NEARDUP_X86_DISPATCH
// SHA-NI from CPUID leaf 7 (EBX bit 29): __builtin_cpu_supports("sha") is GCC-only (clang < 18 rejects it, and
// the musl prebuild is compiled with Zig's clang).
static bool HasShaNi() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b >> 29) & 1u;
}
#endif

static CpuFeatures Detect() {
  CpuFeatures f;
  const char* off = std::getenv("NEARDUP_DISABLE_SIMD");
  if (off != nullptr && *off != '\0' && std::strcmp(off, "0") != 0) return f;
#if NEARDUP_X86_DISPATCH
  __builtin_cpu_init();
  f.sse42 = __builtin_cpu_supports("sse4.2");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.popcnt = __builtin_cpu_supports("popcnt");
  f.bmi = __builtin_cpu_supports("bmi");
  f.bmi2 = __builtin_cpu_supports("bmi2");
  f.sha = HasShaNi();
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
  f.avx512vbmi2 = __builtin_cpu_supports("avx512vbmi2");
#endif
  return f;
}

const CpuFeatures& Cpu() {
  static const CpuFeatures features = Detect();
  return features;
}

const char* SimdLevel() { return Cpu().avx2 ? "avx2" : "portable"; }

}  // namespace neardup
