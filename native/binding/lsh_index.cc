#include "lsh_index.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "args.h"
#include "parallel/pool.h"

namespace neardup {
namespace binding {
namespace {

using StatePtr = std::shared_ptr<LshIndexState>;

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

// Keys of an insert: a BigUint64Array (integer keys) or an array of strings (string keys), copied.
struct OwnedKeys {
  lsh::KeyType type = lsh::KeyType::kInt;
  std::vector<uint64_t> ints;
  std::string bytes;
  std::vector<uint64_t> offsets{0};
  lsh::KeyBatch batch() const {
    lsh::KeyBatch b;
    b.type = type;
    b.n = type == lsh::KeyType::kInt ? ints.size() : offsets.size() - 1;
    b.ints = ints.data();
    b.bytes = reinterpret_cast<const uint8_t*>(bytes.data());
    b.offsets = offsets.data();
    return b;
  }
};


OwnedKeys Keys(Napi::Env env, const Napi::Value& v, lsh::KeyType type) {
  OwnedKeys k;
  k.type = type;
  if (type == lsh::KeyType::kInt) {
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array)
      ThrowTypeError(env, "Expected keys to be a BigUint64Array (this index has integer keys)");
    Napi::TypedArray ta = v.As<Napi::TypedArray>();
    const uint8_t* d = static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
    k.ints.resize(ta.ElementLength());
    std::memcpy(k.ints.data(), d, ta.ByteLength());
    return k;
  }
  if (!v.IsArray()) ThrowTypeError(env, "Expected keys to be an array of strings (this index has string keys)");
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value s = a.Get(i);
    if (!s.IsString()) ThrowTypeError(env, "Expected keys[" + std::to_string(i) + "] to be a string (this index has string keys)");
    k.bytes += s.As<Napi::String>().Utf8Value();
    k.offsets.push_back(k.bytes.size());
  }
  return k;
}

// One key (has / remove): a bigint for integer keys, a string for string keys. `buf` holds a string's bytes.
lsh::Key OneKey(Napi::Env env, const Napi::Value& v, lsh::KeyType type, std::string* buf) {
  if (type == lsh::KeyType::kInt) {
    if (!v.IsBigInt()) ThrowTypeError(env, "Expected key to be a bigint (this index has integer keys)");
    bool lossless = false;
    const uint64_t id = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) ThrowRangeError(env, "key must be from 0 to 2^64-1");
    return lsh::Key::Int(id);
  }
  if (!v.IsString()) ThrowTypeError(env, "Expected key to be a string (this index has string keys)");
  *buf = v.As<Napi::String>().Utf8Value();
  return lsh::Key::Str(*buf);
}

// Pairs of handles as { a, b } keys.
Status PairKeys(const lsh::Index& ix, const std::vector<lsh::Pair>& pairs, KeyList* a, KeyList* b) {
  for (const auto& p : pairs) {
    Status s = a->Add(ix, p.first);
    if (s.ok()) s = b->Add(ix, p.second);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Napi::Value PairsObject(Napi::Env env, KeyList& a, KeyList& b) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("a", a.ToJs(env));
  o.Set("b", b.ToJs(env));
  return o;
}

// The state of one candidatePairsStream(): the core stream is built by its first chunk, on the pool.
struct PairStreamState {
  StatePtr st;
  std::mutex mu;
  std::unique_ptr<lsh::PairStream> stream;
  bool done = false;
};

class LshPairChunkWorker : public PairChunkWorker {
 public:
  LshPairChunkWorker(Napi::Env env, std::shared_ptr<PairStreamState> ps, size_t max_pairs)
      : PairChunkWorker(env), ps_(std::move(ps)), max_(max_pairs), a_(ps_->st->index->key_type()), b_(ps_->st->index->key_type()) {}

 protected:
  Status Run() override {
    std::shared_lock<std::shared_mutex> lock(ps_->st->mu);
    if (ps_->st->closed.load()) return Closed();
    std::lock_guard<std::mutex> g(ps_->mu);
    if (ps_->done) return Status::Ok();
    if (!ps_->stream) ps_->stream = std::make_unique<lsh::PairStream>(*ps_->st->index);
    std::vector<lsh::Pair> pairs;
    Status s = ps_->stream->Next(max_, &pairs, &ps_->done);
    if (s.ok()) s = PairKeys(*ps_->st->index, pairs, &a_, &b_);
    if (ps_->done) ps_->stream.reset();
    done_ = ps_->done;
    return s;
  }
  // { a, b, done } with keys (bigints or strings), not the base class's handles.
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object o = PairsObject(env, a_, b_).As<Napi::Object>();
    o.Set("done", Napi::Boolean::New(env, done_));
    return o;
  }

 private:
  std::shared_ptr<PairStreamState> ps_;
  size_t max_;
  KeyList a_, b_;
};

