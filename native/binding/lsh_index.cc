#include "lsh_index.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "addon.h"
#include "args.h"
#include "minhash/lsh.h"
#include "parallel/pool.h"

namespace neardup {
namespace binding {
namespace {

// The index behind a JS object (Closable: workers hold a shared_ptr, close() never waits for them and never
// frees the index under them). `mu` orders inserts (exclusive) against queries (shared).
struct LshState : Closable {
  std::shared_mutex mu;
  std::unique_ptr<lsh::Index> index;         // mutable
  std::unique_ptr<lsh::FrozenIndex> frozen;  // loaded, read-only
  const lsh::Params& params() const { return index ? index->params() : frozen->params(); }
};

Status Closed() { return Cancelled("index"); }


// Copies signatures (Uint32Array for 32-bit profiles, BigUint64Array for fast) and checks their shape.
std::vector<uint8_t> Signatures(Napi::Env env, const Napi::Value& v, const lsh::Params& p, size_t* count) {
  if (!v.IsTypedArray()) ThrowTypeError(env, "Expected signatures to be a Uint32Array or BigUint64Array");
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  const napi_typedarray_type want = p.value_bytes == 8 ? napi_biguint64_array : napi_uint32_array;
  if (ta.TypedArrayType() != want)
    ThrowTypeError(env, std::string("Expected signatures to be a ") + (p.value_bytes == 8 ? "BigUint64Array" : "Uint32Array") +
                            " for this profile");
  const size_t len = ta.ElementLength();
  if (len % p.num_perm != 0)
    ThrowRangeError(env, "signatures length " + std::to_string(len) + " is not a multiple of numPerm = " +
                             std::to_string(p.num_perm));
  *count = len / p.num_perm;
  const uint8_t* data = static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
  return std::vector<uint8_t>(data, data + ta.ByteLength());
}

std::vector<uint64_t> Ids(Napi::Env env, const Napi::Value& v) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array)
    ThrowTypeError(env, "Expected ids to be a BigUint64Array");
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  const uint64_t* d = reinterpret_cast<const uint64_t*>(static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset());
  return std::vector<uint64_t>(d, d + ta.ElementLength());
}

// The state of one candidatePairsStream(): the core stream is built by its first chunk, on the pool.
struct PairStreamState {
  std::shared_ptr<LshState> st;
  std::mutex mu;
  std::unique_ptr<lsh::PairStream> stream;
  bool done = false;
};

class LshPairChunkWorker : public PairChunkWorker {
 public:
  LshPairChunkWorker(Napi::Env env, std::shared_ptr<PairStreamState> ps, size_t max_pairs)
      : PairChunkWorker(env), ps_(std::move(ps)), max_(max_pairs) {}

 protected:
  Status Run() override {
    std::shared_lock<std::shared_mutex> lock(ps_->st->mu);
    if (ps_->st->closed.load()) return Closed();
    std::lock_guard<std::mutex> g(ps_->mu);
    if (ps_->done) return Status::Ok();
    if (!ps_->stream) {
      if (ps_->st->index) ps_->stream = std::make_unique<lsh::PairStream>(*ps_->st->index);
      else ps_->stream = std::make_unique<lsh::PairStream>(*ps_->st->frozen);
    }
    Status s = ps_->stream->Next(max_, &pairs_, &ps_->done);
    if (ps_->done) ps_->stream.reset();
    done_ = ps_->done;
    return s;
  }

 private:
  std::shared_ptr<PairStreamState> ps_;
  size_t max_;
};

class InsertWorker : public PromiseWorker {
 public:
  InsertWorker(Napi::Env env, std::shared_ptr<LshState> st, std::vector<uint64_t> ids, std::vector<uint8_t> sigs)
      : PromiseWorker(env), st_(std::move(st)), ids_(std::move(ids)), sigs_(std::move(sigs)), slots_(parallel::MaxSlots()) {}

 protected:
  Status Run() override {
    std::unique_lock<std::shared_mutex> lock(st_->mu);
    if (st_->closed.load()) return Closed();
    return st_->index->Insert(ids_.data(), sigs_.data(), ids_.size(), slots_, stop());
  }
  Napi::Value Resolve(Napi::Env env) override { return env.Undefined(); }

 private:
  std::shared_ptr<LshState> st_;
  std::vector<uint64_t> ids_;
  std::vector<uint8_t> sigs_;
  size_t slots_;
};

class QueryWorker : public PromiseWorker {
 public:
  QueryWorker(Napi::Env env, std::shared_ptr<LshState> st, std::vector<uint8_t> sigs, size_t n, uint64_t max_results)
      : PromiseWorker(env), st_(std::move(st)), sigs_(std::move(sigs)), n_(n), max_(max_results), slots_(parallel::MaxSlots()) {}

