#include "posting_index.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "addon.h"
#include "args.h"
#include "parallel/pool.h"
#include "postings/blot.h"
#include "postings/store.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

using postings::BlotOptions;

Napi::Value Queue(Napi::Env env, std::function<Status(const std::atomic<bool>*)> run,
                  std::function<Napi::Value(Napi::Env)> resolve) {
  return QueueFn(env, std::move(run), std::move(resolve));  // addon.h
}

template <typename T>
Napi::Value U32Array(Napi::Env env, std::vector<T>&& v) {
  const size_t n = v.size();
  Napi::ArrayBuffer ab = ToArrayBuffer(env, std::move(v));
  return Napi::Uint32Array::New(env, n, ab, 0);
}

std::vector<uint32_t> U32Arg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    ThrowTypeError(env, std::string("Expected ") + what + " to be a Uint32Array");
  Napi::Uint32Array a = v.As<Napi::Uint32Array>();
  return std::vector<uint32_t>(a.Data(), a.Data() + a.ElementLength());
}

std::string StringArg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsString()) ThrowTypeError(env, std::string("Expected ") + what + " to be a string");
  return v.As<Napi::String>().Utf8Value();
}

BlotOptions ReadBlotOptions(Napi::Env env, const Napi::Value& v) {
  Napi::Object o = OptionsObject(env, v, "blot options");
  BlotOptions b;
  b.profile = GetEnum(o, "profile", 1, {"dupi", "neardup"}) == 0 ? postings::BlotProfile::kDupi
                                                                 : postings::BlotProfile::kNeardup;
  const int def_hash = b.profile == postings::BlotProfile::kDupi ? 0 : 1;
  b.hash = GetEnum(o, "hash", def_hash, {"xor", "ordered"}) == 0 ? postings::WindowHash::kXor
                                                                 : postings::WindowHash::kOrdered;
  b.seq_len = GetUint32(o, "seqLen", 10, 1, 1000);
  b.interleave = GetUint32(o, "interleave", 1, 1, 100);
  if (uint64_t(b.seq_len) * b.interleave > 10000) ThrowRangeError(env, "seqLen * interleave must be at most 10000");
  return b;
}

// Per-document blot results, concatenated after a parallel pass.
struct BlotResult {
  std::vector<uint32_t> blots, doc_offsets, text_begin, text_end, tok_begin, tok_end;
};

void BlotDocs(const Docs& docs, const BlotOptions& bo, size_t slots, const std::atomic<bool>* stop, BlotResult* r) {
  std::vector<BlotResult> part(docs.n);
  parallel::ParallelFor(docs.n, 16, slots, [&](size_t b, size_t e, size_t) {
    postings::Blotter bl(bo);
    const size_t span = size_t(bo.seq_len) * bo.interleave;
    for (size_t i = b; i < e; i++) {
      bl.Run(docs.ptr[i], docs.len[i]);
      BlotResult& p = part[i];
      p.blots = bl.blots();
      for (size_t j = 0; j < bl.blots().size(); j++) {
        p.text_begin.push_back(bl.text_begin(j));
        p.text_end.push_back(bl.text_end(j));
        // dupi's -offsets: token j .. token j + span of the unfiltered token list.
        const auto& t = bl.tokens();
        p.tok_begin.push_back(j < t.size() ? t[j].begin : 0);
        p.tok_end.push_back(j + span < t.size() ? t[j + span].end : (t.empty() ? 0 : t.back().end));
      }
    }
  }, stop);
  r->doc_offsets.push_back(0);
  for (auto& p : part) {
    r->blots.insert(r->blots.end(), p.blots.begin(), p.blots.end());
    r->text_begin.insert(r->text_begin.end(), p.text_begin.begin(), p.text_begin.end());
    r->text_end.insert(r->text_end.end(), p.text_end.begin(), p.text_end.end());
    r->tok_begin.insert(r->tok_begin.end(), p.tok_begin.begin(), p.tok_begin.end());
    r->tok_end.insert(r->tok_end.end(), p.tok_end.begin(), p.tok_end.end());
    r->doc_offsets.push_back(uint32_t(r->blots.size()));
  }
}

