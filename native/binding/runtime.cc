#include "runtime.h"

#include "args.h"
#include "parallel/pool.h"
#include "util/cpu.h"

namespace neardup {
namespace binding {
namespace {

Napi::Value GetThreads(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(parallel::Concurrency()));
}

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) ThrowTypeError(env, "Expected first argument to be a number of threads (0 = default)");
  const double d = info[0].As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 256) || d != static_cast<double>(static_cast<int>(d)))
    ThrowRangeError(env, "The number of threads must be an integer from 0 (default) to 256");
  parallel::SetConcurrency(static_cast<size_t>(d));
  return env.Undefined();
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("simd", Napi::String::New(env, SimdLevel()));
  o.Set("defaultThreads", Napi::Number::New(env, static_cast<double>(parallel::DefaultConcurrency())));
  return o;
}

}  // namespace

void Runtime::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("getThreads", Napi::Function::New(env, GetThreads, "getThreads"));
  exports.Set("setThreads", Napi::Function::New(env, SetThreads, "setThreads"));
  exports.Set("runtimeInfo", Napi::Function::New(env, Info, "runtimeInfo"));
}

}  // namespace binding
}  // namespace neardup
