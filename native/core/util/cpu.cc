#include "util/cpu.h"

#include <cstdlib>
#include <cstring>

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
  f.sha = __builtin_cpu_supports("sha");
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