// blotBatch(texts, options) -> Promise<{ blots, docOffsets, textBegins, textEnds, tokenBegins, tokenEnds }>
Napi::Value BlotBatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto texts = std::make_shared<TextBatch>();
  texts->Load(env, info[0], "texts");
  const BlotOptions bo = ReadBlotOptions(env, info[1]);
  auto r = std::make_shared<BlotResult>();
  return Queue(env,
               [texts, bo, r](const std::atomic<bool>* stop) {
                 BlotDocs(texts->docs(), bo, parallel::MaxSlots(), stop, r.get());
                 if (stop->load()) return Status(Code::kCancelled, "cancelled");
                 return Status::Ok();
               },
               [texts, r](Napi::Env env) {
                 Napi::Object o = Napi::Object::New(env);
                 o.Set("blots", U32Array(env, std::move(r->blots)));
                 o.Set("docOffsets", U32Array(env, std::move(r->doc_offsets)));
                 o.Set("textBegins", U32Array(env, std::move(r->text_begin)));
                 o.Set("textEnds", U32Array(env, std::move(r->text_end)));
                 o.Set("tokenBegins", U32Array(env, std::move(r->tok_begin)));
                 o.Set("tokenEnds", U32Array(env, std::move(r->tok_end)));
                 return o;
               });
}

// goSortByCountDesc(counts: Uint32Array) -> Uint32Array permutation
Napi::Value GoSort(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<uint32_t> counts = U32Arg(env, info[0], "counts");
  std::vector<uint32_t> perm;
  postings::GoSortByCountDesc(counts.data(), uint32_t(counts.size()), &perm);
  return U32Array(env, std::move(perm));
}

// ------------------------------------------------------------------------------------- PostingIndex

struct IndexState : Closable {
  std::shared_mutex mu;  // appends, deletes and merges exclusive; lookups shared
  postings::PostingIndex index;
};
using StatePtr = std::shared_ptr<IndexState>;

