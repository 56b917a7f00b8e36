#include "lsh_dedup.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "addon.h"
#include "args.h"
#include "lsh_index.h"
#include "minhash/lsh_dedup.h"
#include "minhash/lsh_dedup_index.h"
#include "minhash/pair_verify.h"
#include "parallel/pool.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

// The session behind a JS object (Closable: close() returns at once; a running add() or finish() keeps the
// session, and its temporary files, until it returns).
// With an index (against one, or written after the run): `hook` (lsh_dedup_index.h); `prior` is the LshIndex
// read, pinned (unchangeable) while the session lives and read-locked while a worker runs.
//
// add() calls run one at a time in call order (documents are numbered by it), but each is queued at once: the
// next batch waits on its ticket, not on the JavaScript thread, so the pool never idles between batches. An
// add() that fails leaves the session failed: later add() and finish() calls report that error.
struct DedupState : Closable {
  std::mutex mu;
  std::unique_ptr<lsh::Dedup> dedup;
  bool finished = false;  // under mu
  Status failed;          // under mu
  uint64_t next_ticket = 0;  // JavaScript thread
  std::mutex order_mu;
  std::condition_variable order_cv;
  uint64_t turn = 0;  // under order_mu: the ticket whose add() runs next
  std::shared_ptr<LshIndexState> prior;
  std::unique_ptr<lsh::IndexHook> hook;
  ~DedupState() {
    dedup.reset();
    hook.reset();
    if (prior) prior->pins--;
  }
  std::shared_lock<std::shared_mutex> LockPrior() {
    return prior ? std::shared_lock<std::shared_mutex>(prior->mu) : std::shared_lock<std::shared_mutex>();
  }
};

Status Unavailable(const DedupState& st) {
  if (!st.failed.ok()) return Status(st.failed.code(), "an earlier add() failed: " + st.failed.message());
  return st.closed.load() ? Cancelled("dedup session") : Status(Code::kCancelled, "the dedup session is finished");
}

// close(): wakes add()s waiting for their turn (they return Cancelled).
void CloseDedup(std::shared_ptr<DedupState>* st) {
  if (!*st) return;
  std::shared_ptr<DedupState> s = *st;
  CloseState(st);
  { std::lock_guard<std::mutex> lock(s->order_mu); }
  s->order_cv.notify_all();
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
  TextBatch texts;
  std::vector<uint8_t> valid;
  uint64_t ticket = 0;
  // string keys of the batch (an index with string keys)
  std::string key_bytes;
  std::vector<uint64_t> key_off{0};
  bool has_keys = false;
  // addKeys(): documents by their band keys (and signatures, when estimates are needed); texts when verifying.
  bool keyed = false;
  std::vector<uint64_t> keys;
  std::vector<uint8_t> sigs;
  size_t count = 0;

 protected:
  Status Run() override {
    {
      // Workers start in queue order (libuv's queue is FIFO), so the add() whose turn it is has started or
      // finished: waiting cannot deadlock.
      std::unique_lock<std::mutex> lock(st_->order_mu);
      st_->order_cv.wait(lock, [&] { return st_->turn == ticket || st_->closed.load() || stop()->load(); });
      if (st_->turn != ticket) return Cancelled("dedup session");  // closed before its turn
    }
    Status s;
    {
      std::lock_guard<std::mutex> lock(st_->mu);
      if (st_->closed.load() || st_->finished || !st_->failed.ok()) {
        s = Unavailable(*st_);
      } else {
        auto prior = st_->LockPrior();
        if (has_keys) {
          lsh::KeyBatch kb;
          kb.type = lsh::KeyType::kString;
          kb.n = key_off.size() - 1;
          kb.bytes = reinterpret_cast<const uint8_t*>(key_bytes.data());
          kb.offsets = key_off.data();
          s = st_->hook->AddKeys(kb);
        }
        const uint8_t* v = valid.empty() ? nullptr : valid.data();
        if (s.ok() && keyed) {
          const Docs d = texts.docs();
          s = st_->dedup->AddKeys(keys.data(), sigs.empty() ? nullptr : sigs.data(), count, v,
                                  texts.size() ? &d : nullptr, slots_, stop());
        } else if (s.ok()) {
          s = st_->dedup->Add(texts.docs(), v, slots_, stop());
        }
        if (!s.ok()) st_->failed = s;
      }
    }
    {
      std::lock_guard<std::mutex> lock(st_->order_mu);
      st_->turn++;
    }
    st_->order_cv.notify_all();
    return s;
  }
  Napi::Value Resolve(Napi::Env env) override { return env.Undefined(); }

 private:
  std::shared_ptr<DedupState> st_;
  size_t slots_;
};

