#include "temp_files.h"

#include <cmath>

#include "args.h"
#include "io/os.h"
#include "io/temp_names.h"

namespace neardup {
namespace binding {
namespace {

std::string PathArg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsString()) ThrowTypeError(env, std::string("Expected ") + what + " to be a string");
  return CheckPath(env, v.As<Napi::String>().Utf8Value(), what);
}

// lockTempFile(fd, path): locks a file the CLI opened (a descriptor from fs.open) for as long as it stays
// open (io::os::LockFile; on Windows the open file is the lock). Returns false when locks are not supported.
Napi::Value LockTempFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) ThrowTypeError(env, "Expected fd to be a number");
  const double fd = info[0].As<Napi::Number>().DoubleValue();
  if (!(fd >= 0 && fd <= 2147483647.0) || std::floor(fd) != fd) ThrowRangeError(env, "fd must be a file descriptor");
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