 protected:
  Status Run() override {
    std::shared_lock<std::shared_mutex> lock(st_->mu);
    if (st_->closed.load()) return Closed();
    const size_t sb = st_->params().signature_bytes();
    std::vector<std::vector<uint64_t>> per(n_);
    // the total is checked as results arrive: past max_, the remaining chunks stop (memory ~ max_ ids)
    std::atomic<uint64_t> total{0};
    std::atomic<bool> over{false};
    parallel::ParallelFor(
        n_, 64, slots_,
        [&](size_t begin, size_t end, size_t) {
          for (size_t i = begin; i < end && !over.load(std::memory_order_relaxed); i++) {
            if (st_->index) st_->index->Query(sigs_.data() + i * sb, &per[i]);
            else st_->frozen->Query(sigs_.data() + i * sb, &per[i]);
            if (total.fetch_add(per[i].size()) + per[i].size() > max_) over.store(true);
          }
        },
        stop());
    if (over.load())
      return Status(Code::kTooManyResults, "queryBatch: more than " + std::to_string(max_) +
                                               " result ids in all (raise maxResults, or query in smaller batches)");
    offsets_.assign(n_ + 1, 0);
    for (size_t i = 0; i < n_; i++) {
      offsets_[i + 1] = offsets_[i] + static_cast<uint32_t>(per[i].size());
      ids_.insert(ids_.end(), per[i].begin(), per[i].end());
    }
    return Status::Ok();
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("ids", NewBigUint64Array(env, std::move(ids_)));
    const size_t m = offsets_.size();
    o.Set("offsets", Napi::Uint32Array::New(env, m, ToArrayBuffer(env, std::move(offsets_)), 0));
    return o;
  }

 private:
  std::shared_ptr<LshState> st_;
  std::vector<uint8_t> sigs_;
  size_t n_;
  uint64_t max_;
  size_t slots_;
  std::vector<uint64_t> ids_;
  std::vector<uint32_t> offsets_;
};

class SaveWorker : public PromiseWorker {
 public:
  SaveWorker(Napi::Env env, std::shared_ptr<LshState> st, std::string path)
      : PromiseWorker(env), st_(std::move(st)), path_(std::move(path)) {}

 protected:
  Status Run() override {
    std::shared_lock<std::shared_mutex> lock(st_->mu);
    if (st_->closed.load()) return Closed();
    return st_->index->Save(path_);
  }
  Napi::Value Resolve(Napi::Env env) override { return env.Undefined(); }

