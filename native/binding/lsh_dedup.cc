#include "lsh_dedup.h"

#include <memory>
#include <mutex>

#include "addon.h"
#include "args.h"
#include "minhash/lsh_dedup.h"
#include "parallel/pool.h"

namespace neardup {
namespace binding {
namespace {

// The session behind a JS object (Closable: close() returns at once; a running add() or finish() keeps the
// session, and its temporary files, until it returns).
struct DedupState : Closable {
  std::mutex mu;
  std::unique_ptr<lsh::Dedup> dedup;
  bool finished = false;  // under mu
};

Status Unavailable(const DedupState& st) {
  return st.closed.load() ? Cancelled("dedup session") : Status(Code::kCancelled, "the dedup session is finished");
}

template <typename T>
std::vector<T> CopyTyped(Napi::Env env, const Napi::Value& v, napi_typedarray_type type, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
    ThrowTypeError(env, std::string("Expected ") + what + " to be a typed array of the right kind");
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  const T* d = reinterpret_cast<const T*>(static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset());
  return std::vector<T>(d, d + ta.ElementLength());
}

class AddWorker : public PromiseWorker {
 public:
  AddWorker(Napi::Env env, std::shared_ptr<DedupState> st) : PromiseWorker(env), st_(std::move(st)), slots_(parallel::MaxSlots()) {}
  std::vector<uint8_t> sigs, valid;
  std::vector<uint64_t> shingles;
  std::vector<uint32_t> offsets;
  size_t n = 0;

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (st_->closed.load() || st_->finished) return Unavailable(*st_);
    return st_->dedup->Add(sigs.data(), n, valid.empty() ? nullptr : valid.data(), shingles.empty() && offsets.empty() ? nullptr : shingles.data(),
                           offsets.empty() ? nullptr : offsets.data(), slots_, stop());
  }
  Napi::Value Resolve(Napi::Env env) override { return env.Undefined(); }

 private:
  std::shared_ptr<DedupState> st_;
  size_t slots_;
};

class FinishWorker : public PromiseWorker {
 public:
  FinishWorker(Napi::Env env, std::shared_ptr<DedupState> st) : PromiseWorker(env), st_(std::move(st)), slots_(parallel::MaxSlots()) {}

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (st_->closed.load() || st_->finished) return Unavailable(*st_);
    st_->finished = true;
    Status s = st_->dedup->Finish(slots_, stop(), &r_);
    st_->dedup.reset();  // temporary files go now
    return s;
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    auto u32 = [&](std::vector<uint32_t>&& v) {
      const size_t m = v.size();
      return Napi::Uint32Array::New(env, m, ToArrayBuffer(env, std::move(v)), 0);
    };
    auto f32 = [&](std::vector<float>&& v) {
      const size_t m = v.size();
      return Napi::Float32Array::New(env, m, ToArrayBuffer(env, std::move(v)), 0);
    };
    o.Set("representative", u32(std::move(r_.rep)));
    o.Set("pairA", u32(std::move(r_.pair_a)));
    o.Set("pairB", u32(std::move(r_.pair_b)));
    o.Set("pairEstimate", f32(std::move(r_.pair_estimate)));
    o.Set("pairExact", f32(std::move(r_.pair_exact)));
    o.Set("candidatePairs", Napi::Number::New(env, double(r_.candidate_pairs)));
    o.Set("keptPairs", Napi::Number::New(env, double(r_.kept_pairs)));
    o.Set("duplicates", Napi::Number::New(env, double(r_.duplicates)));
    o.Set("clusters", Napi::Number::New(env, double(r_.clusters)));
    o.Set("spilledBytes", Napi::Number::New(env, double(r_.spilled_bytes)));
    o.Set("runs", Napi::Number::New(env, double(r_.runs)));
    return o;
  }

