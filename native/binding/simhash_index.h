// class SimhashIndex: the online k-bit Hamming index (native/core/simhash/index.h).
//
// Lifetime: the JS object and every queued async operation hold a shared_ptr to the native state, so
// close() only drops the object's reference and marks the state closed: pending operations that have not
// started yet are rejected with ERR_NEARDUP_CANCELLED, running ones finish on their own reference, and the
// index (and its file map) is freed when the last holder lets go.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct SimhashIndexClass {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
