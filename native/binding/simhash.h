// SimHash functions: simhashFingerprints(Sync), simhashCompute, simhashFindAll(Sync), simhashPickBlocks,
// simhashFormatPairs, simhashParseFingerprintText and simhashSortDistinct (find-all's output and input).
// Also the BigUint64Array helpers shared with simhash_index.cc.
#pragma once
#include <napi.h>

#include <cstdint>
#include <vector>

namespace neardup {
namespace binding {

struct Simhash {
  static void Init(Napi::Env env, Napi::Object exports);
};

// A BigUint64Array argument read in place (TypeError otherwise).
struct U64View {
  const uint64_t* data = nullptr;
  size_t size = 0;
};
U64View GetU64Array(Napi::Env env, const Napi::Value& v, const char* what);

}  // namespace binding
}  // namespace neardup
