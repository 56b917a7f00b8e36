// shingleHashes(texts, options) -> Promise<{ hashes, offsets, invalidUtf8Docs }> and shingleHashesSync.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct Shingles {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
