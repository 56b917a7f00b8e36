#include "temp_files.h"

#include "args.h"
#include "io/os.h"
#include "io/temp_names.h"

namespace neardup {
namespace binding {
namespace {

// lockTempFile(fd, path): locks a file the CLI opened (a descriptor from fs.open) for as long as it stays
// open (io::os::LockFile; on Windows the open file is the lock). Returns false when locks are not supported.
Napi::Value LockTempFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int fd = FdArg(env, info[0], "fd");
  const std::string path = PathArg(env, info[1], "path");
  return Napi::Boolean::New(env, io::os::LockFile(static_cast<io::os::Fd>(fd), path).ok());
}

// cleanStaleTemps(dir) / cleanStaleSpill(dir): io::CleanStaleTemps / io::CleanStaleSpillDirs; the count removed.
Napi::Value CleanTemps(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Napi::Number::New(env, static_cast<double>(io::CleanStaleTemps(PathArg(env, info[0], "dir"))));
}

Napi::Value CleanSpill(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Napi::Number::New(env, static_cast<double>(io::CleanStaleSpillDirs(PathArg(env, info[0], "dir"))));
}

}  // namespace

void TempFiles::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("lockTempFile", Napi::Function::New(env, LockTempFile, "lockTempFile"));
  exports.Set("cleanStaleTemps", Napi::Function::New(env, CleanTemps, "cleanStaleTemps"));
  exports.Set("cleanStaleSpill", Napi::Function::New(env, CleanSpill, "cleanStaleSpill"));
}

}  // namespace binding
}  // namespace neardup
