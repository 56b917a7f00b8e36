#include "paragraph_filter.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>

#include "addon.h"
#include "args.h"
#include "filter/onion_hash.h"
#include "filter/paragraph_batch.h"
#include "filter/vertical.h"
#include "parallel/pool.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

struct FilterState : Closable {
  std::mutex mu;
  std::unique_ptr<filter::Deduper> deduper;
  std::unique_ptr<filter::VerticalFilter> vertical;
  // A snapshot of the statistics taken after each operation, so stats() never waits for running work.
  std::mutex snap_mu;
  filter::OnionStats snap;
  uint64_t snap_lines = 0, snap_seen_size = 0, snap_seen_bytes = 0, snap_stages = 0;
  double snap_fp_bound = 0;
  filter::SeenKind snap_kind = filter::SeenKind::kExact;
  // pushVertical's output text is built here and kept (its capacity too) for the next push when the caller
  // passes `into`: a steady stream allocates nothing per push (docs/memory.md).
  std::string text_scratch;

  void Snapshot() {
    std::lock_guard<std::mutex> lock(snap_mu);
    snap = deduper->stats();
    snap_lines = vertical->lines();
    filter::SeenSet& seen = deduper->seen();
    snap_kind = seen.kind();
    snap_seen_size = seen.size();
    snap_seen_bytes = seen.memory_bytes();
    if (snap_kind == filter::SeenKind::kApprox) {
      auto& a = static_cast<filter::ApproxSeenSet&>(seen);
      snap_stages = a.stages();
      snap_fp_bound = a.fp_bound();
    }
  }
};

double GetDouble(const Napi::Object& o, const char* key, double def, double min, double max, bool min_open) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return def;
  if (!v.IsNumber()) ThrowTypeError(o.Env(), std::string("Expected option '") + key + "' to be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(min_open ? d > min : d >= min) || !(d <= max))
    ThrowRangeError(o.Env(), std::string("Option '") + key + "' must be " + (min_open ? "> " : ">= ") +
                                 std::to_string(min) + " and <= " + std::to_string(max) + ", got " +
                                 v.ToString().Utf8Value());
  return d;
}

std::string GetTag(const Napi::Object& o, const char* key, const char* def) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return def;
  if (!v.IsString()) ThrowTypeError(o.Env(), std::string("Expected option '") + key + "' to be a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.empty() || s.find_first_of(" <>/\t\n") != std::string::npos)
    ThrowRangeError(o.Env(), std::string("Option '") + key + "' must be a tag name without spaces or <>/");
  return s;
}

Status ClosedStatus() { return Cancelled("paragraph filter"); }

