#include "simhash_index.h"

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "addon.h"
#include "args.h"
#include "parallel/pool.h"
#include "simhash.h"
#include "simhash/index.h"

namespace neardup {
namespace binding {
namespace {

struct IndexState : Closable {
  std::unique_ptr<simhash::Index> index;
};
using StatePtr = std::shared_ptr<IndexState>;

// A 64-bit array argument: read in place by a synchronous call, copied by Own() before an async one.
struct U64Arg {
  U64View view;
  std::vector<uint64_t> owned;
  void Own() {
    owned.assign(view.data, view.data + view.size);
    view.data = owned.data();
  }
};

// Operations on the index. Each is run either at once on the JS thread (one slot) or by an IndexWorker on
// the pool; Own() copies what an async run must not read from JS memory.
struct InsertOp {
  U64Arg ids, fps;
  void Own() {
    ids.Own();
    fps.Own();
  }
  Status Run(simhash::Index& ix, size_t slots, const std::atomic<bool>*) {
    return ix.Insert(ids.view.data, fps.view.data, ids.view.size, slots);
  }
  Napi::Value Resolve(Napi::Env env) { return env.Undefined(); }
};

struct RemoveOp {
  U64Arg ids;
  size_t removed = 0;
  void Own() { ids.Own(); }
  Status Run(simhash::Index& ix, size_t slots, const std::atomic<bool>*) {
    return ix.Remove(ids.view.data, ids.view.size, slots, &removed);
  }
  Napi::Value Resolve(Napi::Env env) { return Napi::Number::New(env, static_cast<double>(removed)); }
};

struct FindFirstManyOp {
  U64Arg q;
  std::vector<uint64_t> ids;
  std::vector<uint8_t> found;
  void Own() { q.Own(); }
  Status Run(simhash::Index& ix, size_t slots, const std::atomic<bool>* stop) {
    return ix.FindFirstBatch(q.view.data, q.view.size, slots, stop, &ids, &found);
  }
  Napi::Value Resolve(Napi::Env env) {
    Napi::Object o = Napi::Object::New(env);
    const size_t n = found.size();
    o.Set("ids", NewBigUint64Array(env, std::move(ids)));
    o.Set("found", Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(found)), 0));
    return o;
  }
};

struct FindAllManyOp {
  U64Arg q;
  std::vector<uint32_t> offsets;
  std::vector<uint64_t> ids;
  void Own() { q.Own(); }
  Status Run(simhash::Index& ix, size_t slots, const std::atomic<bool>* stop) {
    return ix.FindAllBatch(q.view.data, q.view.size, slots, stop, &offsets, &ids);
  }
  Napi::Value Resolve(Napi::Env env) {
    Napi::Object o = Napi::Object::New(env);
    const size_t n = offsets.size();
    o.Set("offsets", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(offsets)), 0));
    o.Set("ids", NewBigUint64Array(env, std::move(ids)));
    return o;
  }
};

struct SaveOp {
  std::string path;
  void Own() {}
  Status Run(simhash::Index& ix, size_t slots, const std::atomic<bool>*) { return ix.Save(path, slots); }
  Napi::Value Resolve(Napi::Env env) { return env.Undefined(); }
};

// An operation run on a pool thread; it holds the index state, so close() cannot free the index under it.
template <typename Op>
class IndexWorker : public PromiseWorker {
 public:
  IndexWorker(Napi::Env env, StatePtr state, Op op)
      : PromiseWorker(env), state_(std::move(state)), op_(std::move(op)), slots_(parallel::MaxSlots()) {
    op_.Own();
  }

 protected:
  Status Run() override {
    if (state_->closed.load()) return Cancelled("index");
    return op_.Run(*state_->index, slots_, stop());
  }
  Napi::Value Resolve(Napi::Env env) override { return op_.Resolve(env); }

 private:
  StatePtr state_;
  Op op_;
  size_t slots_;
};

// SimhashIndex.openAsync: maps (and verifies) the file on a pool thread, then builds the JS object with the
// class it was called on.
class OpenWorker : public PromiseWorker {
 public:
  OpenWorker(Napi::Env env, Napi::Function ctor, std::string path, bool verify)
      : PromiseWorker(env), ctor_(Napi::Persistent(ctor)), path_(std::move(path)), verify_(verify) {}

 protected:
  Status Run() override { return simhash::Index::Open(path_, verify_, &ix_); }
  Napi::Value Resolve(Napi::Env env) override {
    auto ext = Napi::External<std::unique_ptr<simhash::Index>>::New(env, &ix_);
    return ctor_.Value().New({ext});
  }