class PostingIndexObject : public Napi::ObjectWrap<PostingIndexObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "PostingIndex",
                       {InstanceMethod("append", &PostingIndexObject::Append),
                        InstanceMethod("appendTexts", &PostingIndexObject::AppendTexts),
                        InstanceMethod("delete", &PostingIndexObject::Delete),
                        InstanceMethod("merge", &PostingIndexObject::Merge),
                        InstanceMethod("lookup", &PostingIndexObject::Lookup),
                        InstanceMethod("keyCounts", &PostingIndexObject::KeyCounts),
                        InstanceMethod("info", &PostingIndexObject::Info),
                        InstanceMethod("close", &PostingIndexObject::Close)});
  }
  explicit PostingIndexObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<PostingIndexObject>(info) {}
  StatePtr state;

 private:
  StatePtr Live(Napi::Env env) { return LiveState(env, state, "posting index"); }

  // append(keys: Uint32Array, offsets: Uint32Array, memory, tmpDir) -> Promise<Uint32Array ids>
  Napi::Value Append(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto keys = U32Arg(env, info[0], "keys");
    auto offs = U32Arg(env, info[1], "offsets");
    if (offs.empty() || offs[0] != 0 || offs.back() != keys.size())
      ThrowRangeError(env, "offsets must start at 0 and end at keys.length");
    for (size_t i = 1; i < offs.size(); i++)
      if (offs[i] < offs[i - 1]) ThrowRangeError(env, "offsets must not decrease");
    const uint64_t memory = ToUint64(env, info[2], "memory");
    const std::string tmp = info[3].IsString() ? info[3].As<Napi::String>().Utf8Value() : std::string();
    auto docs = std::make_shared<std::vector<std::vector<uint32_t>>>(offs.size() - 1);
    for (size_t i = 0; i + 1 < offs.size(); i++) (*docs)[i].assign(keys.begin() + offs[i], keys.begin() + offs[i + 1]);
    auto ids = std::make_shared<std::vector<uint32_t>>();
    return Queue(env,
                 [s, docs, memory, tmp, ids](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::unique_lock<std::shared_mutex> l(s->mu);
                   return s->index.Append(*docs, memory, tmp, ids.get(), stop);
                 },
                 [ids](Napi::Env env) { return U32Array(env, std::move(*ids)); });
  }

  // appendTexts(texts, blotOptions, keyModulus, memory, tmpDir) -> Promise<Uint32Array ids>
  // Keys = blots mod keyModulus (0: the full 32-bit blots).
  Napi::Value AppendTexts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[0], "texts");
    const BlotOptions bo = ReadBlotOptions(env, info[1]);
    const uint64_t modulus = ToUint64(env, info[2], "keyModulus");
    const uint64_t memory = ToUint64(env, info[3], "memory");
    const std::string tmp = info[4].IsString() ? info[4].As<Napi::String>().Utf8Value() : std::string();
    auto ids = std::make_shared<std::vector<uint32_t>>();
    return Queue(env,
                 [s, texts, bo, modulus, memory, tmp, ids](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   const Docs d = texts->docs();
                   std::vector<std::vector<uint32_t>> docs(d.n);
                   parallel::ParallelFor(d.n, 16, parallel::MaxSlots(), [&](size_t b, size_t e, size_t) {
                     postings::Blotter bl(bo);
                     for (size_t i = b; i < e; i++) {
                       bl.Run(d.ptr[i], d.len[i]);
                       auto& k = docs[i];
                       k = bl.blots();
                       if (modulus)
                         for (auto& x : k) x = uint32_t(x % modulus);
                     }
                   }, stop);
                   if (stop->load()) return Status(Code::kCancelled, "cancelled");
                   std::unique_lock<std::shared_mutex> l(s->mu);
                   return s->index.Append(docs, memory, tmp, ids.get(), stop);
                 },
                 [texts, ids](Napi::Env env) { return U32Array(env, std::move(*ids)); });
  }

  Napi::Value Delete(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto ids = std::make_shared<std::vector<uint32_t>>(U32Arg(env, info[0], "ids"));
    return Queue(env,
                 [s, ids](const std::atomic<bool>*) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::unique_lock<std::shared_mutex> l(s->mu);
                   return s->index.Delete(*ids);
                 },
                 [](Napi::Env env) { return env.Undefined(); });
  }

  Napi::Value Merge(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    return Queue(env,
                 [s](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::unique_lock<std::shared_mutex> l(s->mu);
                   return s->index.Merge(stop);
                 },
                 [](Napi::Env env) { return env.Undefined(); });
  }

  // lookup(keys: Uint32Array) -> Promise<{ docs: Uint32Array, offsets: Uint32Array }>
  Napi::Value Lookup(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto keys = std::make_shared<std::vector<uint32_t>>(U32Arg(env, info[0], "keys"));
    auto docs = std::make_shared<std::vector<uint32_t>>();
    auto offs = std::make_shared<std::vector<uint32_t>>();
    return Queue(env,
                 [s, keys, docs, offs](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::shared_lock<std::shared_mutex> l(s->mu);
                   std::vector<std::vector<uint32_t>> part(keys->size());
                   Status err;
                   std::mutex em;
                   parallel::ParallelFor(keys->size(), 256, parallel::MaxSlots(), [&](size_t b, size_t e, size_t) {
                     for (size_t i = b; i < e; i++) {
                       Status st = s->index.Lookup((*keys)[i], &part[i]);
                       if (!st.ok()) {
                         std::lock_guard<std::mutex> g(em);
                         err = st;
                       }
                     }
                   }, stop);
                   if (!err.ok()) return err;
                   offs->push_back(0);
                   for (auto& p : part) {
                     docs->insert(docs->end(), p.begin(), p.end());
                     offs->push_back(uint32_t(docs->size()));
                   }
                   return Status::Ok();
                 },
                 [docs, offs](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("docs", U32Array(env, std::move(*docs)));
                   o.Set("offsets", U32Array(env, std::move(*offs)));
                   return o;
                 });
  }

  // keyCounts() -> Promise<{ keys, counts }>: every key with live documents, ascending.
  Napi::Value KeyCounts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto keys = std::make_shared<std::vector<uint32_t>>();
    auto counts = std::make_shared<std::vector<uint32_t>>();
    return Queue(env,
                 [s, keys, counts](const std::atomic<bool>*) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::shared_lock<std::shared_mutex> l(s->mu);
                   const auto& ix = s->index;
                   if (ix.num_segments() == 1 && ix.tombstones().empty()) {
                     const auto& seg = ix.segment(0);  // counts from the key table alone
                     for (uint64_t i = 0; i < seg.num_keys(); i++) {
                       const auto e = seg.entry(i);
                       keys->push_back(e.key);
                       counts->push_back(e.count);
                     }
                     return Status::Ok();
                   }
                   return ix.ForEach([&](uint32_t k, const std::vector<uint32_t>& d) {
                     keys->push_back(k);
                     counts->push_back(uint32_t(d.size()));
                     return Status::Ok();
                   });
                 },
                 [keys, counts](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("keys", U32Array(env, std::move(*keys)));
                   o.Set("counts", U32Array(env, std::move(*counts)));
                   return o;
                 });
  }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    std::shared_lock<std::shared_mutex> l(s->mu);
    const auto& ix = s->index;
    Napi::Object o = Napi::Object::New(env);
    uint64_t posts = 0, keys = 0;
    for (size_t i = 0; i < ix.num_segments(); i++) posts += ix.segment(i).num_posts(), keys += ix.segment(i).num_keys();
    o.Set("nextId", double(ix.next_id()));
    o.Set("liveDocs", double(ix.live_docs()));
    o.Set("segments", double(ix.num_segments()));
    o.Set("tombstones", double(ix.tombstones().size()));
    o.Set("freeIds", double(ix.free_ids().size()));
    o.Set("posts", double(posts));
    o.Set("keys", double(keys));
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state);
    return info.Env().Undefined();
  }
};

