#include "exact.h"

#include <memory>
#include <mutex>

#include "addon.h"
#include "args.h"
#include "exact/exact_dedup.h"
#include "exact/exact_index.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

struct ExactState : Closable {
  std::mutex mu;
  std::unique_ptr<exact::ExactIndex> index;  // declared first: the dedup points to it
  std::unique_ptr<exact::ExactDedup> dedup;
  bool finished = false, added = false;
};

exact::ExactOptions HashOptions(Napi::Env env, const Napi::Value& v) {
  Napi::Object o = v.IsUndefined() ? Napi::Object::New(env) : OptionsObject(env, v, "options");
  exact::ExactOptions eo;
  eo.normalize = GetBool(o, "normalize", false);
  ReadTextOptions(o, &eo.text, false);  // "normalize" is exact's own flag here (Unicode forms: lib/exact)
  Status s = ValidateTextOptions(eo.text);
  if (!s.ok()) ThrowRangeError(env, s.message());
  return eo;
}

// valid?: Uint8Array, one byte a document (0: a bad line)
void ReadValid(Napi::Env env, const Napi::Value& v, size_t n, std::vector<uint8_t>* out) {
  if (v.IsUndefined() || v.IsNull()) return;
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) ThrowTypeError(env, "Expected valid to be a Uint8Array");
  Napi::Uint8Array a = v.As<Napi::Uint8Array>();
  if (a.ElementLength() != n) ThrowRangeError(env, "valid must have one entry per document");
  out->assign(a.Data(), a.Data() + a.ElementLength());
}

Status Finished() { return Status(Code::kInvalidArgument, "the exact dedup has finished: no documents can be added"); }

// add and addHashes: the next documents; resolves to their representatives
class AddWorker : public PromiseWorker {
 public:
  AddWorker(Napi::Env env, std::shared_ptr<ExactState> s) : PromiseWorker(env), s_(std::move(s)) {}
  TextBatch texts;                     // add: the texts
  std::vector<exact::Hash128> hashes;  // addHashes: documents hashed before (exactHashes)
  bool by_hash = false;
  std::vector<uint8_t> valid;

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->closed.load()) return Cancelled("exact dedup");
    if (s_->finished) return Finished();
    s_->added = true;
    const uint8_t* v = valid.empty() ? nullptr : valid.data();
    rep_.resize(by_hash ? hashes.size() : texts.size());
    return by_hash ? s_->dedup->AddHashes(hashes.data(), hashes.size(), v, rep_.data())
                   : s_->dedup->Add(texts.docs(), v, stop(), rep_.data());
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
    const auto& m = s_->dedup->index_matches();
    for (const auto& x : m) {
      match_docs_.push_back(x.first);
      match_index_docs_.push_back(double(s_->index->doc(x.second)));
      if (s_->index->has_ids()) match_ids_.emplace_back(s_->index->id(x.second));
    }
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
    r.Set("indexMatched", Napi::Number::New(env, double(stats_.index_matched)));
    // documents found in the index: their numbers, and the indexed documents' numbers (and ids, JSON text)
    const size_t m = match_docs_.size();
    Napi::Object im = Napi::Object::New(env);
    im.Set("docs", Napi::Uint32Array::New(env, m, ToArrayBuffer(env, std::move(match_docs_)), 0));
    im.Set("indexDocs", Napi::Float64Array::New(env, m, ToArrayBuffer(env, std::move(match_index_docs_)), 0));
    if (!match_ids_.empty()) {
      Napi::Array ids = Napi::Array::New(env, match_ids_.size());
      for (size_t i = 0; i < match_ids_.size(); i++) ids.Set(uint32_t(i), Napi::String::New(env, match_ids_[i]));
      im.Set("ids", ids);
    }
    r.Set("indexMatches", im);
    return r;
  }

 private:
  std::shared_ptr<ExactState> s_;
  std::vector<uint32_t> rep_;
  std::vector<uint32_t> match_docs_;
  std::vector<double> match_index_docs_;
  std::vector<std::string> match_ids_;
  exact::ExactStats stats_;
};

