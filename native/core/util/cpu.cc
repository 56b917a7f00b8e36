#include "util/cpu.h"

#include <cstdlib>
#include <cstring>

#if NEARDUP_X86_DISPATCH
#include <cpuid.h>
#endif

namespace neardup {

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
  // CPUID leaf 7, EBX bit 29 (SHA extensions): read directly, because __builtin_cpu_supports("sha") is
  // missing from clang before 16 (Debian 12 ships clang 14).
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  f.sha = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx >> 29 & 1) != 0;
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