// createPostingIndex(dir) (sync, creates the folder and an empty manifest)
Napi::Value CreateIndex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string dir = StringArg(env, info[0], "dir");
  Status s = postings::PostingIndex::Create(dir);
  if (!s.ok()) throw StatusError(env, s);
  return env.Undefined();
}

}  // namespace

void PostingIndexClass::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = PostingIndexObject::Define(env);
  auto* ref = new Napi::FunctionReference(Napi::Persistent(cls));
  env.AddCleanupHook([ref] { delete ref; });
  exports.Set("blotBatch", Napi::Function::New(env, BlotBatch, "blotBatch"));
  exports.Set("goSortByCountDesc", Napi::Function::New(env, GoSort, "goSortByCountDesc"));
  exports.Set("createPostingIndex", Napi::Function::New(env, CreateIndex, "createPostingIndex"));
  // openPostingIndex(dir, verify) -> Promise<PostingIndex>
  exports.Set("openPostingIndex", Napi::Function::New(env, [ref](const Napi::CallbackInfo& info) -> Napi::Value {
    Napi::Env env = info.Env();
    const std::string dir = StringArg(env, info[0], "dir");
    const bool verify = info[1].ToBoolean();
    auto st = std::make_shared<IndexState>();
    return Queue(env,
                 [st, dir, verify](const std::atomic<bool>*) { return st->index.Open(dir, verify); },
                 [st, ref](Napi::Env env) {
                   Napi::Object o = ref->New({});
                   PostingIndexObject::Unwrap(o)->state = st;
                   return o;
                 });
  }, "openPostingIndex"));
}

}  // namespace binding
}  // namespace neardup