// sign(): signatures and band keys of a batch, nothing added (the signatures stage).
class SignWorker : public PromiseWorker {
 public:
  SignWorker(Napi::Env env, std::shared_ptr<DedupState> st) : PromiseWorker(env), st_(std::move(st)), slots_(parallel::MaxSlots()) {}
  TextBatch texts;
  std::vector<uint8_t> valid;
  bool crcs = false;

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (st_->closed.load() || st_->finished || !st_->failed.ok()) return Unavailable(*st_);
    return st_->dedup->Sign(texts.docs(), valid.empty() ? nullptr : valid.data(), slots_, stop(), &sigs_, &keys_,
                            crcs ? &crcs_ : nullptr);
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    const size_t nv = sigs_.size() / 4, nk = keys_.size();
    o.Set("signatures", Napi::Uint32Array::New(env, nv, ToArrayBuffer(env, std::move(sigs_)), 0));
    o.Set("keys", Napi::TypedArrayOf<uint64_t>::New(env, nk, ToArrayBuffer(env, std::move(keys_)), 0, napi_biguint64_array));
    if (crcs) {
      const size_t nc = crcs_.size();
      o.Set("crcs", Napi::Uint32Array::New(env, nc, ToArrayBuffer(env, std::move(crcs_)), 0));
    }
    return o;
  }

 private:
  std::shared_ptr<DedupState> st_;
  size_t slots_;
  std::vector<uint8_t> sigs_;
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> crcs_;
};

class FinishWorker : public PromiseWorker {
 public:
  FinishWorker(Napi::Env env, std::shared_ptr<DedupState> st) : PromiseWorker(env), st_(std::move(st)), slots_(parallel::MaxSlots()) {}

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (st_->closed.load() || st_->finished || !st_->failed.ok()) return Unavailable(*st_);
    st_->finished = true;
    auto prior = st_->LockPrior();
    Status s = st_->dedup->Finish(slots_, stop(), &r_);
    if (s.ok() && st_->hook) s = IndexResults();
    // temporary files go now, unless an index is still to be written or the pairs file read (saveIndex, or close)
    if (!s.ok() || ((!st_->hook || !st_->hook->options().write) && r_.pairs_path.empty())) st_->dedup.reset();
    return s;
  }
  // Documents dropped for an indexed one, and pairs with indexed ones, with the entries' keys.
  Status IndexResults() {
    const lsh::IndexHook& h = *st_->hook;
    const lsh::Index* prior = h.options().prior;
    const lsh::KeyType kt = h.options().key_type;
    match_keys_ = KeyList(kt);
    pair_keys_ = KeyList(kt);
    for (const auto& m : h.matches()) {
      match_docs_.push_back(m.first);
      Status s = match_keys_.Add(*prior, m.second);
      if (!s.ok()) return s;
    }
    for (const auto& p : h.pairs()) {
      pair_docs_.push_back(p.doc);
      pair_est_.push_back(p.estimate);
      if (h.options().verify == lsh::Verify::kExact) pair_exact_.push_back(p.exact);
      Status s = pair_keys_.Add(*prior, p.entry);
      if (!s.ok()) return s;
    }
    return Status::Ok();
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
    o.Set("pairRuns", Napi::Number::New(env, double(r_.pair_runs)));
    if (!r_.pairs_path.empty()) o.Set("pairsFile", Napi::String::New(env, r_.pairs_path));
    if (st_->hook) {
      Napi::Object m = Napi::Object::New(env);
      m.Set("docs", u32(std::move(match_docs_)));
      m.Set("keys", match_keys_.ToJs(env));
      o.Set("indexMatches", m);
      Napi::Object p = Napi::Object::New(env);
      p.Set("docs", u32(std::move(pair_docs_)));
      p.Set("keys", pair_keys_.ToJs(env));
      p.Set("estimate", f32(std::move(pair_est_)));
      p.Set("exact", f32(std::move(pair_exact_)));
      o.Set("indexPairs", p);
    }
    o.Set("groupDocs", u32(std::move(r_.group_docs)));
    const size_t nc = r_.candidates.size();
    o.Set("candidates", Napi::TypedArrayOf<uint64_t>::New(env, nc, ToArrayBuffer(env, std::move(r_.candidates)), 0, napi_biguint64_array));
    const size_t ng = r_.group_ends.size();
    o.Set("groupEnds", Napi::TypedArrayOf<uint64_t>::New(env, ng, ToArrayBuffer(env, std::move(r_.group_ends)), 0, napi_biguint64_array));
    return o;
  }

 private:
  std::shared_ptr<DedupState> st_;
  size_t slots_;
  lsh::DedupResult r_;
  std::vector<uint32_t> match_docs_, pair_docs_;
  std::vector<float> pair_est_, pair_exact_;
  KeyList match_keys_, pair_keys_;
};