class Filter : public Napi::ObjectWrap<Filter> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ParagraphFilter",
                       {InstanceMethod("pushVertical", &Filter::PushVertical),
                        InstanceMethod("pushParagraphs", &Filter::PushParagraphs),
                        InstanceMethod("saveSeen", &Filter::SaveSeen), InstanceMethod("loadSeen", &Filter::LoadSeen),
                        InstanceMethod("startSecondPass", &Filter::StartSecondPass),
                        InstanceMethod("addDuplicateNgrams", &Filter::AddDuplicateNgrams),
                        InstanceMethod("stats", &Filter::Stats), InstanceMethod("close", &Filter::Close)});
  }

  explicit Filter(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Filter>(info) {
    Napi::Env env = info.Env();
    Napi::Object o = OptionsObject(env, info[0], "options");
    state_ = std::make_shared<FilterState>();
    filter::OnionOptions op;
    op.n = GetUint32(o, "n", 7, 1, 4096);
    op.hash = static_cast<filter::NgramHashKind>(GetEnum(o, "ngramHash", 0, {"neardup", "onion"}));
    op.trim_bits = GetUint32(o, "trimBits", 64, 1, 64);
    if (op.trim_bits != 64 && op.hash != filter::NgramHashKind::kOnion)
      ThrowRangeError(env, "Option 'trimBits' needs ngramHash: 'onion' (Onion's -T)");
    op.threshold = static_cast<float>(GetDouble(o, "threshold", 0.5, 0, 1, false));
    op.smoothing = GetBool(o, "smoothing", true);
    op.max_stub = GetUint32(o, "maxStub", 20, 0, 0xffffffffu);
    op.within_doc = GetBool(o, "withinDocument", true);
    op.keep_unique_short = GetBool(o, "keepUniqueShort", false);
    const auto kind = static_cast<filter::SeenKind>(GetEnum(o, "seen", 0, {"exact", "approx"}));
    const double fp_rate = GetDouble(o, "fpRate", 0.01, 0, 0.5, true);
    filter::VerticalTags tags;
    tags.doc = GetTag(o, "docTag", "doc");
    tags.par = GetTag(o, "parTag", "p");
    const auto mode = static_cast<filter::OutputMode>(GetEnum(o, "output", 0, {"none", "mark", "strip"}));
    const bool drop_all = GetBool(o, "dropAll", false);
    state_->deduper.reset(new filter::Deduper(op, filter::MakeSeenSet(kind, fp_rate),
                                              drop_all ? filter::DedupPhase::kCollect : filter::DedupPhase::kKeepFirst));
    state_->vertical.reset(new filter::VerticalFilter(state_->deduper.get(), tags, mode));
    state_->vertical->SetExpectedBytes(static_cast<uint64_t>(GetDouble(o, "expectedBytes", 0, 0, 9007199254740991.0, false)));
    state_->Snapshot();
  }

 private:
  std::shared_ptr<FilterState> Live(Napi::Env env) { return LiveState(env, state_, "paragraph filter"); }

  Napi::Value PushVertical(const Napi::CallbackInfo& info);
  Napi::Value PushParagraphs(const Napi::CallbackInfo& info);
  Napi::Value SaveSeen(const Napi::CallbackInfo& info);
  Napi::Value LoadSeen(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value AddDuplicateNgrams(const Napi::CallbackInfo& info);
  // Drop-all: ends the first pass (call when no push is pending); the same input is then pushed again.
  Napi::Value StartSecondPass(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto s = Live(env);
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->deduper->phase() == filter::DedupPhase::kKeepFirst)
      throw CodedError(env, "ERR_NEARDUP_INVALID_ARGUMENT", "startSecondPass needs a filter created with dropAll: true");
    if (!s->deduper->StartDropAllPass())
      throw CodedError(env, "ERR_NEARDUP_INVALID_ARGUMENT", "the second (drop-all) pass has already started");
    s->vertical->Restart();
    s->Snapshot();
    return env.Undefined();
  }
  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state_);  // pending workers keep their own reference
    return info.Env().Undefined();
  }

  std::shared_ptr<FilterState> state_;
};

// Work queued before close() that has not started rejects with ERR_NEARDUP_CANCELLED.
class FilterWorker : public PromiseWorker {
 public:
  FilterWorker(Napi::Env env, std::shared_ptr<FilterState> s) : PromiseWorker(env), s_(std::move(s)) {
    slots_ = parallel::MaxSlots();
  }

 protected:
  Status Run() final {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->closed.load()) return ClosedStatus();
    Status st = RunLocked();
    s_->Snapshot();
    return st;
  }
  virtual Status RunLocked() = 0;
  std::shared_ptr<FilterState> s_;
  size_t slots_ = 1;
};

class VerticalWorker : public FilterWorker {
 public:
  VerticalWorker(Napi::Env env, std::shared_ptr<FilterState> s, Napi::Uint8Array chunk, bool final, Napi::Value into,
                 bool flags)
      : FilterWorker(env, std::move(s)), final_(final), want_flags_(flags) {
    ref_ = Napi::Persistent(chunk.As<Napi::Object>());
    data_ = chunk.Data();
    len_ = chunk.ByteLength();
    if (!into.IsUndefined()) {
      Napi::Uint8Array a = into.As<Napi::Uint8Array>();
      into_ref_ = Napi::Persistent(a.As<Napi::Object>());
      into_ = a.Data();
      into_cap_ = a.ByteLength();
    }
  }