class LoadIndexWorker : public PromiseWorker {
 public:
  LoadIndexWorker(Napi::Env env, std::shared_ptr<ExactState> s, std::string path) : PromiseWorker(env), s_(std::move(s)), path_(std::move(path)) {}

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->closed.load()) return Cancelled("exact dedup");
    if (s_->added || s_->index) return Status(Code::kInvalidArgument, "loadIndex comes once, before the first add");
    std::unique_ptr<exact::ExactIndex> ix(new exact::ExactIndex);
    Status st = ix->Load(path_);
    if (!st.ok()) return st;
    s_->index = std::move(ix);
    s_->dedup->SetIndex(s_->index.get());
    return st;
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    r.Set("entries", Napi::Number::New(env, double(s_->index->size())));
    r.Set("documents", Napi::Number::New(env, double(s_->index->documents())));
    r.Set("meta", Napi::String::New(env, s_->index->meta()));
    r.Set("hasIds", Napi::Boolean::New(env, s_->index->has_ids()));
    return r;
  }

 private:
  std::shared_ptr<ExactState> s_;
  std::string path_;
};

class SaveIndexWorker : public PromiseWorker {
 public:
  SaveIndexWorker(Napi::Env env, std::shared_ptr<ExactState> s) : PromiseWorker(env), s_(std::move(s)) {}
  std::string path;
  exact::IndexWrite w;
  TextBatch ids;

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->closed.load()) return Cancelled("exact dedup");
    if (!s_->finished) return Status(Code::kInvalidArgument, "saveIndex comes after finish");
    w.prior = s_->index.get();
    if (w.with_ids) w.ids = ids.docs();
    w.documents = w.first_doc + s_->dedup->stats().documents;
    return s_->dedup->SaveIndex(path, w);
  }
  Napi::Value Resolve(Napi::Env env) override { return env.Undefined(); }

 private:
  std::shared_ptr<ExactState> s_;
};

