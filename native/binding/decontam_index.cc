#include "decontam_index.h"

#include <memory>
#include <shared_mutex>

#include "addon.h"
#include "args.h"
#include "filter/decontam.h"
#include "parallel/pool.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

struct IndexState : Closable {
  std::shared_mutex mu;
  std::unique_ptr<filter::DecontamIndex> index;
};
using StatePtr = std::shared_ptr<IndexState>;

Napi::Value U32(Napi::Env env, std::vector<uint32_t>&& v) {
  const size_t n = v.size();
  return Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(v)), 0);
}

class Index : public Napi::ObjectWrap<Index> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "DecontamIndex",
                       {InstanceMethod("add", &Index::Add), InstanceMethod("seal", &Index::Seal),
                        InstanceMethod("probe", &Index::Probe), InstanceMethod("stats", &Index::Stats),
                        InstanceMethod("close", &Index::Close)});
  }

  explicit Index(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Index>(info) {
    Napi::Env env = info.Env();
    Napi::Object o = OptionsObject(env, info[0], "options");
    filter::DecontamOptions op;
    op.n = GetUint32(o, "n", 13, 1, kMaxN);
    op.min_tokens = GetUint32(o, "minTokens", std::min<uint32_t>(8, op.n), 1, op.n);
    if (op.n - op.min_tokens > 63) ThrowRangeError(env, "Option 'minTokens' must be at least n - 63");
    op.approx = GetBool(o, "approx", false);
    Napi::Value fp = o.Get("fpRate");
    if (!fp.IsUndefined()) {
      if (!fp.IsNumber()) ThrowTypeError(env, "Expected option 'fpRate' to be a number");
      const double d = fp.As<Napi::Number>().DoubleValue();
      if (!(d > 0 && d <= 0.5)) ThrowRangeError(env, "Option 'fpRate' must be > 0 and <= 0.5");
      op.fp_rate = d;
    }
    state_ = std::make_shared<IndexState>();
    Status st = filter::DecontamIndex::Create(op, &state_->index);
    if (!st.ok()) throw StatusError(env, st);
  }

 private:
  StatePtr Live(Napi::Env env) { return LiveState(env, state_, "decontamination index"); }

  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[0], "texts");
    if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      ThrowTypeError(env, "Expected second argument to be a Uint32Array (the row of each text)");
    Napi::Uint32Array r = info[1].As<Napi::Uint32Array>();
    if (r.ElementLength() != texts->size()) ThrowRangeError(env, "rows must have one entry per text");
    auto rows = std::make_shared<std::vector<uint32_t>>(r.Data(), r.Data() + r.ElementLength());
    const size_t slots = parallel::MaxSlots();
    return QueueFn(
        env,
        [s, texts, rows, slots](const std::atomic<bool>* stop) -> Status {
          std::unique_lock<std::shared_mutex> lock(s->mu);
          if (s->closed.load()) return Cancelled("decontamination index");
          return s->index->Add(texts->docs(), rows->data(), slots, stop);
        },
        [texts](Napi::Env env) { return env.Undefined(); });
  }

  Napi::Value Seal(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    return QueueFn(
        env,
        [s](const std::atomic<bool>*) -> Status {
          std::unique_lock<std::shared_mutex> lock(s->mu);
          if (s->closed.load()) return Cancelled("decontamination index");
          return s->index->Seal();
        },
        [](Napi::Env env) { return env.Undefined(); });
  }

  Napi::Value Probe(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[0], "texts");
    Napi::Object o = OptionsObject(env, info[1], "options");
    filter::ProbeOptions po;
    po.max_rows = GetUint32(o, "maxRows", 16, 0, 1u << 20);
    po.max_samples = GetUint32(o, "maxSamples", 3, 0, 1024);
    auto valid = std::make_shared<std::vector<uint8_t>>();
    Napi::Value v = o.Get("valid");
    if (!v.IsUndefined()) {
      if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        ThrowTypeError(env, "Expected option 'valid' to be a Uint8Array");
      Napi::Uint8Array a = v.As<Napi::Uint8Array>();
      if (a.ElementLength() != texts->size()) ThrowRangeError(env, "Option 'valid' must have one entry per text");
      valid->assign(a.Data(), a.Data() + a.ElementLength());
    }
    auto out = std::make_shared<filter::ProbeResult>();
    const size_t slots = parallel::MaxSlots();
    return QueueFn(
        env,
        [s, texts, valid, out, po, slots](const std::atomic<bool>* stop) -> Status {
          std::shared_lock<std::shared_mutex> lock(s->mu);
          if (s->closed.load()) return Cancelled("decontamination index");
          return s->index->Probe(texts->docs(), valid->empty() ? nullptr : valid->data(), po, slots, stop, out.get());
        },
        [texts, out](Napi::Env env) {
          Napi::Object r = Napi::Object::New(env);
          r.Set("tokens", U32(env, std::move(out->tokens)));
          r.Set("ngrams", U32(env, std::move(out->ngrams)));
          r.Set("matched", U32(env, std::move(out->matched)));
          r.Set("shortFound", U32(env, std::move(out->short_found)));
          r.Set("covered", U32(env, std::move(out->covered)));
          r.Set("rowsTotal", U32(env, std::move(out->rows_total)));
          r.Set("rowStart", U32(env, std::move(out->row_start)));
          r.Set("rows", U32(env, std::move(out->rows)));
          r.Set("sampleStart", U32(env, std::move(out->sample_start)));
          r.Set("sampleOffsets", U32(env, std::move(out->sample_off)));
          r.Set("sampleText", Napi::Buffer<char>::Copy(env, out->sample_text.data(), out->sample_text.size()));
          return r;
        });
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    std::shared_lock<std::shared_mutex> lock(s->mu);
    const filter::DecontamIndex& x = *s->index;
    Napi::Object r = Napi::Object::New(env);
    r.Set("keys", Napi::Number::New(env, static_cast<double>(x.keys())));
    r.Set("texts", Napi::Number::New(env, static_cast<double>(x.texts())));
    r.Set("memoryBytes", Napi::Number::New(env, static_cast<double>(x.memory_bytes())));
    Napi::Array lengths = Napi::Array::New(env);
    uint32_t k = 0;
    for (uint32_t b = 0; b < 64; b++)
      if (x.short_lengths() >> b & 1) lengths.Set(k++, Napi::Number::New(env, x.options().min_tokens + b));
    r.Set("shortLengths", lengths);
    r.Set("fpBound", Napi::Number::New(env, x.fp_bound()));
    r.Set("sealed", Napi::Boolean::New(env, x.sealed()));
    return r;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state_);
    return info.Env().Undefined();
  }

  StatePtr state_;
};

}  // namespace

void DecontamIndexClass::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("DecontamIndex", Index::Define(env));
}

}  // namespace binding
}  // namespace neardup