// Kept documents whose keys are taken (before saveIndex, so that the caller can name their lines).
class KeyConflictsWorker : public PromiseWorker {
 public:
  KeyConflictsWorker(Napi::Env env, std::shared_ptr<DedupState> st, size_t max) : PromiseWorker(env), st_(std::move(st)), max_(max) {}

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (st_->closed.load()) return Cancelled("dedup session");
    if (!st_->finished || !st_->dedup) return Status(Code::kCancelled, "keyConflicts: after finish(), before saveIndex()");
    auto prior = st_->LockPrior();
    return st_->hook->KeyConflicts(max_, &out_);
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Array a = Napi::Array::New(env, out_.size());
    for (size_t i = 0; i < out_.size(); i++) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("doc", double(out_[i].doc));
      o.Set("other", out_[i].other == UINT64_MAX ? -1.0 : double(out_[i].other));
      o.Set("key", out_[i].key);
      a.Set(uint32_t(i), o);
    }
    return a;
  }

 private:
  std::shared_ptr<DedupState> st_;
  size_t max_;
  std::vector<lsh::KeyConflict> out_;
};

class SaveIndexWorker : public PromiseWorker {
 public:
  SaveIndexWorker(Napi::Env env, std::shared_ptr<DedupState> st, std::string path, std::string meta)
      : PromiseWorker(env), st_(std::move(st)), path_(std::move(path)), meta_(std::move(meta)), slots_(parallel::MaxSlots()) {}

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (st_->closed.load()) return Cancelled("dedup session");
    if (!st_->finished || !st_->dedup) return Status(Code::kCancelled, "saveIndex: once, after finish()");
    auto prior = st_->LockPrior();
    Status s = st_->dedup->WriteIndex(path_, meta_, slots_, stop(), &entries_);
    st_->dedup.reset();  // temporary files go now
    return s;
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("entries", double(entries_));
    return o;
  }

 private:
  std::shared_ptr<DedupState> st_;
  std::string path_, meta_;
  size_t slots_;
  uint64_t entries_ = 0;
};

