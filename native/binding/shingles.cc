#include "shingles.h"

#include "addon.h"
#include "args.h"
#include "parallel/pool.h"
#include "text/shingle_batch.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

ShingleConfig ParseConfig(Napi::Env env, const Napi::Value& v) {
  Napi::Object o = OptionsObject(env, v, "options");
  ShingleConfig c;
  ReadTextOptions(o, &c.text);  // defaults: TextOptions{} (char 5-grams, no normalisation)
  c.hash = static_cast<ShingleHash>(GetEnum(o, "hash", 0, {"fast64", "murmur3_32", "murmur3_64", "sha1_32", "md5_64"}));
  c.seed = GetUint64(o, "seed", 0);
  c.dedupe = GetBool(o, "dedupe", false);
  return c;
}

Napi::Value ResultObject(Napi::Env env, ShingleBatchResult& r, bool wide) {
  Napi::Object out = Napi::Object::New(env);
  if (wide) {
    out.Set("hashes", NewBigUint64Array(env, std::move(r.h64)));
  } else {
    const size_t n = r.h32.size();
    out.Set("hashes", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(r.h32)), 0));
  }
  const size_t m = r.offsets.size();
  out.Set("offsets", Napi::Uint32Array::New(env, m, ToArrayBuffer(env, std::move(r.offsets)), 0));
  out.Set("invalidUtf8Docs", Napi::Number::New(env, static_cast<double>(r.invalid_utf8_docs)));
  return out;
}

class ShingleWorker : public PromiseWorker {
 public:
  ShingleWorker(Napi::Env env, const Napi::Value& texts, const Napi::Value& options)
      : PromiseWorker(env), config_(ParseConfig(env, options)) {
    batch_.Load(env, texts, "texts");
    slots_ = parallel::MaxSlots();
  }

 protected:
  Status Run() override {
    return ShingleBatch(batch_.docs(), config_, slots_, stop(), &result_);
  }
  Napi::Value Resolve(Napi::Env env) override { return ResultObject(env, result_, Is64Bit(config_.hash)); }

 private:
  ShingleConfig config_;
  TextBatch batch_;
  size_t slots_ = 1;
  ShingleBatchResult result_;
};

Napi::Value ShingleHashes(const Napi::CallbackInfo& info) {
  auto* w = new ShingleWorker(info.Env(), info[0], info[1]);
  return w->QueueAndGetPromise();
}

Napi::Value ShingleHashesSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const ShingleConfig config = ParseConfig(env, info[1]);
  TextBatch batch;
  batch.Load(env, info[0], "texts");
  ShingleBatchResult result;
  return RunSync(
      env,
      [&] { return ShingleBatch(batch.docs(), config, 1, nullptr, &result); },
      [&](Napi::Env e) { return ResultObject(e, result, Is64Bit(config.hash)); });
}

// normalizeTextSync(texts, form): the texts after Unicode normalisation, packed: { data: Uint8Array,
// offsets: Float64Array (documents + 1), invalidUtf8Docs }. On the calling thread (small inputs, tests).
Napi::Value NormalizeTextSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("normalize", info[1]);
  TextOptions t;
  ReadTextOptions(o, &t);
  TextBatch batch;
  batch.Load(env, info[0], "texts");
  const Docs docs = batch.docs();
  std::vector<uint8_t> data;
  std::vector<double> offsets(docs.size() + 1, 0);
  double invalid = 0;
  return RunSync(
      env,
      [&] {
        text::Normalizer nz;
        RawBuffer<uint8_t> out;
        for (size_t i = 0; i < docs.size(); i++) {
          bool bad = false;
          const size_t n = nz.Normalize(t.normalize, docs.ptr[i], docs.len[i], &out, &bad);
          data.insert(data.end(), out.data(), out.data() + n);
          offsets[i + 1] = static_cast<double>(data.size());
          invalid += bad;
        }
        return Status::Ok();
      },
      [&](Napi::Env e) {
        Napi::Object r = Napi::Object::New(e);
        const size_t bytes = data.size(), n = offsets.size();  // before the moves
        r.Set("data", Napi::Uint8Array::New(e, bytes, ToArrayBuffer(e, std::move(data)), 0));
        r.Set("offsets", Napi::Float64Array::New(e, n, ToArrayBuffer(e, std::move(offsets)), 0));
        r.Set("invalidUtf8Docs", Napi::Number::New(e, invalid));
        return r;
      });
}

}  // namespace

void Shingles::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("shingleHashes", Napi::Function::New(env, ShingleHashes, "shingleHashes"));
  exports.Set("shingleHashesSync", Napi::Function::New(env, ShingleHashesSync, "shingleHashesSync"));
  exports.Set("normalizeTextSync", Napi::Function::New(env, NormalizeTextSync, "normalizeTextSync"));
}

}  // namespace binding
}  // namespace neardup
