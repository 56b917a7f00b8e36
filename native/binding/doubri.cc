#include "doubri.h"

#include "addon.h"
#include "args.h"
#include "minhash/doubri_index.h"
#include "parallel/pool.h"

namespace neardup {
namespace binding {
namespace {

std::vector<std::string> StringList(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsArray()) ThrowTypeError(env, std::string("Expected ") + what + " to be an array of strings");
  Napi::Array a = v.As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value item = a.Get(i);
    if (!item.IsString()) ThrowTypeError(env, std::string("Expected ") + what + "[" + std::to_string(i) + "] to be a string");
    out.push_back(CheckPath(env, item.As<Napi::String>().Utf8Value(), std::string(what) + "[" + std::to_string(i) + "]"));
    if (out.back().empty()) ThrowRangeError(env, std::string(what) + "[" + std::to_string(i) + "] is empty");
  }
  return out;
}

std::string NonEmptyString(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsString()) ThrowTypeError(env, std::string("Expected ") + what + " to be a string");
  std::string s = CheckPath(env, v.As<Napi::String>().Utf8Value(), what);
  if (s.empty()) ThrowRangeError(env, std::string(what) + " must not be empty");
  return s;
}

class DoubriWorker : public PromiseWorker {
 public:
  DoubriWorker(Napi::Env env, bool self, std::vector<std::string> files, std::string prefix)
      : PromiseWorker(env), self_(self), files_(std::move(files)), prefix_(std::move(prefix)) {
    slots_ = parallel::MaxSlots();
  }

 protected:
  Status Run() override {
    return self_ ? doubri::Self(files_, prefix_, slots_, stop(), &stats_)
                 : doubri::Other(prefix_, files_, slots_, stop(), &stats_);
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Array out = Napi::Array::New(env, stats_.size());
    for (size_t i = 0; i < stats_.size(); i++) {
      const doubri::Stats& s = stats_[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("target", s.target);
      o.Set("total", Napi::Number::New(env, static_cast<double>(s.total)));
      o.Set("active", Napi::Number::New(env, static_cast<double>(s.active)));
      o.Set("skips", Napi::Number::New(env, static_cast<double>(s.skips)));
      o.Set("drops", Napi::Number::New(env, static_cast<double>(s.drops)));
      o.Set("line", doubri::FormatStats(s));
      out.Set(static_cast<uint32_t>(i), o);
    }
    return out;
  }

 private:
  bool self_;
  std::vector<std::string> files_;
  std::string prefix_;
  size_t slots_ = 1;
  std::vector<doubri::Stats> stats_;
};

Napi::Value DoubriSelf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto files = StringList(env, info[0], "hashFiles");
  auto prefix = NonEmptyString(env, info[1], "indexPrefix");
  return (new DoubriWorker(env, true, std::move(files), std::move(prefix)))->QueueAndGetPromise();
}

Napi::Value DoubriOther(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto prefix = NonEmptyString(env, info[0], "indexPrefix");
  auto files = StringList(env, info[1], "hashFiles");
  return (new DoubriWorker(env, false, std::move(files), std::move(prefix)))->QueueAndGetPromise();
}

}  // namespace

void Doubri::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("doubriSelf", Napi::Function::New(env, DoubriSelf, "doubriSelf"));
  exports.Set("doubriOther", Napi::Function::New(env, DoubriOther, "doubriOther"));
}

}  // namespace binding
}  // namespace neardup
