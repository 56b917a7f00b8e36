// class LshDedup: documents (texts) added in order and signed on the thread pool, finish() -> clusters,
// pairs and counts. In memory, or with a memory budget spilling band keys to a temporary folder.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct LshDedupBinding {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