// The session options of new LshDedup({...}) and verifyPairs({...}) (the index aside).
lsh::DedupOptions ParseDedupOptions(Napi::Env env, const Napi::Object& o) {
  lsh::DedupOptions d;
  d.params.profile = static_cast<lsh::Profile>(GetEnum(o, "profile", 0, {"fast", "datasketch", "doubri"}));
  d.params.value_bytes = 4;
  d.params.num_perm = GetUint32(o, "numPerm", 128, 1, 1 << 16);
  d.params.b = GetUint32(o, "b", 0, 1, 1 << 16);
  d.params.r = GetUint32(o, "r", 0, 1, 1 << 16);
  const minhash::Profile mp = d.params.profile == lsh::Profile::kDatasketch ? minhash::Profile::kDatasketch
                              : d.params.profile == lsh::Profile::kDoubri  ? minhash::Profile::kDoubriV1
                                                                            : minhash::Profile::kFast;
  d.minhash = minhash::DefaultConfig(mp);
  d.minhash.num_perm = d.params.num_perm;
  d.minhash.seed = GetUint64(o, "seed", d.minhash.seed);
  ReadTextOptions(o, &d.minhash.text);
  Napi::Value t = o.Get("threshold");
  if (!t.IsUndefined()) {
    if (!t.IsNumber()) ThrowTypeError(env, "Expected option 'threshold' to be a number");
    d.threshold = t.As<Napi::Number>().DoubleValue();
    if (!(d.threshold >= 0 && d.threshold <= 1)) ThrowRangeError(env, "threshold must be from 0 to 1");
  }
  d.verify = static_cast<lsh::Verify>(GetEnum(o, "verify", 0, {"none", "estimate", "exact"}));
  d.clustering = static_cast<lsh::Clustering>(GetEnum(o, "clustering", 0, {"kept", "components"}));
  d.spill_texts = GetBool(o, "spillTexts", true);
  d.want_pairs = GetBool(o, "pairs", false);
  d.want_groups = GetBool(o, "groups", false);
  d.want_estimates = GetBool(o, "estimates", true);
  d.want_candidates = GetBool(o, "candidates", false);
  d.max_pairs = GetUint64(o, "maxPairs", UINT64_MAX);
  d.pairs_file = GetBool(o, "pairsFile", false);
  d.pair_buffer = GetUint64(o, "pairBuffer", 0);
  d.memory_bytes = GetUint64(o, "memory", 0);
  Napi::Value tmp = o.Get("tmp");
  if (!tmp.IsUndefined()) {
    if (!tmp.IsString()) ThrowTypeError(env, "Expected option 'tmp' to be a string");
    d.tmp_dir = CheckPath(env, tmp.As<Napi::String>().Utf8Value(), "tmp");
  }
  Status s = lsh::Validate(d.params);
  if (s.ok()) s = minhash::ValidateConfig(d.minhash);
  if (!s.ok()) ThrowRangeError(env, s.message());
  return d;
}

// verifyPairs(options & { textSkip, field }, candidates: BigUint64Array[],
//             texts: [{ first, n, locs, locsCrc, block, texts, textsBytes, inputs: [{ path, first, count, inPlace }] }] | null,
//             signatures: [{ first, data: Uint32Array }] | null): the staged dedup's verify stage. The candidate
// lists (a << 32 | b) are merged, each pair once, and decided as a session decides them (DecidePairs): texts
// read in place (lsh::StageDocs: the lines of plain inputs, or the signatures stage's texts files), checked text
// by text. Resolves to the kept pairs
// { pairA, pairB, pairEstimate (with signatures), pairExact (verify 'exact') } and counts.
class VerifyPairsWorker : public PromiseWorker {
 public:
  VerifyPairsWorker(Napi::Env env, lsh::DedupOptions o) : PromiseWorker(env), o_(std::move(o)), slots_(parallel::MaxSlots()) {}
  std::vector<uint64_t> cand;
  std::vector<lsh::StageShard> texts;
  uint64_t text_skip = 64;
  jsonl::FieldPath field;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> sigs;  // first document, signatures

