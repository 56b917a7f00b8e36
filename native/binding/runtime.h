// Process-wide settings and build facts: thread count, SIMD level, core version.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct Runtime {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