 protected:
  Status RunLocked() override {
    // With `into`: the text is formatted into the state's kept buffer and copied into the caller's array when
    // it fits (else handed back as a new Buffer), so the steady state allocates nothing per push.
    if (into_ != nullptr) {
      out_.text.swap(s_->text_scratch);
      out_.text.clear();
    }
    Status st = s_->vertical->Push(data_, len_, final_, slots_, stop(), &out_);
    if (!want_flags_) std::vector<uint8_t>().swap(out_.flags);
    if (into_ != nullptr) {
      if (out_.text.size() <= into_cap_) {
        if (!out_.text.empty()) std::memcpy(into_, out_.text.data(), out_.text.size());
        into_used_ = out_.text.size();
        fits_ = true;
        out_.text.clear();
        out_.text.swap(s_->text_scratch);
      } else {
        s_->text_scratch.clear();  // a rare oversized push: its text leaves with the result
      }
    }
    return st;
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    const size_t n = out_.flags.size();
    r.Set("flags", n ? Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out_.flags)), 0)
                     : Napi::Uint8Array::New(env, 0));
    if (fits_) {
      Napi::Uint8Array a = into_ref_.Value().As<Napi::Uint8Array>();
      r.Set("text", Napi::Uint8Array::New(env, into_used_, a.ArrayBuffer(), a.ByteOffset()));  // a view of into
    } else {
      r.Set("text", Napi::Buffer<char>::Copy(env, out_.text.data(), out_.text.size()));
    }
    return r;
  }

 private:
  Napi::ObjectReference ref_;
  Napi::ObjectReference into_ref_;
  const uint8_t* data_;
  size_t len_;
  uint8_t* into_ = nullptr;
  size_t into_cap_ = 0, into_used_ = 0;
  bool fits_ = false;
  bool final_;
  bool want_flags_;
  filter::VerticalOutput out_;
};

Napi::Value Filter::PushVertical(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto s = Live(env);
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected first argument to be a Uint8Array (a chunk of vertical text)");
  Napi::Uint8Array chunk = info[0].As<Napi::Uint8Array>();
  const bool final = info[1].IsUndefined() ? false : info[1].ToBoolean().Value();
  if (!final && chunk.ByteLength() > 0 && chunk.Data()[chunk.ByteLength() - 1] != '\n')
    ThrowRangeError(env, "A chunk that is not final must end with a newline (split input at line boundaries)");
  // info[2]: optional { into?: Uint8Array, flags?: boolean } (the text is written into `into` when it fits;
  // flags: false leaves the per-line flags out).
  Napi::Value into = env.Undefined();
  bool flags = true;
  if (info.Length() > 2 && !info[2].IsUndefined()) {
    Napi::Object o = OptionsObject(env, info[2], "options");
    into = o.Get("into");
    if (!into.IsUndefined() &&
        (!into.IsTypedArray() || into.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array))
      ThrowTypeError(env, "Expected option 'into' to be a Uint8Array");
    flags = GetBool(o, "flags", true);
  }
  auto* w = new VerticalWorker(env, s, chunk, final, into, flags);
  return w->QueueAndGetPromise();
}

class ParagraphsWorker : public FilterWorker {
 public:
  ParagraphsWorker(Napi::Env env, std::shared_ptr<FilterState> s, const Napi::Value& texts, const Napi::Value& offs)
      : FilterWorker(env, std::move(s)) {
    batch_.Load(env, texts, "texts");
    if (!offs.IsTypedArray() || offs.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      ThrowTypeError(env, "Expected second argument to be a Uint32Array of document offsets");
    Napi::Uint32Array a = offs.As<Napi::Uint32Array>();
    if (a.ElementLength() < 1) ThrowRangeError(env, "Document offsets need at least one element (0)");
    doc_start_.assign(a.Data(), a.Data() + a.ElementLength());
    if (doc_start_[0] != 0 || doc_start_.back() != batch_.size())
      ThrowRangeError(env, "Document offsets must start at 0 and end at the number of paragraphs");
    for (size_t i = 1; i < doc_start_.size(); i++)
      if (doc_start_[i] < doc_start_[i - 1]) ThrowRangeError(env, "Document offsets must not decrease");
  }

 protected:
  Status RunLocked() override {
    const Docs d = batch_.docs();
    filter::ParagraphBatch b{d.ptr, d.len, d.n, doc_start_.data(), doc_start_.size() - 1};
    return filter::DedupParagraphs(s_->deduper.get(), b, slots_, stop(), &out_);
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    size_t n = out_.dup.size();
    r.Set("dup", Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out_.dup)), 0));
    n = out_.doc_removed.size();
    r.Set("docRemoved", Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out_.doc_removed)), 0));
    n = out_.tokens.size();
    r.Set("tokens", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(out_.tokens)), 0));
    return r;
  }

 private:
  TextBatch batch_;
  std::vector<uint32_t> doc_start_;
  filter::ParagraphBatchResult out_;
};