class ExactDedupObject : public Napi::ObjectWrap<ExactDedupObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ExactDedup",
                       {InstanceMethod("add", &ExactDedupObject::Add), InstanceMethod("finish", &ExactDedupObject::Finish),
                        InstanceMethod("addHashes", &ExactDedupObject::AddHashes),
                        InstanceMethod("loadIndex", &ExactDedupObject::LoadIndex), InstanceMethod("saveIndex", &ExactDedupObject::SaveIndex),
                        InstanceMethod("close", &ExactDedupObject::Close)});
  }

  explicit ExactDedupObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ExactDedupObject>(info) {
    Napi::Env env = info.Env();
    Napi::Object o = info[0].IsUndefined() ? Napi::Object::New(env) : OptionsObject(env, info[0], "options");
    exact::ExactOptions eo = HashOptions(env, o);
    eo.memory_bytes = GetUint64(o, "memory", 0);
    Napi::Value tmp = o.Get("tmp");
    if (!tmp.IsUndefined()) {
      if (!tmp.IsString()) ThrowTypeError(env, "Expected option 'tmp' to be a string");
      eo.tmp_dir = CheckPath(env, tmp.As<Napi::String>().Utf8Value(), "tmp");
    }
    if (eo.memory_bytes > 0 && eo.tmp_dir.empty()) ThrowTypeError(env, "Option 'memory' needs option 'tmp' (the folder of the spill files)");
    state_ = std::make_shared<ExactState>();
    state_->dedup.reset(new exact::ExactDedup(eo));
    if (GetBool(o, "indexOut", false)) state_->dedup->KeepForIndex();
  }

 private:
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto* w = new AddWorker(env, LiveState(env, state_, "exact dedup"));
    std::unique_ptr<AddWorker> guard(w);
    w->texts.Load(env, info[0], "texts");
    ReadValid(env, info[1], w->texts.size(), &w->valid);
    guard.release();
    return w->QueueAndGetPromise();
  }
  // addHashes(hashes: BigUint64Array (high, low per document), valid?: Uint8Array)
  Napi::Value AddHashes(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto* w = new AddWorker(env, LiveState(env, state_, "exact dedup"));
    std::unique_ptr<AddWorker> guard(w);
    w->by_hash = true;
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array)
      ThrowTypeError(env, "Expected hashes to be a BigUint64Array (two values a document)");
    Napi::TypedArray t = info[0].As<Napi::TypedArray>();
    if (t.ElementLength() % 2 != 0) ThrowRangeError(env, "hashes must hold two values a document (high, low)");
    const uint64_t* h = reinterpret_cast<const uint64_t*>(static_cast<const uint8_t*>(t.ArrayBuffer().Data()) + t.ByteOffset());
    w->hashes.resize(t.ElementLength() / 2);
    for (size_t i = 0; i < w->hashes.size(); i++) w->hashes[i] = exact::Hash128{h[2 * i], h[2 * i + 1]};
    ReadValid(env, info[1], w->hashes.size(), &w->valid);
    guard.release();
    return w->QueueAndGetPromise();
  }
  Napi::Value Finish(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return (new FinishWorker(env, LiveState(env, state_, "exact dedup")))->QueueAndGetPromise();
  }
  // loadIndex(path): the index of earlier runs, before the first add
  Napi::Value LoadIndex(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto s = LiveState(env, state_, "exact dedup");
    return (new LoadIndexWorker(env, s, PathArg(env, info[0], "path")))->QueueAndGetPromise();
  }
  // saveIndex(path, { meta: string, firstDoc: number, ids?: texts (one per document of this run) }), after finish
  Napi::Value SaveIndex(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto* w = new SaveIndexWorker(env, LiveState(env, state_, "exact dedup"));
    std::unique_ptr<SaveIndexWorker> guard(w);
    w->path = PathArg(env, info[0], "path");
    Napi::Object o = OptionsObject(env, info[1], "options");
    Napi::Value meta = o.Get("meta");
    if (!meta.IsString()) ThrowTypeError(env, "Expected option 'meta' to be a string");
    w->w.meta = meta.As<Napi::String>().Utf8Value();
    w->w.first_doc = GetUint64(o, "firstDoc", 0);
    Napi::Value ids = o.Get("ids");
    if (!ids.IsUndefined()) {
      w->ids.Load(env, ids, "ids");
      w->w.with_ids = true;
    }
    guard.release();
    return w->QueueAndGetPromise();
  }
  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state_);
    return info.Env().Undefined();
  }

  std::shared_ptr<ExactState> state_;
};

// exactHashes(texts, options) -> Promise<BigUint64Array>: the 128-bit hash of each text (high, low), on the pool
Napi::Value ExactHashes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct Baton {
    TextBatch texts;
    exact::ExactOptions o;
    std::vector<uint64_t> out;
  };
  auto b = std::make_shared<Baton>();
  b->texts.Load(env, info[0], "texts");
  b->o = HashOptions(env, info[1]);
  return QueueFn(env, [b](const std::atomic<bool>* stop) {
    const Docs docs = b->texts.docs();
    std::vector<exact::Hash128> h(docs.n);
    std::vector<std::unique_ptr<Shingler>> scratch;
    Status st = exact::HashDocuments(b->o, docs, h.data(), &scratch, stop);
    b->out.resize(2 * docs.n);
    for (size_t i = 0; i < docs.n; i++) {
      b->out[2 * i] = h[i].hi;
      b->out[2 * i + 1] = h[i].lo;
    }
    return st;
  }, [b](Napi::Env e) { return NewBigUint64Array(e, std::move(b->out)); });
}

}  // namespace

void ExactDedupClass::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("ExactDedup", ExactDedupObject::Define(env));
  exports.Set("exactHashes", Napi::Function::New(env, ExactHashes, "exactHashes"));
}

}  // namespace binding
}  // namespace neardup