 private:
  std::shared_ptr<LshState> st_;
  std::string path_;
};

class LshIndexWrap : public Napi::ObjectWrap<LshIndexWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "LshIndex",
                       {InstanceMethod("insert", &LshIndexWrap::Insert), InstanceMethod("insertSync", &LshIndexWrap::InsertSync),
                        InstanceMethod("query", &LshIndexWrap::Query), InstanceMethod("queryBatch", &LshIndexWrap::QueryBatch),
                        InstanceMethod("remove", &LshIndexWrap::Remove), InstanceMethod("size", &LshIndexWrap::Size),
                        InstanceMethod("candidatePairs", &LshIndexWrap::CandidatePairs),
                        InstanceMethod("pairStream", &LshIndexWrap::PairStream),
                        InstanceMethod("clusters", &LshIndexWrap::Clusters), InstanceMethod("save", &LshIndexWrap::Save),
                        InstanceMethod("params", &LshIndexWrap::Params), InstanceMethod("close", &LshIndexWrap::Close)});
  }

  // new LshIndex({ profile, numPerm, b, r }) or new LshIndex({ path, verify })
  explicit LshIndexWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<LshIndexWrap>(info) {
    Napi::Env env = info.Env();
    Napi::Object o = OptionsObject(env, info[0], "options");
    st_ = std::make_shared<LshState>();
    if (o.Has("path")) {
      Napi::Value pv = o.Get("path");
      if (!pv.IsString()) ThrowTypeError(env, "Expected option 'path' to be a string");
      auto frozen = std::make_unique<lsh::FrozenIndex>();
      Status s = frozen->Load(CheckPath(env, pv.As<Napi::String>().Utf8Value(), "path"), GetBool(o, "verify", true));
      if (!s.ok()) throw StatusError(env, s);
      st_->frozen = std::move(frozen);
      return;
    }
    lsh::Params p;
    p.profile = static_cast<lsh::Profile>(GetEnum(o, "profile", 0, {"fast", "datasketch", "doubri"}));
    p.value_bytes = GetUint32(o, "valueBytes", 4, 4, 8);
    p.num_perm = GetUint32(o, "numPerm", 128, 1, 1 << 16);
    p.b = GetUint32(o, "b", 0, 1, 1 << 16);
    p.r = GetUint32(o, "r", 0, 1, 1 << 16);
    Status s = lsh::Validate(p);
    if (!s.ok()) ThrowRangeError(env, s.message());
    st_->index = std::make_unique<lsh::Index>(p);
  }

 private:
  std::shared_ptr<LshState> Live(Napi::Env env) { return LiveState(env, st_, "index"); }
  std::shared_ptr<LshState> Mutable(Napi::Env env, const char* what) {
    auto st = Live(env);
    if (!st->index) throw CodedError(env, "ERR_NEARDUP_UNSUPPORTED", std::string(what) + ": a loaded index is read-only");
    return st;
  }

  // insert/insertSync arguments: ids and one signature per id.
  struct InsertArgs {
    std::vector<uint64_t> ids;
    std::vector<uint8_t> sigs;
  };
  static InsertArgs ParseInsert(Napi::Env env, const Napi::CallbackInfo& info, const LshState& st) {
    InsertArgs a;
    a.ids = Ids(env, info[0]);
    size_t n = 0;
    a.sigs = Signatures(env, info[1], st.params(), &n);
    if (n != a.ids.size()) ThrowRangeError(env, "expected one signature per id");
    return a;
  }

  Napi::Value Insert(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Mutable(env, "insert");
    InsertArgs a = ParseInsert(env, info, *st);
    return (new InsertWorker(env, st, std::move(a.ids), std::move(a.sigs)))->QueueAndGetPromise();
  }

  Napi::Value InsertSync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Mutable(env, "insertSync");
    InsertArgs a = ParseInsert(env, info, *st);
    return RunSync(
        env,
        [&] {
          std::unique_lock<std::shared_mutex> lock(st->mu);
          return st->index->Insert(a.ids.data(), a.sigs.data(), a.ids.size(), 1, nullptr);
        },
        [](Napi::Env e) { return e.Undefined(); });
  }

  Napi::Value Query(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    size_t n = 0;
    auto sig = Signatures(env, info[0], st->params(), &n);
    if (n != 1) ThrowRangeError(env, "query takes exactly one signature (use queryBatch for many)");
    std::vector<uint64_t> out;
    {
      std::shared_lock<std::shared_mutex> lock(st->mu);
      if (st->index) st->index->Query(sig.data(), &out);
      else st->frozen->Query(sig.data(), &out);
    }
    return NewBigUint64Array(env, std::move(out));
  }

  Napi::Value QueryBatch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    size_t n = 0;
    auto sigs = Signatures(env, info[0], st->params(), &n);
    const uint64_t max = GetCap(env, info[1], "maxResults");
    return (new QueryWorker(env, st, std::move(sigs), n, max))->QueueAndGetPromise();
  }

  Napi::Value Remove(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Mutable(env, "remove");
    if (!info[0].IsBigInt()) ThrowTypeError(env, "Expected id to be a bigint");
    bool lossless = false;
    const uint64_t id = info[0].As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) ThrowRangeError(env, "id must be from 0 to 2^64-1");
    std::unique_lock<std::shared_mutex> lock(st->mu);
    return Napi::Boolean::New(env, st->index->Remove(id));
  }

  Napi::Value Size(const Napi::CallbackInfo& info) {
    auto st = Live(info.Env());
    std::shared_lock<std::shared_mutex> lock(st->mu);
    return Napi::Number::New(info.Env(), static_cast<double>(st->index ? st->index->size() : st->frozen->size()));
  }

  Napi::Value CandidatePairs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    const uint64_t max = GetCap(env, info[0], "maxPairs");
    std::vector<lsh::Pair> pairs;
    Status s;
    {
      std::shared_lock<std::shared_mutex> lock(st->mu);
      s = st->index ? st->index->CandidatePairs(&pairs, max) : st->frozen->CandidatePairs(&pairs, max);
    }
    if (!s.ok()) throw StatusError(env, s);
    return PairArrays(env, pairs);
  }

  // An object whose next(chunkPairs) resolves to the next { a, b, done } chunk of candidate pairs.
  Napi::Value PairStream(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto ps = std::make_shared<PairStreamState>();
    ps->st = Live(env);
    return PairStreamObject(env, [ps](Napi::Env e, uint64_t max) -> PairChunkWorker* {
      return new LshPairChunkWorker(e, ps, static_cast<size_t>(max));
    });
  }

  Napi::Value Clusters(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    std::vector<uint64_t> ids, reps;
    {
      std::shared_lock<std::shared_mutex> lock(st->mu);
      if (st->index) st->index->Clusters(&ids, &reps);
      else st->frozen->Clusters(&ids, &reps);
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("ids", NewBigUint64Array(env, std::move(ids)));
    o.Set("representatives", NewBigUint64Array(env, std::move(reps)));
    return o;
  }

  Napi::Value Save(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Mutable(env, "save");
    if (!info[0].IsString()) ThrowTypeError(env, "Expected path to be a string");
    return (new SaveWorker(env, st, CheckPath(env, info[0].As<Napi::String>().Utf8Value(), "path")))->QueueAndGetPromise();
  }

  Napi::Value Params(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    const lsh::Params& p = st->params();
    static const char* names[] = {"fast", "datasketch", "doubri"};
    Napi::Object o = Napi::Object::New(env);
    o.Set("profile", names[static_cast<int>(p.profile)]);
    o.Set("numPerm", p.num_perm);
    o.Set("b", p.b);
    o.Set("r", p.r);
    o.Set("readOnly", Napi::Boolean::New(env, !st->index));
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&st_);  // returns at once: running workers keep the index until they finish
    return info.Env().Undefined();
  }

  std::shared_ptr<LshState> st_;
};