 private:
  Napi::FunctionReference ctor_;
  std::string path_;
  bool verify_;
  std::unique_ptr<simhash::Index> ix_;
};

class SimhashIndexWrap : public Napi::ObjectWrap<SimhashIndexWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "SimhashIndex",
        {
            StaticMethod<&SimhashIndexWrap::Open>("open"),
            StaticMethod<&SimhashIndexWrap::OpenAsync>("openAsync"),
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
  StatePtr Live(Napi::Env env) { return LiveState(env, state_, "SimhashIndex"); }
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
    CheckPath(env, p, "path");
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

  static Napi::Value OpenAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string path = PathArg(env, info[0]);
    Napi::Object o = OptionsObject(env, info[1], "options");
    const bool verify = GetBool(o, "verify", true);
    return (new OpenWorker(env, info.This().As<Napi::Function>(), std::move(path), verify))->QueueAndGetPromise();
  }

  // Runs op now (the sync twin: JS thread, one slot) or queues it on the pool (async: returns a Promise).
  template <typename Op>
  static Napi::Value Call(Napi::Env env, const StatePtr& st, bool async, Op op) {
    if (async) return (new IndexWorker<Op>(env, st, std::move(op)))->QueueAndGetPromise();
    Check(env, op.Run(*st->index, 1, nullptr));
    return op.Resolve(env);
  }

  Napi::Value InsertCall(const Napi::CallbackInfo& info, bool async) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    const U64View ids = GetU64Array(env, info[0], "ids");
    const U64View fps = GetU64Array(env, info[1], "fingerprints");
    if (ids.size != fps.size) ThrowRangeError(env, "ids and fingerprints must have the same length");
    return Call(env, st, async, InsertOp{{ids, {}}, {fps, {}}});
  }
  Napi::Value Insert(const Napi::CallbackInfo& info) { return InsertCall(info, false); }
  Napi::Value InsertAsync(const Napi::CallbackInfo& info) { return InsertCall(info, true); }

  Napi::Value RemoveCall(const Napi::CallbackInfo& info, bool async) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    return Call(env, st, async, RemoveOp{{GetU64Array(env, info[0], "ids"), {}}});
  }
  Napi::Value Remove(const Napi::CallbackInfo& info) { return RemoveCall(info, false); }
  Napi::Value RemoveAsync(const Napi::CallbackInfo& info) { return RemoveCall(info, true); }

  Napi::Value Has(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    return Napi::Boolean::New(env, st->index->Contains(ToUint64(env, info[0], "id")));
  }

  Napi::Value FindFirst(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    uint64_t id = 0;
    if (!st->index->FindFirst(ToUint64(env, info[0], "fingerprint"), &id)) return env.Null();
    return Napi::BigInt::New(env, id);
  }

  Napi::Value FindAll(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    std::vector<uint64_t> ids;
    st->index->FindAll(ToUint64(env, info[0], "fingerprint"), &ids);
    return NewBigUint64Array(env, std::move(ids));
  }

  template <typename Op>
  Napi::Value Many(const Napi::CallbackInfo& info, bool async) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    Op op;
    op.q.view = GetU64Array(env, info[0], "fingerprints");
    return Call(env, st, async, std::move(op));
  }
  Napi::Value FindFirstMany(const Napi::CallbackInfo& info) { return Many<FindFirstManyOp>(info, true); }
  Napi::Value FindFirstManySync(const Napi::CallbackInfo& info) { return Many<FindFirstManyOp>(info, false); }
  Napi::Value FindAllMany(const Napi::CallbackInfo& info) { return Many<FindAllManyOp>(info, true); }
  Napi::Value FindAllManySync(const Napi::CallbackInfo& info) { return Many<FindAllManyOp>(info, false); }

  Napi::Value Compact(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Live(env)->index->Compact(1);
    return env.Undefined();
  }

  Napi::Value SaveCall(const Napi::CallbackInfo& info, bool async) {
    Napi::Env env = info.Env();
    StatePtr st = Live(env);
    return Call(env, st, async, SaveOp{PathArg(env, info[0])});
  }
  Napi::Value Save(const Napi::CallbackInfo& info) { return SaveCall(info, true); }
  Napi::Value SaveSync(const Napi::CallbackInfo& info) { return SaveCall(info, false); }

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
    CloseState(&state_);
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
