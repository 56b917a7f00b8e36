// class PostingIndex (native/core/postings/store.h) and the blot functions (native/core/postings/blot.h):
// blotBatch (async, on the pool).
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct PostingIndexClass {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