struct OptimalParamArgs {
  double t, fp, fn;
  uint32_t num_perm;
};

OptimalParamArgs ParseOptimalParamArgs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) ThrowTypeError(env, "Expected threshold to be a number");
  if (!info[1].IsNumber()) ThrowTypeError(env, "Expected numPerm to be a number");
  for (int i = 2; i < 4; i++)
    if (!info[i].IsUndefined() && !info[i].IsNumber()) ThrowTypeError(env, "Expected the weights to be numbers");
  OptimalParamArgs a;
  a.t = info[0].As<Napi::Number>().DoubleValue();
  const double np = info[1].As<Napi::Number>().DoubleValue();
  a.fp = info[2].IsUndefined() ? 0.5 : info[2].As<Napi::Number>().DoubleValue();
  a.fn = info[3].IsUndefined() ? 0.5 : info[3].As<Napi::Number>().DoubleValue();
  if (!(np >= 1 && np <= 65536) || np != static_cast<double>(static_cast<uint32_t>(np)))
    ThrowRangeError(env, "numPerm must be an integer from 1 to 65536");
  a.num_perm = static_cast<uint32_t>(np);
  if (!(a.t > 0 && a.t < 1)) ThrowRangeError(env, "threshold must be in (0, 1)");
  if (!(a.fp >= 0 && a.fn >= 0) || std::fabs(a.fp + a.fn - 1.0) > 1e-9)
    ThrowRangeError(env, "the weights must be non-negative and sum to 1");
  return a;
}

Napi::Object BandsObject(Napi::Env env, uint32_t b, uint32_t r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("b", b);
  o.Set("r", r);
  return o;
}

// Milliseconds even for numPerm 65536 (minhash/banding.h).
Napi::Value OptimalParam(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const OptimalParamArgs a = ParseOptimalParamArgs(info);
  uint32_t b = 0, r = 0;
  Status s = lsh::OptimalParam(a.t, a.num_perm, a.fp, a.fn, &b, &r);
  if (!s.ok()) ThrowRangeError(env, s.message());
  return BandsObject(env, b, r);
}

class OptimalParamWorker : public PromiseWorker {
 public:
  OptimalParamWorker(Napi::Env env, const OptimalParamArgs& a) : PromiseWorker(env), a_(a) {}

 protected:
  Status Run() override { return lsh::OptimalParam(a_.t, a_.num_perm, a_.fp, a_.fn, &b_, &r_); }
  Napi::Value Resolve(Napi::Env env) override { return BandsObject(env, b_, r_); }

 private:
  OptimalParamArgs a_;
  uint32_t b_ = 0, r_ = 0;
};

Napi::Value OptimalParamAsync(const Napi::CallbackInfo& info) {
  const OptimalParamArgs a = ParseOptimalParamArgs(info);
  return (new OptimalParamWorker(info.Env(), a))->QueueAndGetPromise();
}

}  // namespace

void LshIndexBinding::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("LshIndex", LshIndexWrap::Define(env));
  exports.Set("lshOptimalParam", Napi::Function::New(env, OptimalParam, "lshOptimalParam"));
  exports.Set("lshOptimalParamAsync", Napi::Function::New(env, OptimalParamAsync, "lshOptimalParamAsync"));
}

}  // namespace binding
}  // namespace neardup
