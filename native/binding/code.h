// Copied-code detection (native/core/code/): CodeCorpus { add(sources), match(options), close() } and
// codeTokens(text, lang, options) (one text's tokens, on the calling thread: tests and the bench).
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct CodeBinding {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
