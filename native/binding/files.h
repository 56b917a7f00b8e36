// Whole files read into a caller's buffer on a libuv thread, for the CLI's one-document-per-file inputs
// (`neardup dupi index`): readFilesInto(paths, buffer) -> Promise<{ files, ends, need }>.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct Files {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
