#include "minhash.h"

#include <memory>
#include <vector>

#include "addon.h"
#include "args.h"
#include "minhash/mt19937.h"
#include "minhash/profiles.h"
#include "minhash/signature.h"
#include "minhash/signature_file.h"
#include "parallel/pool.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

using minhash::Plan;
using minhash::Profile;

// Options: profile, numPerm, seed, and the shingle options (unit, n, split, lowercase, stripPunctuation,
// foldWhitespace, short) over the profile's own defaults.
std::shared_ptr<const Plan> ParsePlan(Napi::Env env, const Napi::Value& v) {
  Napi::Object o = OptionsObject(env, v, "options");
  const auto profile = static_cast<Profile>(GetEnum(o, "profile", 0, {"fast", "doubri-v1", "datasketch"}));
  minhash::Config c = minhash::DefaultConfig(profile);
  c.num_perm = GetUint32(o, "numPerm", c.num_perm, 1, minhash::kMaxPerm);
  c.seed = GetUint64(o, "seed", c.seed);
  ReadTextOptions(o, &c.text);
  std::shared_ptr<const Plan> plan;
  const Status s = Plan::Create(c, &plan);
  if (!s.ok()) ThrowRangeError(env, s.message());
  return plan;
}

Napi::Value ResultObject(Napi::Env env, std::vector<uint32_t>& sig, size_t k, size_t count, uint64_t invalid) {
  Napi::Object out = Napi::Object::New(env);
  const size_t n = sig.size();
  out.Set("signatures", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(sig)), 0));
  out.Set("numPerm", Napi::Number::New(env, static_cast<double>(k)));
  out.Set("count", Napi::Number::New(env, static_cast<double>(count)));
  out.Set("invalidUtf8Docs", Napi::Number::New(env, static_cast<double>(invalid)));
  return out;
}

Status RunBatch(const TextBatch& batch, const std::shared_ptr<const Plan>& plan, size_t slots,
                const std::atomic<bool>* stop, std::vector<uint32_t>* out, uint64_t* invalid) {
  out->resize(batch.size() * plan->k());
  return minhash::SignBatch(batch.docs(), plan, slots, stop, out->data(), invalid);
}

class MinHashWorker : public PromiseWorker {
 public:
  MinHashWorker(Napi::Env env, const Napi::Value& texts, const Napi::Value& options)
      : PromiseWorker(env), plan_(ParsePlan(env, options)) {
    batch_.Load(env, texts, "texts");
    slots_ = parallel::MaxSlots();
  }

 protected:
  Status Run() override { return RunBatch(batch_, plan_, slots_, stop(), &sig_, &invalid_); }
  Napi::Value Resolve(Napi::Env env) override { return ResultObject(env, sig_, plan_->k(), batch_.size(), invalid_); }

 private:
  std::shared_ptr<const Plan> plan_;
  TextBatch batch_;
  size_t slots_ = 1;
  std::vector<uint32_t> sig_;
  uint64_t invalid_ = 0;
};

Napi::Value MinHashAsync(const Napi::CallbackInfo& info) {
  auto* w = new MinHashWorker(info.Env(), info[0], info[1]);
  return w->QueueAndGetPromise();
}

Napi::Value MinHashSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto plan = ParsePlan(env, info[1]);
  TextBatch batch;
  batch.Load(env, info[0], "texts");
  std::vector<uint32_t> sig;
  uint64_t invalid = 0;
  return RunSync(
      env, [&] { return RunBatch(batch, plan, 1, nullptr, &sig, &invalid); },
      [&](Napi::Env e) { return ResultObject(e, sig, plan->k(), batch.size(), invalid); });
}

// minhashShinglesSync(shingles, counts, options): set i is the next counts[i] items of shingles; each
// shingle is hashed as given (no tokenizing).
Napi::Value MinHashShinglesSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto plan = ParsePlan(env, info[2]);
  TextBatch batch;
  batch.Load(env, info[0], "shingles");
  if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    ThrowTypeError(env, "Expected counts to be a Uint32Array");
  Napi::Uint32Array counts = info[1].As<Napi::Uint32Array>();
  uint64_t total = 0;
  for (size_t i = 0; i < counts.ElementLength(); i++) total += counts[i];
  if (total != batch.size())
    ThrowRangeError(env, "The counts add up to " + std::to_string(total) + ", but " + std::to_string(batch.size()) +
                             " shingles were given");
  const size_t sets = counts.ElementLength();
  const size_t k = plan->k();
  std::vector<uint32_t> sig(sets * k);
  std::vector<std::string_view> views;
  minhash::Signer signer(plan);
  size_t at = 0;
  for (size_t i = 0; i < sets; i++) {
    views.clear();
    for (uint32_t j = 0; j < counts[i]; j++, at++)
      views.emplace_back(reinterpret_cast<const char*>(batch.data(at)), batch.length(at));
    signer.SignShingles(views.data(), views.size(), sig.data() + i * k);
  }
  return ResultObject(env, sig, k, sets, 0);
}

Napi::Value DatasketchPermutations(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = OptionsObject(env, info[0], "options");
  const uint64_t seed = GetUint64(o, "seed", 1);
  if (seed > 0xFFFFFFFFull) ThrowRangeError(env, "Option 'seed' must be from 0 to 2^32-1 (numpy RandomState)");
  const uint32_t k = GetUint32(o, "numPerm", 128, 1, minhash::kMaxPerm);
  std::vector<uint64_t> a(k), b(k);
  minhash::DatasketchPermutations(static_cast<uint32_t>(seed), k, a.data(), b.data());
  Napi::Object out = Napi::Object::New(env);
  for (int which = 0; which < 2; which++) {
    out.Set(which == 0 ? "a" : "b", NewBigUint64Array(env, std::move(which == 0 ? a : b)));
  }
  return out;
}