 protected:
  Status Run() override {
    std::sort(cand.begin(), cand.end());
    cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
    lsh::ShardSignatures ss(o_.params.signature_bytes());
    for (const auto& sh : sigs) ss.Add(sh.first, sh.second.size() / o_.params.signature_bytes(), sh.second.data());
    for (uint64_t c : cand) {
      const uint32_t a = static_cast<uint32_t>(c >> 32), b = static_cast<uint32_t>(c);
      if (a >= b) return Status(Code::kInvalidArgument, "a candidate pair is not (a, b) with a < b");
      if (!sigs.empty() && (!ss.Covers(a) || !ss.Covers(b)))
        return Status(Code::kInvalidArgument, "document " + std::to_string(!ss.Covers(a) ? a : b) + " has no signature");
    }
    lsh::StageDocs st;
    if (o_.verify == lsh::Verify::kExact) {
      // only the records of the pairs' documents are read
      Status s = st.Open(std::move(texts), lsh::PairDocuments(cand), text_skip, field);
      if (!s.ok()) return s;
    }
    lsh::PairDecisions dec;
    Status s = lsh::DecidePairs(o_.params, o_.minhash.text, o_.verify, o_.threshold, o_.memory_bytes, cand,
                                sigs.empty() ? nullptr : &ss, &st, slots_, stop(), &dec, &stats_);
    if (!s.ok()) return s;
    for (size_t i = 0; i < cand.size(); i++) {
      if (!dec.keep[i]) continue;
      a_.push_back(static_cast<uint32_t>(cand[i] >> 32));
      b_.push_back(static_cast<uint32_t>(cand[i]));
      if (!dec.est.empty()) est_.push_back(dec.est[i]);
      if (o_.verify == lsh::Verify::kExact) exact_.push_back(dec.exact[i]);
    }
    text_bytes_ = st.bytes_read();
    return Status::Ok();
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    const size_t n = a_.size(), ne = est_.size(), nx = exact_.size();
    o.Set("pairA", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(a_)), 0));
    o.Set("pairB", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(b_)), 0));
    o.Set("pairEstimate", Napi::Float32Array::New(env, ne, ToArrayBuffer(env, std::move(est_)), 0));
    o.Set("pairExact", Napi::Float32Array::New(env, nx, ToArrayBuffer(env, std::move(exact_)), 0));
    o.Set("candidatePairs", double(cand.size()));
    o.Set("textBytes", double(text_bytes_));
    o.Set("verifyDocs", double(stats_.docs));
    o.Set("verifySets", double(stats_.sets));
    return o;
  }

 private:
  lsh::DedupOptions o_;
  size_t slots_;
  std::vector<uint32_t> a_, b_;
  std::vector<float> est_, exact_;
  uint64_t text_bytes_ = 0;
  lsh::VerifyStats stats_;
};