Napi::Value Filter::PushParagraphs(const Napi::CallbackInfo& info) {
  auto* w = new ParagraphsWorker(info.Env(), Live(info.Env()), info[0], info[1]);
  return w->QueueAndGetPromise();
}

std::string PathArg(const Napi::CallbackInfo& info) {
  if (!info[0].IsString() || info[0].As<Napi::String>().Utf8Value().empty())
    ThrowTypeError(info.Env(), "Expected first argument to be a file path (a non-empty string)");
  return CheckPath(info.Env(), info[0].As<Napi::String>().Utf8Value(), "path");
}

// Onion's -f: raw 64-bit hashes (little-endian, as Onion's hashdup writes them on x86).
class DupNgramsWorker : public FilterWorker {
 public:
  DupNgramsWorker(Napi::Env env, std::shared_ptr<FilterState> s, Napi::Uint8Array bytes)
      : FilterWorker(env, std::move(s)) {
    ref_ = Napi::Persistent(bytes.As<Napi::Object>());
    data_ = bytes.Data();
    len_ = bytes.ByteLength();
  }

 protected:
  Status RunLocked() override {
    filter::Deduper& d = *s_->deduper;
    if (d.stats().documents > 0)
      return Status(Code::kInvalidInput, "duplicate n-grams must be given before the first document");
    std::vector<uint64_t> v(std::min<size_t>(len_ / 8, 1 << 16));
    for (size_t at = 0; at < len_ / 8;) {
      const size_t m = std::min(len_ / 8 - at, v.size());
      for (size_t i = 0; i < m; i++) {
        uint64_t x = 0;
        for (int b = 7; b >= 0; b--) x = (x << 8) | data_[(at + i) * 8 + b];
        v[i] = x;
      }
      d.AddDuplicateNgrams(v.data(), m);
      at += m;
      if (stop()->load()) return Status(Code::kCancelled, "cancelled");
    }
    count_ = d.duplicate_ngrams();
    return Status::Ok();
  }
  Napi::Value Resolve(Napi::Env env) override { return Napi::Number::New(env, static_cast<double>(count_)); }

 private:
  Napi::ObjectReference ref_;
  const uint8_t* data_;
  size_t len_;
  uint64_t count_ = 0;
};

Napi::Value Filter::AddDuplicateNgrams(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto s = Live(env);
  if (s->deduper->options().hash != filter::NgramHashKind::kOnion)
    throw CodedError(env, "ERR_NEARDUP_INVALID_ARGUMENT", "addDuplicateNgrams needs a filter created with ngramHash: 'onion'");
  if (s->deduper->phase() != filter::DedupPhase::kKeepFirst)
    throw CodedError(env, "ERR_NEARDUP_INVALID_ARGUMENT", "addDuplicateNgrams cannot be combined with dropAll");
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected first argument to be a Uint8Array of 64-bit hashes");
  Napi::Uint8Array b = info[0].As<Napi::Uint8Array>();
  if (b.ByteLength() % 8 != 0)
    ThrowRangeError(env, "Duplicate n-gram hashes are 8 bytes each: got " + std::to_string(b.ByteLength()) + " bytes");
  auto* w = new DupNgramsWorker(env, s, b);
  return w->QueueAndGetPromise();
}

class SaveWorker : public FilterWorker {
 public:
  SaveWorker(Napi::Env env, std::shared_ptr<FilterState> s, std::string path)
      : FilterWorker(env, std::move(s)), path_(std::move(path)) {}

 protected:
  Status RunLocked() override { return filter::SaveSeenSet(s_->deduper->seen(), s_->deduper->options().n, path_); }
  Napi::Value Resolve(Napi::Env env) override { return env.Undefined(); }

 private:
  std::string path_;
};

class LoadWorker : public FilterWorker {
 public:
  LoadWorker(Napi::Env env, std::shared_ptr<FilterState> s, std::string path)
      : FilterWorker(env, std::move(s)), path_(std::move(path)) {}