class InsertWorker : public PromiseWorker {
 public:
  InsertWorker(Napi::Env env, StatePtr st, OwnedKeys keys, std::vector<uint8_t> sigs)
      : PromiseWorker(env), st_(std::move(st)), keys_(std::move(keys)), sigs_(std::move(sigs)), slots_(parallel::MaxSlots()) {}

 protected:
  Status Run() override {
    std::unique_lock<std::shared_mutex> lock(st_->mu);
    if (st_->closed.load()) return Closed();
    return st_->index->Insert(keys_.batch(), sigs_.data(), nullptr, slots_, stop());
  }
  Napi::Value Resolve(Napi::Env env) override { return env.Undefined(); }

 private:
  StatePtr st_;
  OwnedKeys keys_;
  std::vector<uint8_t> sigs_;
  size_t slots_;
};

class QueryWorker : public PromiseWorker {
 public:
  QueryWorker(Napi::Env env, StatePtr st, std::vector<uint8_t> sigs, size_t n, uint64_t max_results)
      : PromiseWorker(env), st_(std::move(st)), sigs_(std::move(sigs)), n_(n), max_(max_results), slots_(parallel::MaxSlots()),
        keys_(st_->index->key_type()) {}

 protected:
  Status Run() override {
    std::shared_lock<std::shared_mutex> lock(st_->mu);
    if (st_->closed.load()) return Closed();
    const lsh::Index& ix = *st_->index;
    const size_t sb = ix.params().signature_bytes();
    std::vector<std::vector<uint64_t>> per(n_);
    // the total is checked as results arrive: past max_, the remaining chunks stop (memory ~ max_ ids)
    std::atomic<uint64_t> total{0};
    std::atomic<bool> over{false};
    parallel::ParallelFor(
        n_, 64, slots_,
        [&](size_t begin, size_t end, size_t) {
          for (size_t i = begin; i < end && !over.load(std::memory_order_relaxed); i++) {
            ix.Query(sigs_.data() + i * sb, &per[i]);
            if (total.fetch_add(per[i].size()) + per[i].size() > max_) over.store(true);
          }
        },
        stop());
    if (over.load())
      return Status(Code::kTooManyResults, "queryBatch: more than " + std::to_string(max_) +
                                               " result ids in all (raise maxResults, or query in smaller batches)");
    if (stop()->load()) return Status(Code::kCancelled, "cancelled");
    offsets_.assign(n_ + 1, 0);
    keys_.Reserve(total.load());
    for (size_t i = 0; i < n_; i++) {
      offsets_[i + 1] = offsets_[i] + static_cast<uint32_t>(per[i].size());
      Status s = keys_.AddAll(ix, per[i]);
      if (!s.ok()) return s;
      per[i] = std::vector<uint64_t>();
    }
    return Status::Ok();
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("ids", keys_.ToJs(env));
    const size_t m = offsets_.size();
    o.Set("offsets", Napi::Uint32Array::New(env, m, ToArrayBuffer(env, std::move(offsets_)), 0));
    return o;
  }

 private:
  StatePtr st_;
  std::vector<uint8_t> sigs_;
  size_t n_;
  uint64_t max_;
  size_t slots_;
  KeyList keys_;
  std::vector<uint32_t> offsets_;
};

class SaveWorker : public PromiseWorker {
 public:
  SaveWorker(Napi::Env env, StatePtr st, std::string path) : PromiseWorker(env), st_(std::move(st)), path_(std::move(path)) {}

 protected:
  Status Run() override {
    std::shared_lock<std::shared_mutex> lock(st_->mu);
    if (st_->closed.load()) return Closed();
    return st_->index->Save(path_);
  }
  Napi::Value Resolve(Napi::Env env) override { return env.Undefined(); }

 private:
  StatePtr st_;
  std::string path_;
};

// LshIndex.loadAsync: maps (and verifies) the file on a pool thread, then builds the JS object with the class
// it was called on.
class LoadWorker : public PromiseWorker {
 public:
  LoadWorker(Napi::Env env, Napi::Function ctor, std::string path, bool verify)
      : PromiseWorker(env), ctor_(Napi::Persistent(ctor)), path_(std::move(path)), verify_(verify) {}

