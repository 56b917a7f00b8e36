#include "files.h"

#include <memory>
#include <string>
#include <vector>

#include "addon.h"
#include "args.h"
#include "io/file.h"

namespace neardup {
namespace binding {
namespace {

// readFilesInto(paths, buffer): io::ReadFilesInto on a libuv thread. Resolves to { files (how many of paths,
// from the first, were read), ends (Uint32Array: file i ends at buffer[ends[i]]), need (when files is 0: the
// size of paths[0], larger than the buffer) }. The buffer is held until the promise settles; the
// caller must not touch it meanwhile.
Napi::Value ReadFilesInto(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto paths = std::make_shared<std::vector<std::string>>(PathList(env, info[0], "paths"));
  if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected buffer to be a Uint8Array (Buffer)");
  Napi::Uint8Array buf = info[1].As<Napi::Uint8Array>();
  if (buf.ByteLength() > 0xffffffffu) ThrowRangeError(env, "buffer must be smaller than 4 GiB");
  uint8_t* data = static_cast<uint8_t*>(buf.ArrayBuffer().Data()) + buf.ByteOffset();
  const size_t cap = buf.ByteLength();
  auto held = std::make_shared<Napi::ObjectReference>(Napi::Persistent(buf.As<Napi::Object>()));
  auto out = std::make_shared<io::FilesRead>();
  return QueueFn(
      env,
      [paths, data, cap, out](const std::atomic<bool>* stop) {
        return io::ReadFilesInto(*paths, data, cap, stop, out.get());
      },
      [held, out](Napi::Env env) {
        held->Reset();
        Napi::Object o = Napi::Object::New(env);
        o.Set("files", Napi::Number::New(env, double(out->files)));
        Napi::Uint32Array ends = Napi::Uint32Array::New(env, out->ends.size());
        for (size_t i = 0; i < out->ends.size(); i++) ends[i] = static_cast<uint32_t>(out->ends[i]);
        o.Set("ends", ends);
        o.Set("need", Napi::Number::New(env, double(out->need)));
        return o;
      });
}

// appendFile(fd, dstPath, srcPath) -> Promise<number>: io::AppendFile on a libuv thread: the whole file srcPath
// appended at the position of fd (a descriptor from fs.open, POSIX only; dstPath names it in errors).
Napi::Value AppendFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int fd = FdArg(env, info[0], "fd");
  const std::string dst = PathArg(env, info[1], "dstPath"), src = PathArg(env, info[2], "srcPath");
  auto copied = std::make_shared<uint64_t>(0);
  return QueueFn(
      env,
      [fd, dst, src, copied](const std::atomic<bool>* stop) {
        return io::AppendFile(static_cast<io::os::Fd>(fd), dst, src, stop, copied.get());
      },
      [copied](Napi::Env env) { return Napi::Number::New(env, double(*copied)); });
}

}  // namespace

void Files::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("readFilesInto", Napi::Function::New(env, ReadFilesInto, "readFilesInto"));
  exports.Set("appendFile", Napi::Function::New(env, AppendFile, "appendFile"));
}

}  // namespace binding
}  // namespace neardup
