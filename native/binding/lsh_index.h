// class LshIndex (MinHash LSH: insert/query/remove, candidate pairs, clusters, save; or a saved index loaded
// memory-mapped, read-only) and lshOptimalParam(threshold, numPerm, fpWeight, fnWeight).
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct LshIndexBinding {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
