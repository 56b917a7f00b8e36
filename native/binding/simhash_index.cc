#include "simhash_index.h"

#include <atomic>
#include <functional>
#include <memory>

#include "addon.h"
#include "args.h"
#include "parallel/pool.h"
#include "simhash.h"
#include "simhash/index.h"

namespace neardup {
namespace binding {
namespace {

struct IndexState {
  std::unique_ptr<simhash::Index> index;
  std::atomic<bool> closed{false};
};
using StatePtr = std::shared_ptr<IndexState>;

// An async operation on the index: run() on a pool thread, resolve() on the JS thread.
class IndexWorker : public PromiseWorker {
 public:
  IndexWorker(Napi::Env env, StatePtr state, std::function<Status(simhash::Index&, size_t slots, const std::atomic<bool>*)> run,
              std::function<Napi::Value(Napi::Env)> resolve)
      : PromiseWorker(env), state_(std::move(state)), run_(std::move(run)), resolve_(std::move(resolve)) {
    slots_ = parallel::MaxSlots();
  }

 protected:
  Status Run() override {
    if (state_->closed.load()) return Status(Code::kCancelled, "the index was closed before this operation ran");
    return run_(*state_->index, slots_, stop());
  }
  Napi::Value Resolve(Napi::Env env) override { return resolve_(env); }

 private:
  StatePtr state_;
  std::function<Status(simhash::Index&, size_t, const std::atomic<bool>*)> run_;
  std::function<Napi::Value(Napi::Env)> resolve_;
  size_t slots_ = 1;
};

Napi::Value FindAllObject(Napi::Env env, std::vector<uint32_t>&& offsets, std::vector<uint64_t>&& ids) {
  Napi::Object o = Napi::Object::New(env);
  const size_t n = offsets.size();
  o.Set("offsets", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(offsets)), 0));
  o.Set("ids", NewU64Array(env, std::move(ids)));
  return o;
}

Napi::Value FindFirstObject(Napi::Env env, std::vector<uint64_t>&& ids, std::vector<uint8_t>&& found) {
  Napi::Object o = Napi::Object::New(env);
  const size_t n = found.size();
  o.Set("ids", NewU64Array(env, std::move(ids)));
  o.Set("found", Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(found)), 0));
  return o;
}

