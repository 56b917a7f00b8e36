// doubri 1.0 group deduplication on .hash files: doubriSelf(hashFiles, indexPrefix) and
// doubriOther(indexPrefix, hashFiles) -> Promise<{ target, total, active, skips, drops, line }[]>.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct Doubri {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