 protected:
  Status Run() override { return lsh::Index::Load(path_, verify_, &ix_); }
  Napi::Value Resolve(Napi::Env env) override {
    auto ext = Napi::External<std::unique_ptr<lsh::Index>>::New(env, &ix_);
    return ctor_.Value().New({ext});
  }

 private:
  Napi::FunctionReference ctor_;
  std::string path_;
  bool verify_;
  std::unique_ptr<lsh::Index> ix_;
};

// Marks LshIndex objects, so that FromValue can tell them from any other wrapped object.
constexpr napi_type_tag kLshIndexTag = {0x6e65617264757031ull, 0x4c7368496e646578ull};

class LshIndexWrap : public Napi::ObjectWrap<LshIndexWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "LshIndex",
                       {StaticMethod<&LshIndexWrap::LoadAsync>("loadAsync"),
                        InstanceMethod("insert", &LshIndexWrap::Insert), InstanceMethod("insertSync", &LshIndexWrap::InsertSync),
                        InstanceMethod("query", &LshIndexWrap::Query), InstanceMethod("queryBatch", &LshIndexWrap::QueryBatch),
                        InstanceMethod("remove", &LshIndexWrap::Remove), InstanceMethod("has", &LshIndexWrap::Has),
                        InstanceMethod("size", &LshIndexWrap::Size), InstanceMethod("info", &LshIndexWrap::Info),
                        InstanceMethod("candidatePairs", &LshIndexWrap::CandidatePairs),
                        InstanceMethod("pairStream", &LshIndexWrap::PairStream),
                        InstanceMethod("clusters", &LshIndexWrap::Clusters), InstanceMethod("save", &LshIndexWrap::Save),
                        InstanceMethod("params", &LshIndexWrap::Params), InstanceMethod("metadata", &LshIndexWrap::Metadata),
                        InstanceMethod("setMetadata", &LshIndexWrap::SetMetadata),
                        InstanceMethod("close", &LshIndexWrap::Close)});
  }

  // new LshIndex({ profile, numPerm, b, r, valueBytes, keyType }), new LshIndex({ path, verify }) (loads on the
  // calling thread), or new LshIndex(External) from loadAsync.
  explicit LshIndexWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<LshIndexWrap>(info) {
    Napi::Env env = info.Env();
    NAPI_THROW_IF_FAILED_VOID(env, napi_type_tag_object(env, info.This(), &kLshIndexTag));
    st_ = std::make_shared<LshIndexState>();
    if (info[0].IsExternal()) {
      st_->index = std::move(*info[0].As<Napi::External<std::unique_ptr<lsh::Index>>>().Data());
      return;
    }
    Napi::Object o = OptionsObject(env, info[0], "options");
    if (o.Has("path")) {
      Status s = lsh::Index::Load(PathArg(env, o.Get("path")), GetBool(o, "verify", true), &st_->index);
      if (!s.ok()) throw StatusError(env, s);
      return;
    }
    lsh::Params p;
    p.profile = static_cast<lsh::Profile>(GetEnum(o, "profile", 0, {"fast", "datasketch", "doubri"}));
    p.value_bytes = GetUint32(o, "valueBytes", 4, 4, 8);
    p.num_perm = GetUint32(o, "numPerm", 128, 1, 1 << 16);
    p.b = GetUint32(o, "b", 0, 1, 1 << 16);
    p.r = GetUint32(o, "r", 0, 1, 1 << 16);
    const auto kt = static_cast<lsh::KeyType>(GetEnum(o, "keyType", 0, {"int", "string"}));
    Status s = lsh::Validate(p);
    if (!s.ok()) ThrowRangeError(env, s.message());
    st_->index = std::make_unique<lsh::Index>(p, kt);
  }

  std::shared_ptr<LshIndexState> state() const { return st_; }

 private:
  static std::string PathArg(Napi::Env env, const Napi::Value& v) {
    if (!v.IsString()) ThrowTypeError(env, "Expected path to be a string");
    return CheckPath(env, v.As<Napi::String>().Utf8Value(), "path");
  }

  static Napi::Value LoadAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string path = PathArg(env, info[0]);
    Napi::Object o = OptionsObject(env, info[1], "options");
    const bool verify = GetBool(o, "verify", true);
    return (new LoadWorker(env, info.This().As<Napi::Function>(), std::move(path), verify))->QueueAndGetPromise();
  }

  StatePtr Live(Napi::Env env) { return LiveState(env, st_, "index"); }
  StatePtr Mutable(Napi::Env env, const char* what) {
    auto st = Live(env);
    if (st->pins.load() > 0)
      throw CodedError(env, "ERR_NEARDUP_UNSUPPORTED", std::string(what) + ": the index is in use by a dedup session");
    return st;
  }
  static void Check(Napi::Env env, const Status& s) {
    if (s.ok()) return;
    if (s.code() == Code::kInvalidArgument) ThrowRangeError(env, s.message());
    throw StatusError(env, s);
  }

  // insert/insertSync arguments: keys and one signature per key.
  struct InsertArgs {
    OwnedKeys keys;
    std::vector<uint8_t> sigs;
  };
  static InsertArgs ParseInsert(Napi::Env env, const Napi::CallbackInfo& info, const LshIndexState& st) {
    InsertArgs a;
    a.keys = Keys(env, info[0], st.index->key_type());
    size_t n = 0;
    a.sigs = Signatures(env, info[1], st.index->params(), &n);
    if (n != a.keys.batch().n) ThrowRangeError(env, "expected one signature per key");
    if (st.index->store().data)
      throw CodedError(env, "ERR_NEARDUP_UNSUPPORTED",
                       "insert: this index keeps per-document data for dedup (shingle sets): add documents to it with dedup");
    return a;
  }

  Napi::Value Insert(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Mutable(env, "insert");
    InsertArgs a = ParseInsert(env, info, *st);
    return (new InsertWorker(env, st, std::move(a.keys), std::move(a.sigs)))->QueueAndGetPromise();
  }

  Napi::Value InsertSync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Mutable(env, "insertSync");
    InsertArgs a = ParseInsert(env, info, *st);
    return RunSync(
        env,
        [&] {
          std::unique_lock<std::shared_mutex> lock(st->mu);
          return st->index->Insert(a.keys.batch(), a.sigs.data(), nullptr, 1, nullptr);
        },
        [](Napi::Env e) { return e.Undefined(); });
  }

  Napi::Value Query(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    size_t n = 0;
    auto sig = Signatures(env, info[0], st->index->params(), &n);
    if (n != 1) ThrowRangeError(env, "query takes exactly one signature (use queryBatch for many)");
    KeyList keys(st->index->key_type());
    {
      std::shared_lock<std::shared_mutex> lock(st->mu);
      std::vector<uint64_t> out;
      st->index->Query(sig.data(), &out);
      Check(env, keys.AddAll(*st->index, out));
    }
    return keys.ToJs(env);
  }

  Napi::Value QueryBatch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    size_t n = 0;
    auto sigs = Signatures(env, info[0], st->index->params(), &n);
    const uint64_t max = GetCap(env, info[1], "maxResults");
    return (new QueryWorker(env, st, std::move(sigs), n, max))->QueueAndGetPromise();
  }

  Napi::Value Remove(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Mutable(env, "remove");
    std::string buf;
    const lsh::Key k = OneKey(env, info[0], st->index->key_type(), &buf);
    Status s;
    {
      std::unique_lock<std::shared_mutex> lock(st->mu);
      s = st->index->Remove(k);
    }
    Check(env, s);
    return env.Undefined();
  }

  Napi::Value Has(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    std::string buf;
    const lsh::Key k = OneKey(env, info[0], st->index->key_type(), &buf);
    std::shared_lock<std::shared_mutex> lock(st->mu);
    return Napi::Boolean::New(env, st->index->Contains(k));
  }

  Napi::Value Size(const Napi::CallbackInfo& info) {
    auto st = Live(info.Env());
    std::shared_lock<std::shared_mutex> lock(st->mu);
    return Napi::Number::New(info.Env(), static_cast<double>(st->index->size()));
  }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    std::shared_lock<std::shared_mutex> lock(st->mu);
    const lsh::Index& ix = *st->index;
    Napi::Object o = Napi::Object::New(env);
    o.Set("size", double(ix.size()));
    o.Set("mapped", double(ix.base_size()));
    o.Set("removed", double(ix.base_removed()));
    o.Set("added", double(ix.added()));
    o.Set("fileVersion", ix.base() ? ix.base()->file_version() : 0);
    o.Set("storesSignatures", Napi::Boolean::New(env, ix.store().signatures));
    o.Set("storesData", Napi::Boolean::New(env, ix.store().data));
    return o;
  }

  Napi::Value CandidatePairs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    const uint64_t max = GetCap(env, info[0], "maxPairs");
    KeyList a(st->index->key_type()), b(st->index->key_type());
    {
      std::shared_lock<std::shared_mutex> lock(st->mu);
      std::vector<lsh::Pair> pairs;
      Check(env, st->index->CandidatePairs(&pairs, max));
      Check(env, PairKeys(*st->index, pairs, &a, &b));
    }
    return PairsObject(env, a, b);
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
    KeyList ids(st->index->key_type()), reps(st->index->key_type());
    {
      std::shared_lock<std::shared_mutex> lock(st->mu);
      std::vector<uint64_t> hs, rs;
      st->index->Clusters(&hs, &rs);
      ids.Reserve(hs.size());
      reps.Reserve(rs.size());
      Check(env, ids.AddAll(*st->index, hs));
      Check(env, reps.AddAll(*st->index, rs));
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("ids", ids.ToJs(env));
    o.Set("representatives", reps.ToJs(env));
    return o;
  }

  Napi::Value Save(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    return (new SaveWorker(env, st, PathArg(env, info[0])))->QueueAndGetPromise();
  }

  Napi::Value Params(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    const lsh::Params& p = st->index->params();
    static const char* names[] = {"fast", "datasketch", "doubri"};
    Napi::Object o = Napi::Object::New(env);
    o.Set("profile", names[static_cast<int>(p.profile)]);
    o.Set("numPerm", p.num_perm);
    o.Set("b", p.b);
    o.Set("r", p.r);
    o.Set("valueBytes", p.value_bytes);
    o.Set("keyType", st->index->key_type() == lsh::KeyType::kInt ? "int" : "string");
    return o;
  }

  Napi::Value Metadata(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Live(env);
    std::shared_lock<std::shared_mutex> lock(st->mu);
    return Napi::String::New(env, st->index->meta());
  }

  Napi::Value SetMetadata(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = Mutable(env, "setMetadata");
    if (!info[0].IsString()) ThrowTypeError(env, "Expected metadata to be a string");
    std::string m = info[0].As<Napi::String>().Utf8Value();
    std::unique_lock<std::shared_mutex> lock(st->mu);
    st->index->set_meta(std::move(m));
    return env.Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&st_);  // returns at once: running workers keep the index until they finish
    return info.Env().Undefined();
  }

  StatePtr st_;
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