 private:
  std::shared_ptr<DedupState> st_;
  size_t slots_;
  lsh::DedupResult r_;
};

class LshDedupWrap : public Napi::ObjectWrap<LshDedupWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "LshDedup",
                       {InstanceMethod("add", &LshDedupWrap::Add), InstanceMethod("finish", &LshDedupWrap::Finish),
                        InstanceMethod("close", &LshDedupWrap::Close)});
  }

  // new LshDedup({ profile, numPerm, b, r, threshold, verify: 'none'|'estimate'|'exact',
  //                clustering: 'kept'|'components', pairs, maxPairs, memory, spillShingles, tmp })
  explicit LshDedupWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<LshDedupWrap>(info) {
    Napi::Env env = info.Env();
    Napi::Object o = OptionsObject(env, info[0], "options");
    lsh::DedupOptions d;
    d.params.profile = static_cast<lsh::Profile>(GetEnum(o, "profile", 0, {"fast", "datasketch", "doubri"}));
    d.params.value_bytes = GetUint32(o, "valueBytes", 4, 4, 8);
    d.params.num_perm = GetUint32(o, "numPerm", 128, 1, 1 << 16);
    d.params.b = GetUint32(o, "b", 0, 1, 1 << 16);
    d.params.r = GetUint32(o, "r", 0, 1, 1 << 16);
    Napi::Value t = o.Get("threshold");
    if (!t.IsUndefined()) {
      if (!t.IsNumber()) ThrowTypeError(env, "Expected option 'threshold' to be a number");
      d.threshold = t.As<Napi::Number>().DoubleValue();
      if (!(d.threshold >= 0 && d.threshold <= 1)) ThrowRangeError(env, "threshold must be from 0 to 1");
    }
    d.verify = static_cast<lsh::Verify>(GetEnum(o, "verify", 0, {"none", "estimate", "exact"}));
    d.clustering = static_cast<lsh::Clustering>(GetEnum(o, "clustering", 0, {"kept", "components"}));
    d.spill_shingles = GetBool(o, "spillShingles", true);
    d.want_pairs = GetBool(o, "pairs", false);
    d.max_pairs = GetUint64(o, "maxPairs", UINT64_MAX);
    d.memory_bytes = GetUint64(o, "memory", 0);
    Napi::Value tmp = o.Get("tmp");
    if (!tmp.IsUndefined()) {
      if (!tmp.IsString()) ThrowTypeError(env, "Expected option 'tmp' to be a string");
      d.tmp_dir = CheckPath(env, tmp.As<Napi::String>().Utf8Value(), "tmp");
    }
    Status s = lsh::Validate(d.params);
    if (!s.ok()) ThrowRangeError(env, s.message());
    st_ = std::make_shared<DedupState>();
    st_->dedup = std::make_unique<lsh::Dedup>(d);
    s = st_->dedup->Init();
    if (!s.ok()) throw StatusError(env, s);
    params_ = d.params;
    exact_ = d.verify == lsh::Verify::kExact;
  }

 private:
  // add(signatures, valid?: Uint8Array, shingles?: BigUint64Array, offsets?: Uint32Array)
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto* w = new AddWorker(env, LiveState(env, st_, "dedup session"));
    std::unique_ptr<AddWorker> guard(w);
    {
      // one copy, straight from the typed array into the worker's buffer
      const bool wide = params_.value_bytes == 8;
      const napi_typedarray_type type = wide ? napi_biguint64_array : napi_uint32_array;
      if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != type)
        ThrowTypeError(env, wide ? "Expected signatures (BigUint64Array) to be a typed array of the right kind"
                                 : "Expected signatures (Uint32Array) to be a typed array of the right kind");
      Napi::TypedArray ta = info[0].As<Napi::TypedArray>();
      const size_t values = ta.ElementLength();
      if (values % params_.num_perm) ThrowRangeError(env, "signatures length is not a multiple of numPerm");
      const uint8_t* d = static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
      w->sigs.assign(d, d + values * params_.value_bytes);
      w->n = values / params_.num_perm;
    }
    if (!info[1].IsUndefined() && !info[1].IsNull()) {
      w->valid = CopyTyped<uint8_t>(env, info[1], napi_uint8_array, "valid (Uint8Array)");
      if (w->valid.size() != w->n) ThrowRangeError(env, "valid must have one entry per document");
    }
    if (exact_) {
      w->shingles = CopyTyped<uint64_t>(env, info[2], napi_biguint64_array, "shingles (BigUint64Array)");
      w->offsets = CopyTyped<uint32_t>(env, info[3], napi_uint32_array, "offsets (Uint32Array)");
      if (w->offsets.size() != w->n + 1 || w->offsets.back() > w->shingles.size())
        ThrowRangeError(env, "offsets must have documents + 1 entries within shingles");
      for (size_t i = 0; i < w->n; i++)
        if (w->offsets[i] > w->offsets[i + 1]) ThrowRangeError(env, "offsets must not decrease");
    }
    guard.release();
    return w->QueueAndGetPromise();
  }

  Napi::Value Finish(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return (new FinishWorker(env, LiveState(env, st_, "dedup session")))->QueueAndGetPromise();
  }

  // Returns at once, also while finish() runs (it completes and resolves; the session goes with it).
  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&st_);
    return info.Env().Undefined();
  }

  std::shared_ptr<DedupState> st_;
  lsh::Params params_;
  bool exact_ = false;
};

}  // namespace

void LshDedupBinding::Init(Napi::Env env, Napi::Object exports) { exports.Set("LshDedup", LshDedupWrap::Define(env)); }

}  // namespace binding
}  // namespace neardup
