// Repeated-substring removal (native/core/substr/repeats.h): SubstringCorpus { add(texts), find(options),
// close() } and substringsLibrary() (whether libdivsufsort loads, and why not).
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct SubstringsBinding {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