Status KeyList::Add(const lsh::Index& ix, uint64_t handle) {
  lsh::Key k;
  Status s = ix.KeyOf(handle, &k);
  if (!s.ok()) return s;
  if (type_ == lsh::KeyType::kInt) {
    ints_.push_back(k.i);
  } else {
    bytes_.append(k.s.data(), k.s.size());
    ends_.push_back(bytes_.size());
  }
  return Status::Ok();
}

void KeyList::Reserve(size_t n) {
  if (type_ == lsh::KeyType::kInt) ints_.reserve(n);
  else ends_.reserve(n);
}

Status KeyList::AddAll(const lsh::Index& ix, const std::vector<uint64_t>& handles) {
  for (uint64_t h : handles) {
    Status s = Add(ix, h);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Napi::Value KeyList::ToJs(Napi::Env env) {
  if (type_ == lsh::KeyType::kInt) return NewBigUint64Array(env, std::move(ints_));
  Napi::Array a = Napi::Array::New(env, ends_.size());
  size_t at = 0;
  for (size_t i = 0; i < ends_.size(); i++) {
    a.Set(uint32_t(i), Napi::String::New(env, bytes_.data() + at, ends_[i] - at));
    at = ends_[i];
  }
  return a;
}

std::shared_ptr<LshIndexState> LshIndexBinding::FromValue(Napi::Env env, const Napi::Value& v) {
  bool is = false;
  if (!v.IsObject() || napi_check_object_type_tag(env, v, &kLshIndexTag, &is) != napi_ok || !is)
    ThrowTypeError(env, "Expected an LshIndex");
  return LiveState(env, LshIndexWrap::Unwrap(v.As<Napi::Object>())->state(), "index");
}

void LshIndexBinding::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("LshIndex", LshIndexWrap::Define(env));
  exports.Set("lshOptimalParam", Napi::Function::New(env, OptimalParam, "lshOptimalParam"));
  exports.Set("lshOptimalParamAsync", Napi::Function::New(env, OptimalParamAsync, "lshOptimalParamAsync"));
}

}  // namespace binding
}  // namespace neardup
