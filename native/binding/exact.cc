#include "exact.h"

#include <memory>
#include <mutex>

#include "addon.h"
#include "args.h"
#include "exact/exact_dedup.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

struct ExactState : Closable {
  std::mutex mu;
  std::unique_ptr<exact::ExactDedup> dedup;
  bool finished = false;
};

Status Finished() { return Status(Code::kInvalidArgument, "the exact dedup has finished: no documents can be added"); }

class AddWorker : public PromiseWorker {
 public:
  AddWorker(Napi::Env env, std::shared_ptr<ExactState> s) : PromiseWorker(env), s_(std::move(s)) {}
  TextBatch texts;
  std::vector<uint8_t> valid;

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->closed.load()) return Cancelled("exact dedup");
    if (s_->finished) return Finished();
    rep_.resize(texts.size());
    return s_->dedup->Add(texts.docs(), valid.empty() ? nullptr : valid.data(), stop(), rep_.data());
  }
  Napi::Value Resolve(Napi::Env env) override {
    const size_t n = rep_.size();
    return Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(rep_)), 0);
  }

 private:
  std::shared_ptr<ExactState> s_;
  std::vector<uint32_t> rep_;
};

class FinishWorker : public PromiseWorker {
 public:
  FinishWorker(Napi::Env env, std::shared_ptr<ExactState> s) : PromiseWorker(env), s_(std::move(s)) {}

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->closed.load()) return Cancelled("exact dedup");
    if (s_->finished) return Finished();
    s_->finished = true;
    Status st = s_->dedup->Finish(&rep_, stop());
    stats_ = s_->dedup->stats();
    return st;
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    const size_t n = rep_.size();
    r.Set("representative", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(rep_)), 0));
    r.Set("documents", Napi::Number::New(env, double(stats_.documents)));
    r.Set("duplicates", Napi::Number::New(env, double(stats_.duplicates)));
    r.Set("distinct", Napi::Number::New(env, double(stats_.distinct)));
    r.Set("spilledBytes", Napi::Number::New(env, double(stats_.spilled_bytes)));
    r.Set("runs", Napi::Number::New(env, double(stats_.runs)));
    r.Set("tableBytes", Napi::Number::New(env, double(stats_.table_bytes)));
    return r;
  }

 private:
  std::shared_ptr<ExactState> s_;
  std::vector<uint32_t> rep_;
  exact::ExactStats stats_;
};

class ExactDedupObject : public Napi::ObjectWrap<ExactDedupObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ExactDedup",
                       {InstanceMethod("add", &ExactDedupObject::Add), InstanceMethod("finish", &ExactDedupObject::Finish),
                        InstanceMethod("close", &ExactDedupObject::Close)});
  }

  explicit ExactDedupObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ExactDedupObject>(info) {
    Napi::Env env = info.Env();
    Napi::Object o = info[0].IsUndefined() ? Napi::Object::New(env) : OptionsObject(env, info[0], "options");
    exact::ExactOptions eo;
    eo.normalize = GetBool(o, "normalize", false);
    ReadTextOptions(o, &eo.text);
    eo.memory_bytes = GetUint64(o, "memory", 0);
    Napi::Value tmp = o.Get("tmp");
    if (!tmp.IsUndefined()) {
      if (!tmp.IsString()) ThrowTypeError(env, "Expected option 'tmp' to be a string");
      eo.tmp_dir = CheckPath(env, tmp.As<Napi::String>().Utf8Value(), "tmp");
    }
    if (eo.memory_bytes > 0 && eo.tmp_dir.empty()) ThrowTypeError(env, "Option 'memory' needs option 'tmp' (the folder of the spill files)");
    Status s = ValidateTextOptions(eo.text);
    if (!s.ok()) ThrowRangeError(env, s.message());
    state_ = std::make_shared<ExactState>();
    state_->dedup.reset(new exact::ExactDedup(eo));
  }

 private:
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto* w = new AddWorker(env, LiveState(env, state_, "exact dedup"));
    std::unique_ptr<AddWorker> guard(w);
    w->texts.Load(env, info[0], "texts");
    if (!info[1].IsUndefined() && !info[1].IsNull()) {
      if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        ThrowTypeError(env, "Expected valid to be a Uint8Array");
      Napi::Uint8Array v = info[1].As<Napi::Uint8Array>();
      if (v.ElementLength() != w->texts.size()) ThrowRangeError(env, "valid must have one entry per document");
      w->valid.assign(v.Data(), v.Data() + v.ElementLength());
    }
    guard.release();
    return w->QueueAndGetPromise();
  }
  Napi::Value Finish(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return (new FinishWorker(env, LiveState(env, state_, "exact dedup")))->QueueAndGetPromise();
  }
  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state_);
    return info.Env().Undefined();
  }

  std::shared_ptr<ExactState> state_;
};

}  // namespace

void ExactDedupClass::Init(Napi::Env env, Napi::Object exports) { exports.Set("ExactDedup", ExactDedupObject::Define(env)); }

}  // namespace binding
}  // namespace neardup