Napi::Value VerifyPairs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  lsh::DedupOptions d = ParseDedupOptions(env, OptionsObject(env, info[0], "options"));
  auto w = std::make_unique<VerifyPairsWorker>(env, d);
  if (!info[1].IsArray()) ThrowTypeError(env, "Expected candidates to be an array of BigUint64Array");
  Napi::Array cl = info[1].As<Napi::Array>();
  for (uint32_t i = 0; i < cl.Length(); i++) {
    std::vector<uint64_t> c = CopyTyped<uint64_t>(env, cl.Get(i), napi_biguint64_array, "candidates[i] (BigUint64Array)");
    w->cand.insert(w->cand.end(), c.begin(), c.end());
  }
  if (!info[2].IsUndefined() && !info[2].IsNull()) {
    if (!info[2].IsArray()) ThrowTypeError(env, "Expected texts to be an array");
    Napi::Array ta = info[2].As<Napi::Array>();
    const auto str = [&](const Napi::Object& o, const char* key, const std::string& what) {
      if (!o.Get(key).IsString()) ThrowTypeError(env, "Expected " + what + "." + key + " to be a string");
      return CheckPath(env, o.Get(key).As<Napi::String>().Utf8Value(), what + "." + key);
    };
    for (uint32_t i = 0; i < ta.Length(); i++) {
      Napi::Object t = OptionsObject(env, ta.Get(i), "texts[i]");
      lsh::StageShard f;
      f.first = GetUint64(t, "first", 0);
      f.n = GetUint64(t, "n", 0);
      f.locs = str(t, "locs", "texts[i]");
      f.locs_crc = GetUint32(t, "locsCrc", 0, 0, 0xFFFFFFFFu);
      f.block = GetUint64(t, "block", 1);
      if (f.block == 0) ThrowRangeError(env, "texts[i].block must be at least 1");
      if (!t.Get("texts").IsNull() && !t.Get("texts").IsUndefined()) f.texts = str(t, "texts", "texts[i]");
      f.texts_bytes = GetUint64(t, "textsBytes", 0);
      if (!t.Get("inputs").IsArray()) ThrowTypeError(env, "Expected texts[i].inputs to be an array");
      Napi::Array ia = t.Get("inputs").As<Napi::Array>();
      for (uint32_t k = 0; k < ia.Length(); k++) {
        Napi::Object in = OptionsObject(env, ia.Get(k), "texts[i].inputs[k]");
        lsh::StageInput si;
        si.path = str(in, "path", "texts[i].inputs[k]");
        si.first = GetUint64(in, "first", 0);
        si.count = GetUint64(in, "count", 0);
        si.in_place = GetBool(in, "inPlace", false);
        f.inputs.push_back(std::move(si));
      }
      w->texts.push_back(std::move(f));
    }
    Napi::Object opts = OptionsObject(env, info[0], "options");
    const Status fs = jsonl::ParseFieldPath(opts.Get("field").IsString() ? opts.Get("field").As<Napi::String>().Utf8Value() : "text", &w->field);
    if (!fs.ok()) ThrowRangeError(env, fs.message());
    w->text_skip = GetUint64(OptionsObject(env, info[0], "options"), "textSkip", 64);
  } else if (d.verify == lsh::Verify::kExact) {
    ThrowTypeError(env, "verify 'exact' needs the texts");
  }
  if (!info[3].IsUndefined() && !info[3].IsNull()) {
    if (!info[3].IsArray()) ThrowTypeError(env, "Expected signatures to be an array");
    Napi::Array sa = info[3].As<Napi::Array>();
    uint64_t next = 0;
    for (uint32_t i = 0; i < sa.Length(); i++) {
      Napi::Object t = OptionsObject(env, sa.Get(i), "signatures[i]");
      const uint64_t first = GetUint64(t, "first", 0);
      std::vector<uint32_t> v = CopyTyped<uint32_t>(env, t.Get("data"), napi_uint32_array, "signatures[i].data (Uint32Array)");
      if (v.size() % d.params.num_perm) ThrowRangeError(env, "signatures[i].data must hold numPerm values per document");
      if (i > 0 && first < next) ThrowRangeError(env, "signatures: document ranges must be ascending");
      next = first + v.size() / d.params.num_perm;
      std::vector<uint8_t> bytes(v.size() * 4);
      std::memcpy(bytes.data(), v.data(), bytes.size());
      w->sigs.emplace_back(first, std::move(bytes));
    }
  } else if (d.verify == lsh::Verify::kEstimate) {
    ThrowTypeError(env, "verify 'estimate' needs the signatures");
  }
  return w.release()->QueueAndGetPromise();
}