// new SignatureWriter(path, { format: 'neardup' | 'doubri', numPerm, profile, options: string })
// append(signatures: Uint32Array) / commit() / abort(). Synchronous: file writes are buffered and cheap next
// to computing the signatures; the CLI calls them between batches.
class SignatureWriter : public Napi::ObjectWrap<SignatureWriter> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "SignatureWriter",
                       {InstanceMethod<&SignatureWriter::Append>("append"),
                        InstanceMethod<&SignatureWriter::Commit>("commit"),
                        InstanceMethod<&SignatureWriter::Abort>("abort"),
                        InstanceAccessor<&SignatureWriter::Records>("records")});
  }

  explicit SignatureWriter(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SignatureWriter>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString()) ThrowTypeError(env, "Expected first argument to be a file path");
    const std::string path = CheckPath(env, info[0].As<Napi::String>().Utf8Value(), "path");
    Napi::Object o = OptionsObject(env, info[1], "options");
    const auto format = static_cast<minhash::FileFormat>(GetEnum(o, "format", 0, {"neardup", "doubri"}));
    k_ = GetUint32(o, "numPerm", 128, 1, minhash::kMaxPerm);
    const int profile = GetEnum(o, "profile", 0, {"fast", "doubri-v1", "datasketch"});
    Napi::Value opts = o.Get("options");
    std::string json = opts.IsString() ? opts.As<Napi::String>().Utf8Value() : std::string("{}");
    const Status s = writer_.Open(path, format, k_, static_cast<uint32_t>(profile), std::move(json));
    if (!s.ok()) throw StatusError(env, s);
    open_ = true;
  }

 private:
  void CheckOpen(Napi::Env env) {
    if (!open_) throw CodedError(env, "ERR_NEARDUP_CLOSED", "The signature file was already committed or aborted");
  }
  Napi::Value Append(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      ThrowTypeError(env, "Expected signatures to be a Uint32Array");
    Napi::Uint32Array a = info[0].As<Napi::Uint32Array>();
    if (a.ElementLength() % k_ != 0)
      ThrowRangeError(env, "The signatures' length " + std::to_string(a.ElementLength()) +
                               " is not a multiple of numPerm " + std::to_string(k_));
    const Status s = writer_.Append(a.Data(), a.ElementLength() / k_);
    if (!s.ok()) throw StatusError(env, s);
    return env.Undefined();
  }
  Napi::Value Commit(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env);
    open_ = false;
    const Status s = writer_.Commit();
    if (!s.ok()) throw StatusError(env, s);
    return Napi::Number::New(env, static_cast<double>(writer_.records()));
  }
  Napi::Value Abort(const Napi::CallbackInfo& info) {
    if (open_) writer_.Abort();
    open_ = false;
    return info.Env().Undefined();
  }
  Napi::Value Records(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(writer_.records()));
  }

  minhash::SignatureFileWriter writer_;
  uint32_t k_ = 0;
  bool open_ = false;
};

// signatureFileHeader(head, fileSize, name): the checked header of a signature file (readSignatureFile).
Napi::Value SignatureFileHeader(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected head to be a Uint8Array");
  if (!info[1].IsNumber()) ThrowTypeError(env, "Expected fileSize to be a number");
  if (!info[2].IsString()) ThrowTypeError(env, "Expected name to be a string");
  Napi::Uint8Array head = info[0].As<Napi::Uint8Array>();
  const double size = info[1].As<Napi::Number>().DoubleValue();
  if (!(size >= 0 && size <= 9007199254740991.0)) ThrowRangeError(env, "fileSize must be a safe integer");
  minhash::SignatureFileInfo h;
  const Status s = minhash::DecodeSignatureHeader(head.Data(), head.ByteLength(), static_cast<uint64_t>(size),
                                                  info[2].As<Napi::String>().Utf8Value(), &h);
  if (!s.ok()) throw StatusError(env, s);
  Napi::Object o = Napi::Object::New(env);
  auto num = [&](const char* k, uint64_t v) { o.Set(k, Napi::Number::New(env, static_cast<double>(v))); };
  o.Set("format", h.format == minhash::FileFormat::kDoubri ? "doubri" : "neardup");
  num("count", h.count);
  num("numPerm", h.num_perm);
  num("profile", h.profile);
  num("valuesOffset", h.values_offset);
  num("trailerOffset", h.trailer_offset);
  num("payloadCrc", h.payload_crc);
  return o;
}

}  // namespace

void MinHash::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("minhash", Napi::Function::New(env, MinHashAsync, "minhash"));
  exports.Set("minhashSync", Napi::Function::New(env, MinHashSync, "minhashSync"));
  exports.Set("minhashShinglesSync", Napi::Function::New(env, MinHashShinglesSync, "minhashShinglesSync"));
  exports.Set("datasketchPermutations", Napi::Function::New(env, DatasketchPermutations, "datasketchPermutations"));
  exports.Set("SignatureWriter", SignatureWriter::Define(env));
  exports.Set("signatureFileHeader", Napi::Function::New(env, SignatureFileHeader, "signatureFileHeader"));
}

}  // namespace binding
}  // namespace neardup