 protected:
  Status RunLocked() override {
    // Loading replaces the seen set: after a push it would silently forget what those documents added.
    const uint64_t docs = s_->deduper->stats().documents, seen = s_->deduper->seen().size();
    if (docs > 0 || seen > 0)
      return Status(Code::kInvalidInput, "loadSeen('" + path_ + "') must come before the first push: this filter has already seen " +
                                             std::to_string(docs) + " documents (" + std::to_string(seen) +
                                             " n-grams) that loading would forget; load into a new ParagraphFilter");
    std::unique_ptr<filter::SeenSet> set;
    uint32_t n = 0;
    Status st = filter::LoadSeenSet(path_, &set, &n);
    if (!st.ok()) return st;
    const uint32_t want = s_->deduper->options().n;
    if (n != want)
      return Status(Code::kInvalidInput, "'" + path_ + "' holds " + std::to_string(n) +
                                             "-grams but this filter uses n = " + std::to_string(want));
    kind_ = set->kind();
    size_ = set->size();  // here, under the lock: Resolve runs while later calls may be using the set
    s_->deduper->ReplaceSeen(std::move(set));
    return Status::Ok();
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    r.Set("kind", kind_ == filter::SeenKind::kApprox ? "approx" : "exact");
    r.Set("size", Napi::Number::New(env, static_cast<double>(size_)));
    return r;
  }

 private:
  std::string path_;
  filter::SeenKind kind_ = filter::SeenKind::kExact;
  uint64_t size_ = 0;
};

Napi::Value Filter::SaveSeen(const Napi::CallbackInfo& info) {
  auto s = Live(info.Env());
  if (s->deduper->options().hash != filter::NgramHashKind::kNeardup)
    throw CodedError(info.Env(), "ERR_NEARDUP_INVALID_ARGUMENT", "saveSeen is not available with ngramHash: 'onion'");
  auto* w = new SaveWorker(info.Env(), s, PathArg(info));
  return w->QueueAndGetPromise();
}

Napi::Value Filter::LoadSeen(const Napi::CallbackInfo& info) {
  auto s = Live(info.Env());
  if (s->deduper->options().hash != filter::NgramHashKind::kNeardup)
    throw CodedError(info.Env(), "ERR_NEARDUP_INVALID_ARGUMENT", "loadSeen is not available with ngramHash: 'onion'");
  auto* w = new LoadWorker(info.Env(), s, PathArg(info));
  return w->QueueAndGetPromise();
}

// Statistics as of the last finished operation.
Napi::Value Filter::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto s = Live(env);
  std::lock_guard<std::mutex> lock(s->snap_mu);
  const filter::OnionStats& st = s->snap;
  Napi::Object r = Napi::Object::New(env);
  auto num = [&](const char* k, double v) { r.Set(k, Napi::Number::New(env, v)); };
  num("documents", static_cast<double>(st.documents));
  num("removedDocuments", static_cast<double>(st.removed_documents));
  num("paragraphs", static_cast<double>(st.paragraphs));
  num("duplicateParagraphs", static_cast<double>(st.duplicate_paragraphs));
  num("tokens", static_cast<double>(st.tokens));
  num("removedTokens", static_cast<double>(st.removed_tokens));
  num("lines", static_cast<double>(s->snap_lines));
  r.Set("seenKind", s->snap_kind == filter::SeenKind::kApprox ? "approx" : "exact");
  num("seenSize", static_cast<double>(s->snap_seen_size));
  num("seenBytes", static_cast<double>(s->snap_seen_bytes));
  if (s->snap_kind == filter::SeenKind::kApprox) {
    num("seenStages", static_cast<double>(s->snap_stages));
    num("fpBound", s->snap_fp_bound);
  }
  return r;
}

// Onion's hashgen: a stream of vertical text in, n-gram hashes split into `files` ranges out.
struct HashgenState : Closable {
  std::mutex mu;
  std::unique_ptr<filter::onion::Hashgen> gen;
  uint32_t files = 10;
};