class LshDedupWrap : public Napi::ObjectWrap<LshDedupWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "LshDedup",
                       {InstanceMethod("add", &LshDedupWrap::Add), InstanceMethod("addKeys", &LshDedupWrap::AddKeys),
                        InstanceMethod("sign", &LshDedupWrap::Sign), InstanceMethod("finish", &LshDedupWrap::Finish),
                        InstanceMethod("keyConflicts", &LshDedupWrap::KeyConflicts),
                        InstanceMethod("saveIndex", &LshDedupWrap::SaveIndex), InstanceMethod("close", &LshDedupWrap::Close)});
  }

  // new LshDedup({ profile, numPerm, seed, b, r, threshold, verify: 'none'|'estimate'|'exact',
  //                clustering: 'kept'|'components', pairs, maxPairs, memory, spillTexts, tmp, ...shingle options })
  // Documents are signed with the MinHash profile matching `profile` (fast, datasketch, doubri-v1), numPerm
  // values and the seed, of the shingles the options give (over the profile's own defaults); exact
  // verification uses the same shingles.
  explicit LshDedupWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<LshDedupWrap>(info) {
    Napi::Env env = info.Env();
    Napi::Object o = OptionsObject(env, info[0], "options");
    lsh::DedupOptions d = ParseDedupOptions(env, o);
    Status s;
    b_ = d.params.b;
    num_perm_ = d.params.num_perm;
    st_ = std::make_shared<DedupState>();
    // index: { prior?: LshIndex, write: boolean, keyType: 'int'|'string', keyOffset } (texts: the session's shingle options)
    Napi::Value iv = o.Get("index");
    if (!iv.IsUndefined()) {
      Napi::Object io = OptionsObject(env, iv, "option 'index'");
      lsh::IndexHookOptions h;
      h.params = d.params;
      h.verify = d.verify;
      h.threshold = d.threshold;
      h.tmp_dir = d.tmp_dir;
      h.write = GetBool(io, "write", false);
      h.key_type = static_cast<lsh::KeyType>(GetEnum(io, "keyType", 0, {"int", "string"}));
      h.key_offset = GetUint64(io, "keyOffset", 0);
      h.text = d.minhash.text;
      if (!io.Get("prior").IsUndefined()) {
        st_->prior = LshIndexBinding::FromValue(env, io.Get("prior"));
        st_->prior->pins++;  // no change may start now (one already queued finishes before the first add())
        h.prior = st_->prior->index.get();
      }
      st_->hook = std::make_unique<lsh::IndexHook>(h);
      s = st_->hook->Init();
      if (!s.ok()) {
        if (s.code() == Code::kInvalidArgument) ThrowRangeError(env, s.message());
        throw StatusError(env, s);
      }
      d.index = st_->hook.get();
    }
    st_->dedup = std::make_unique<lsh::Dedup>(d);
    s = st_->dedup->Init();
    if (!s.ok()) {
      if (s.code() == Code::kInvalidArgument) ThrowRangeError(env, s.message());
      throw StatusError(env, s);
    }
  }

 private:
  // add(texts: packed texts or an array of strings/bytes, valid?: Uint8Array): the documents are read in
  // place (strings encoded once) and signed on the pool.
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto* w = new AddWorker(env, LiveState(env, st_, "dedup session"));
    std::unique_ptr<AddWorker> guard(w);
    w->texts.Load(env, info[0], "texts");
    if (!info[1].IsUndefined() && !info[1].IsNull()) {
      w->valid = CopyTyped<uint8_t>(env, info[1], napi_uint8_array, "valid (Uint8Array)");
      if (w->valid.size() != w->texts.size()) ThrowRangeError(env, "valid must have one entry per document");
    }
    if (!info[2].IsUndefined() && !info[2].IsNull()) {  // string keys of the documents
      if (!st_->hook) ThrowTypeError(env, "keys are taken only with an index");
      if (!info[2].IsArray()) ThrowTypeError(env, "Expected keys to be an array of strings");
      Napi::Array a = info[2].As<Napi::Array>();
      if (a.Length() != w->texts.size()) ThrowRangeError(env, "keys must have one entry per document");
      for (uint32_t i = 0; i < a.Length(); i++) {
        Napi::Value k = a.Get(i);
        if (!k.IsString()) ThrowTypeError(env, "Expected keys[" + std::to_string(i) + "] to be a string");
        w->key_bytes += k.As<Napi::String>().Utf8Value();
        w->key_off.push_back(w->key_bytes.size());
      }
      w->has_keys = true;
    }
    w->ticket = st_->next_ticket++;  // the last step that can throw is behind: every ticket gets its turn
    guard.release();
    return w->QueueAndGetPromise();
  }

  // addKeys(keys: BigUint64Array n x b, valid: Uint8Array | null, texts: packed texts | null,
  //         signatures: Uint32Array n x numPerm | null): documents by band keys computed elsewhere.
  Napi::Value AddKeys(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto* w = new AddWorker(env, LiveState(env, st_, "dedup session"));
    std::unique_ptr<AddWorker> guard(w);
    w->keyed = true;
    w->keys = CopyTyped<uint64_t>(env, info[0], napi_biguint64_array, "keys (BigUint64Array)");
    const size_t b = b_;
    if (w->keys.size() % b) ThrowRangeError(env, "keys must hold b keys per document");
    w->count = w->keys.size() / b;
    if (!info[1].IsUndefined() && !info[1].IsNull()) {
      w->valid = CopyTyped<uint8_t>(env, info[1], napi_uint8_array, "valid (Uint8Array)");
      if (w->valid.size() != w->count) ThrowRangeError(env, "valid must have one entry per document");
    }
    if (!info[2].IsUndefined() && !info[2].IsNull()) {
      w->texts.Load(env, info[2], "texts");
      if (w->texts.size() != w->count) ThrowRangeError(env, "texts must have one entry per document");
    }
    if (!info[3].IsUndefined() && !info[3].IsNull()) {
      std::vector<uint32_t> sig = CopyTyped<uint32_t>(env, info[3], napi_uint32_array, "signatures (Uint32Array)");
      if (sig.size() != w->count * num_perm_) ThrowRangeError(env, "signatures must hold numPerm values per document");
      w->sigs.resize(sig.size() * 4);
      std::memcpy(w->sigs.data(), sig.data(), w->sigs.size());
    }
    w->ticket = st_->next_ticket++;
    guard.release();
    return w->QueueAndGetPromise();
  }

  // sign(texts, valid?, crcs?: boolean): { signatures: Uint32Array n x numPerm, keys: BigUint64Array n x b,
  // crcs?: Uint32Array n (each text's CRC-32C) }; adds nothing.
  Napi::Value Sign(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto* w = new SignWorker(env, LiveState(env, st_, "dedup session"));
    std::unique_ptr<SignWorker> guard(w);
    w->texts.Load(env, info[0], "texts");
    if (!info[1].IsUndefined() && !info[1].IsNull()) {
      w->valid = CopyTyped<uint8_t>(env, info[1], napi_uint8_array, "valid (Uint8Array)");
      if (w->valid.size() != w->texts.size()) ThrowRangeError(env, "valid must have one entry per document");
    }
    w->crcs = info[2].IsBoolean() && info[2].As<Napi::Boolean>().Value();
    guard.release();
    return w->QueueAndGetPromise();
  }

  Napi::Value Finish(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return (new FinishWorker(env, LiveState(env, st_, "dedup session")))->QueueAndGetPromise();
  }

  // keyConflicts(max): kept documents whose keys are taken, [{ doc, other (-1: an indexed entry), key }].
  Napi::Value KeyConflicts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = LiveState(env, st_, "dedup session");
    if (!st->hook || !st->hook->options().write) ThrowTypeError(env, "keyConflicts: this session writes no index");
    const uint32_t max = info[0].IsNumber() ? info[0].As<Napi::Number>().Uint32Value() : 10;
    return (new KeyConflictsWorker(env, st, max))->QueueAndGetPromise();
  }

  // saveIndex(path, metadata): after finish(), once.
  Napi::Value SaveIndex(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = LiveState(env, st_, "dedup session");
    if (!st->hook || !st->hook->options().write) ThrowTypeError(env, "saveIndex: this session was made without index: { write: true }");
    if (!info[0].IsString()) ThrowTypeError(env, "Expected path to be a string");
    if (!info[1].IsString()) ThrowTypeError(env, "Expected metadata to be a string");
    std::string path = CheckPath(env, info[0].As<Napi::String>().Utf8Value(), "path");
    return (new SaveIndexWorker(env, st, std::move(path), info[1].As<Napi::String>().Utf8Value()))->QueueAndGetPromise();
  }

  // Returns at once, also while finish() runs (it completes and resolves; the session goes with it).
  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseDedup(&st_);
    return info.Env().Undefined();
  }

  std::shared_ptr<DedupState> st_;
  uint32_t b_ = 1, num_perm_ = 1;
};

}  // namespace

void LshDedupBinding::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("LshDedup", LshDedupWrap::Define(env));
  exports.Set("verifyPairs", Napi::Function::New(env, VerifyPairs, "verifyPairs"));
}

}  // namespace binding
}  // namespace neardup
