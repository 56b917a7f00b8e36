// Temporary files and spill folders of the CLI (lib/cli/files.ts) under the same rules as the core's
// (io/temp_names.h): the lock that marks one in use, and the sweeps of stale ones.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct TempFiles {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