class SimhashIndexWrap : public Napi::ObjectWrap<SimhashIndexWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "SimhashIndex",
        {
            StaticMethod<&SimhashIndexWrap::Open>("open"),
            InstanceMethod<&SimhashIndexWrap::Insert>("insert"),
            InstanceMethod<&SimhashIndexWrap::InsertAsync>("insertAsync"),
            InstanceMethod<&SimhashIndexWrap::Remove>("remove"),
            InstanceMethod<&SimhashIndexWrap::RemoveAsync>("removeAsync"),
            InstanceMethod<&SimhashIndexWrap::Has>("has"),
            InstanceMethod<&SimhashIndexWrap::FindFirst>("findFirst"),
            InstanceMethod<&SimhashIndexWrap::FindAll>("findAll"),
            InstanceMethod<&SimhashIndexWrap::FindFirstMany>("findFirstMany"),
            InstanceMethod<&SimhashIndexWrap::FindFirstManySync>("findFirstManySync"),
            InstanceMethod<&SimhashIndexWrap::FindAllMany>("findAllMany"),
            InstanceMethod<&SimhashIndexWrap::FindAllManySync>("findAllManySync"),
            InstanceMethod<&SimhashIndexWrap::Compact>("compact"),
            InstanceMethod<&SimhashIndexWrap::Save>("save"),
            InstanceMethod<&SimhashIndexWrap::SaveSync>("saveSync"),
            InstanceMethod<&SimhashIndexWrap::Stats>("stats"),
            InstanceMethod<&SimhashIndexWrap::Close>("close"),
        });
  }

  explicit SimhashIndexWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SimhashIndexWrap>(info) {
    Napi::Env env = info.Env();
    state_ = std::make_shared<IndexState>();
    if (info[0].IsExternal()) {  // from open()
      auto* opened = info[0].As<Napi::External<std::unique_ptr<simhash::Index>>>().Data();
      state_->index = std::move(*opened);
      return;
    }
    Napi::Object o = OptionsObject(env, info[0], "options");
    const uint32_t k = GetUint32(o, "distance", 3, 0, simhash::kMaxDistance);
    const uint32_t m = GetUint32(o, "blocks", 6, 1, 64);
    Status s = simhash::Index::Create(m, k, &state_->index);
    if (!s.ok()) ThrowRangeError(env, s.message());
  }

 private:
  StatePtr Live(Napi::Env env) {
    if (!state_ || state_->closed.load()) throw CodedError(env, "ERR_NEARDUP_CLOSED", "the SimhashIndex is closed");
    return state_;
  }
  static void Check(Napi::Env env, const Status& s) {
    if (!s.ok()) {
      if (s.code() == Code::kInvalidArgument) ThrowRangeError(env, s.message());
      throw StatusError(env, s);
    }
  }
  static std::string PathArg(Napi::Env env, const Napi::Value& v) {
    if (!v.IsString()) ThrowTypeError(env, "Expected path to be a string");
    std::string p = v.As<Napi::String>().Utf8Value();
    if (p.empty()) ThrowTypeError(env, "path must not be empty");
    return p;
  }

  static Napi::Value Open(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const std::string path = PathArg(env, info[0]);
    Napi::Object o = OptionsObject(env, info[1], "options");
    const bool verify = GetBool(o, "verify", true);
    std::unique_ptr<simhash::Index> ix;
    Status s = simhash::Index::Open(path, verify, &ix);
    if (!s.ok()) throw StatusError(env, s);
    auto ext = Napi::External<std::unique_ptr<simhash::Index>>::New(env, &ix);
    return info.This().As<Napi::Function>().New({ext});
  }

  Napi::Value Insert(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View ids = GetU64Array(env, info[0], "ids");
    const U64View fps = GetU64Array(env, info[1], "fingerprints");
    if (ids.size != fps.size) ThrowRangeError(env, "ids and fingerprints must have the same length");
    Check(env, st->index->Insert(ids.data, fps.data, ids.size, 1));
    return env.Undefined();
  }

  Napi::Value InsertAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View idv = GetU64Array(env, info[0], "ids");
    const U64View fpv = GetU64Array(env, info[1], "fingerprints");
    if (idv.size != fpv.size) ThrowRangeError(env, "ids and fingerprints must have the same length");
    auto ids = std::make_shared<std::vector<uint64_t>>(idv.data, idv.data + idv.size);
    auto fps = std::make_shared<std::vector<uint64_t>>(fpv.data, fpv.data + fpv.size);
    auto* w = new IndexWorker(
        env, st,
        [ids, fps](simhash::Index& ix, size_t slots, const std::atomic<bool>*) {
          return ix.Insert(ids->data(), fps->data(), ids->size(), slots);
        },
        [](Napi::Env e) { return e.Undefined(); });
    return w->QueueAndGetPromise();
  }

  Napi::Value Remove(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View ids = GetU64Array(env, info[0], "ids");
    size_t removed = 0;
    Check(env, st->index->Remove(ids.data, ids.size, &removed));
    return Napi::Number::New(env, static_cast<double>(removed));
  }

  Napi::Value RemoveAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View idv = GetU64Array(env, info[0], "ids");
    auto ids = std::make_shared<std::vector<uint64_t>>(idv.data, idv.data + idv.size);
    auto removed = std::make_shared<size_t>(0);
    auto* w = new IndexWorker(
        env, st,
        [ids, removed](simhash::Index& ix, size_t, const std::atomic<bool>*) {
          return ix.Remove(ids->data(), ids->size(), removed.get());
        },
        [removed](Napi::Env e) { return Napi::Number::New(e, static_cast<double>(*removed)); });
    return w->QueueAndGetPromise();
  }

  Napi::Value Has(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    return Napi::Boolean::New(env, st->index->Contains(GetU64Value(env, info[0], "id")));
  }

  Napi::Value FindFirst(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    uint64_t id = 0;
    if (!st->index->FindFirst(GetU64Value(env, info[0], "fingerprint"), &id)) return env.Null();
    return Napi::BigInt::New(env, id);
  }

  Napi::Value FindAll(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    std::vector<uint64_t> ids;
    st->index->FindAll(GetU64Value(env, info[0], "fingerprint"), &ids);
    return NewU64Array(env, std::move(ids));
  }

  Napi::Value FindFirstMany(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View qv = GetU64Array(env, info[0], "fingerprints");
    auto q = std::make_shared<std::vector<uint64_t>>(qv.data, qv.data + qv.size);
    auto ids = std::make_shared<std::vector<uint64_t>>();
    auto found = std::make_shared<std::vector<uint8_t>>();
    auto* w = new IndexWorker(
        env, st,
        [q, ids, found](simhash::Index& ix, size_t slots, const std::atomic<bool>* stop) {
          return ix.FindFirstBatch(q->data(), q->size(), slots, stop, ids.get(), found.get());
        },
        [ids, found](Napi::Env e) { return FindFirstObject(e, std::move(*ids), std::move(*found)); });
    return w->QueueAndGetPromise();
  }

  Napi::Value FindFirstManySync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View q = GetU64Array(env, info[0], "fingerprints");
    std::vector<uint64_t> ids;
    std::vector<uint8_t> found;
    Check(env, st->index->FindFirstBatch(q.data, q.size, 1, nullptr, &ids, &found));
    return FindFirstObject(env, std::move(ids), std::move(found));
  }

  Napi::Value FindAllMany(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View qv = GetU64Array(env, info[0], "fingerprints");
    auto q = std::make_shared<std::vector<uint64_t>>(qv.data, qv.data + qv.size);
    auto off = std::make_shared<std::vector<uint32_t>>();
    auto ids = std::make_shared<std::vector<uint64_t>>();
    auto* w = new IndexWorker(
        env, st,
        [q, off, ids](simhash::Index& ix, size_t slots, const std::atomic<bool>* stop) {
          return ix.FindAllBatch(q->data(), q->size(), slots, stop, off.get(), ids.get());
        },
        [off, ids](Napi::Env e) { return FindAllObject(e, std::move(*off), std::move(*ids)); });
    return w->QueueAndGetPromise();
  }

  Napi::Value FindAllManySync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View q = GetU64Array(env, info[0], "fingerprints");
    std::vector<uint32_t> off;
    std::vector<uint64_t> ids;
    Check(env, st->index->FindAllBatch(q.data, q.size, 1, nullptr, &off, &ids));
    return FindAllObject(env, std::move(off), std::move(ids));
  }

  Napi::Value Compact(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Live(env)->index->Compact(1);
    return env.Undefined();
  }

  Napi::Value Save(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const std::string path = PathArg(env, info[0]);
    auto* w = new IndexWorker(
        env, st, [path](simhash::Index& ix, size_t slots, const std::atomic<bool>*) { return ix.Save(path, slots); },
        [](Napi::Env e) { return e.Undefined(); });
    return w->QueueAndGetPromise();
  }

  Napi::Value SaveSync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    Check(env, st->index->Save(PathArg(env, info[0]), 1));
    return env.Undefined();
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const simhash::IndexStats s = st->index->Stats();
    Napi::Object o = Napi::Object::New(env);
    o.Set("blocks", Napi::Number::New(env, st->index->blocks()));
    o.Set("distance", Napi::Number::New(env, st->index->distance()));
    o.Set("tables", Napi::Number::New(env, s.tables));
    o.Set("size", Napi::Number::New(env, static_cast<double>(s.size)));
    o.Set("slots", Napi::Number::New(env, static_cast<double>(s.slots)));
    o.Set("tombstones", Napi::Number::New(env, static_cast<double>(s.tombstones)));
    o.Set("buffered", Napi::Number::New(env, static_cast<double>(s.buffered)));
    o.Set("tableBytes", Napi::Number::New(env, static_cast<double>(s.table_bytes)));
    o.Set("entryBytes", Napi::Number::New(env, static_cast<double>(s.entry_bytes)));
    o.Set("mapped", Napi::Boolean::New(env, s.mapped));
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (state_) {
      state_->closed.store(true);
      state_.reset();
    }
    return info.Env().Undefined();
  }

  StatePtr state_;
};

}  // namespace

void SimhashIndexClass::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("SimhashIndex", SimhashIndexWrap::Define(env));
}

}  // namespace binding
}  // namespace neardup
