// Raw hash functions over bytes, for tests and tools that need the exact functions behind the shingle
// hashes: hashBytes(kind, bytes, seed?) -> Buffer of the output bytes, and murmur3MinSeq(keys, firstSeed,
// count) -> Uint32Array (the multi-seed MinHash update, through the AVX2 kernel when the CPU has it).
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct Hashes {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