class HashgenWorker : public PromiseWorker {
 public:
  HashgenWorker(Napi::Env env, std::shared_ptr<HashgenState> s, Napi::Uint8Array chunk)
      : PromiseWorker(env), s_(std::move(s)) {
    ref_ = Napi::Persistent(chunk.As<Napi::Object>());
    data_ = chunk.Data();
    len_ = chunk.ByteLength();
  }

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (s_->closed.load()) return Cancelled("hashgen");
    out_.resize(s_->files);
    s_->gen->Push(data_, len_, &out_);
    return Status::Ok();
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Array a = Napi::Array::New(env, out_.size());
    for (size_t i = 0; i < out_.size(); i++) {
      const size_t n = out_[i].size();
      a.Set(static_cast<uint32_t>(i), Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out_[i])), 0));
    }
    return a;
  }

 private:
  std::shared_ptr<HashgenState> s_;
  Napi::ObjectReference ref_;
  const uint8_t* data_;
  size_t len_;
  std::vector<std::vector<uint8_t>> out_;
};

class Hashgen : public Napi::ObjectWrap<Hashgen> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "OnionHashgen",
                       {InstanceMethod("push", &Hashgen::Push), InstanceMethod("close", &Hashgen::Close)});
  }
  explicit Hashgen(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Hashgen>(info) {
    Napi::Object o = OptionsObject(info.Env(), info[0], "options");
    state_ = std::make_shared<HashgenState>();
    state_->files = GetUint32(o, "files", 10, 1, 1u << 20);
    state_->gen.reset(new filter::onion::Hashgen(GetUint32(o, "n", 7, 1, 4096), state_->files));
  }

 private:
  // push(chunk): a chunk ending at a line boundary (the last may not); resolves to one Uint8Array of
  // little-endian u64 hashes per output file.
  Napi::Value Push(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto s = LiveState(env, state_, "hashgen");
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      ThrowTypeError(env, "Expected first argument to be a Uint8Array (a chunk of vertical text)");
    auto* w = new HashgenWorker(env, s, info[0].As<Napi::Uint8Array>());
    return w->QueueAndGetPromise();
  }
  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state_);
    return info.Env().Undefined();
  }
  std::shared_ptr<HashgenState> state_;
};

// Onion's hashdup on one file: the values occurring more than once, each once, in ascending order.
class HashdupWorker : public PromiseWorker {
 public:
  HashdupWorker(Napi::Env env, Napi::Uint8Array bytes) : PromiseWorker(env) {
    ref_ = Napi::Persistent(bytes.As<Napi::Object>());
    data_ = bytes.Data();
    len_ = bytes.ByteLength();
  }

 protected:
  Status Run() override {
    std::vector<uint64_t> v(len_ / 8);
    for (size_t i = 0; i < v.size(); i++) {
      uint64_t x = 0;
      for (int b = 7; b >= 0; b--) x = (x << 8) | data_[i * 8 + b];
      v[i] = x;
    }
    std::vector<uint64_t> d;
    filter::onion::DuplicateHashes(v.data(), v.size(), &d);
    out_.resize(d.size() * 8);
    for (size_t i = 0; i < d.size(); i++)
      for (int b = 0; b < 8; b++) out_[i * 8 + b] = static_cast<uint8_t>(d[i] >> (8 * b));
    return Status::Ok();
  }
  Napi::Value Resolve(Napi::Env env) override {
    const size_t n = out_.size();
    return Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out_)), 0);
  }

 private:
  Napi::ObjectReference ref_;
  const uint8_t* data_;
  size_t len_;
  std::vector<uint8_t> out_;
};

Napi::Value OnionDuplicateHashes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected first argument to be a Uint8Array of 64-bit hashes");
  Napi::Uint8Array b = info[0].As<Napi::Uint8Array>();
  if (b.ByteLength() % 8 != 0)
    ThrowRangeError(env, "n-gram hashes are 8 bytes each: got " + std::to_string(b.ByteLength()) + " bytes");
  auto* w = new HashdupWorker(env, b);
  return w->QueueAndGetPromise();
}

}  // namespace

void ParagraphFilter::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("ParagraphFilter", Filter::Define(env));
  exports.Set("OnionHashgen", Hashgen::Define(env));
  exports.Set("onionDuplicateHashes", Napi::Function::New(env, OnionDuplicateHashes, "onionDuplicateHashes"));
}

}  // namespace binding
}  // namespace neardup
