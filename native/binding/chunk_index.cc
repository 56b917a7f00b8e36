#include "chunk_index.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "addon.h"
#include "args.h"
#include "chunks/index.h"
#include "io/os.h"
#include "parallel/pool.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

using chunks::IndexParams;
using chunks::RunOptions;
using ChunkState = chunks::State;

Napi::Value U32(Napi::Env env, std::vector<uint32_t>&& v) {
  const size_t n = v.size();
  Napi::ArrayBuffer ab = ToArrayBuffer(env, std::move(v));
  return Napi::Uint32Array::New(env, n, ab, 0);
}

std::string StringArg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsString()) ThrowTypeError(env, std::string("Expected ") + what + " to be a string");
  return CheckPath(env, v.As<Napi::String>().Utf8Value(), what);
}

std::vector<uint32_t> U32Arg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    ThrowTypeError(env, std::string("Expected ") + what + " to be a Uint32Array");
  Napi::Uint32Array a = v.As<Napi::Uint32Array>();
  return std::vector<uint32_t>(a.Data(), a.Data() + a.ElementLength());
}

// { n, bits, seed, split, lowercase, stripPunctuation, short }
chunks::ChunkOptions ReadChunkOptions(Napi::Env env, const Napi::Object& o) {
  chunks::ChunkOptions c;
  c.text.n = GetUint32(o, "n", c.text.n, 1, kMaxN);
  c.text.split = static_cast<WordSplit>(GetEnum(o, "split", static_cast<int>(c.text.split), {"whitespace", "nonword"}));
  c.text.lowercase = GetBool(o, "lowercase", c.text.lowercase);
  c.text.strip_punct = GetBool(o, "stripPunctuation", c.text.strip_punct);
  c.text.short_text = static_cast<ShortText>(GetEnum(o, "short", static_cast<int>(c.text.short_text), {"whole", "none"}));
  c.bits = GetUint32(o, "bits", c.bits, 28, 64);
  if (c.bits > 32 && c.bits != 64) ThrowRangeError(env, "Option 'bits' must be from 28 to 32, or 64, got " + std::to_string(c.bits));
  c.seed = GetUint64(o, "seed", 0);
  return c;
}

IndexParams ReadParams(Napi::Env env, const Napi::Value& v) {
  Napi::Object o = OptionsObject(env, v, "index options");
  IndexParams p;
  p.chunk = ReadChunkOptions(env, o);
  p.parts = GetUint32(o, "parts", 1, 1, chunks::kMaxParts);
  p.top_k = GetUint32(o, "k", 100, 1, chunks::kMaxTopK);
  p.min_shared = GetUint32(o, "minShared", 1, 1, 0xffffffffu);
  Napi::Value ms = o.Get("minSimilarity");
  if (!ms.IsUndefined()) {
    if (!ms.IsNumber()) ThrowTypeError(env, "Expected option 'minSimilarity' to be a number");
    p.min_similarity = ms.As<Napi::Number>().DoubleValue();
    if (!(p.min_similarity >= 0 && p.min_similarity <= 1))
      ThrowRangeError(env, "Option 'minSimilarity' must be from 0 to 1, got " + ms.ToString().Utf8Value());
  }
  return p;
}

RunOptions ReadRun(Napi::Env env, const Napi::Value& memory, const Napi::Value& tmp) {
  RunOptions o;
  o.memory = ToUint64(env, memory, "memory");
  if (!tmp.IsUndefined()) o.tmp = StringArg(env, tmp, "tmp");
  return o;
}

Napi::Object ParamsObject(Napi::Env env, const IndexParams& p) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("n", double(p.chunk.text.n));
  o.Set("bits", double(p.chunk.bits));
  o.Set("seed", Napi::BigInt::New(env, p.chunk.seed));
  o.Set("split", p.chunk.text.split == WordSplit::kNonWord ? "nonword" : "whitespace");
  o.Set("lowercase", p.chunk.text.lowercase);
  o.Set("stripPunctuation", p.chunk.text.strip_punct);
  o.Set("short", p.chunk.text.short_text == ShortText::kNone ? "none" : "whole");
  o.Set("parts", double(p.parts));
  o.Set("k", double(p.top_k));
  o.Set("minShared", double(p.min_shared));
  o.Set("minSimilarity", p.min_similarity);
  return o;
}

// ------------------------------------------------------------------------------------------ ChunkIndex

struct IndexState : Closable {
  std::shared_ptr<ChunkState> st;
};
using IndexPtr = std::shared_ptr<IndexState>;

class ChunkIndexObject : public Napi::ObjectWrap<ChunkIndexObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ChunkIndex",
                       {InstanceMethod("info", &ChunkIndexObject::Info),
                        InstanceMethod("files", &ChunkIndexObject::Files),
                        InstanceMethod("liveIds", &ChunkIndexObject::LiveIds),
                        InstanceMethod("find", &ChunkIndexObject::Find),
                        InstanceMethod("docs", &ChunkIndexObject::DocsOf),
                        InstanceMethod("top", &ChunkIndexObject::Top),
                        InstanceMethod("query", &ChunkIndexObject::Query),
                        InstanceMethod("close", &ChunkIndexObject::Close)});
  }
  explicit ChunkIndexObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChunkIndexObject>(info) {}
  IndexPtr state;

 private:
  IndexPtr Live(Napi::Env env) { return LiveState(env, state, "chunk index"); }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    IndexPtr s = Live(env);
    const chunks::Manifest& m = s->st->manifest();
    Napi::Object o = Napi::Object::New(env);
    o.Set("generation", double(m.generation));
    o.Set("documents", double(m.live));
    o.Set("slots", double(m.next_id));
    o.Set("segments", double(m.segments.size()));
    o.Set("tombstones", double(m.tombstones.size()));
    o.Set("recordFiles", double(m.doc_files.size() + m.top_files.size()));
    uint64_t posts = 0;
    for (const auto& g : m.segments) posts += g.posts;
    o.Set("postings", double(posts));
    o.Set("params", ParamsObject(env, m.params));
    return o;
  }

  Napi::Value Files(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    IndexPtr s = Live(env);
    const auto f = s->st->Files();
    Napi::Array a = Napi::Array::New(env, f.size());
    for (size_t i = 0; i < f.size(); i++) a.Set(uint32_t(i), f[i]);
    return a;
  }

  Napi::Value LiveIds(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    IndexPtr s = Live(env);
    std::vector<uint32_t> ids;
    const auto& d = s->st->directory();
    for (uint32_t i = 0; i < d.slots(); i++)
      if (d.entry(i).live()) ids.push_back(i);
    return U32(env, std::move(ids));
  }

  // find(ids: string[] of JSON texts) -> Uint32Array (0xffffffff: not in the index)
  Napi::Value Find(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    IndexPtr s = Live(env);
    TextBatch ids;
    ids.Load(env, info[0], "ids");
    std::vector<uint32_t> out(ids.size());
    for (size_t i = 0; i < ids.size(); i++) {
      const int64_t id = s->st->directory().Find(
          std::string_view(reinterpret_cast<const char*>(ids.data(i)), ids.length(i)));
      out[i] = id < 0 ? 0xffffffffu : uint32_t(id);
    }
    return U32(env, std::move(out));
  }

  // docs(ids: Uint32Array) -> { chunks: Uint32Array, ids: Buffer (JSON texts back to back), idOffsets }
  Napi::Value DocsOf(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    IndexPtr s = Live(env);
    const auto ids = U32Arg(env, info[0], "ids");
    const auto& d = s->st->directory();
    std::vector<uint32_t> chunks(ids.size()), offs(ids.size() + 1, 0);
    std::string heap;
    for (size_t i = 0; i < ids.size(); i++) {
      if (ids[i] >= d.slots() || !d.entry(ids[i]).live()) ThrowRangeError(env, "no document " + std::to_string(ids[i]));
      chunks[i] = d.entry(ids[i]).chunks;
      heap += d.ext(ids[i]);
      offs[i + 1] = uint32_t(heap.size());
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("chunks", U32(env, std::move(chunks)));
    o.Set("ids", Napi::Buffer<char>::Copy(env, heap.data(), heap.size()));
    o.Set("idOffsets", U32(env, std::move(offs)));
    return o;
  }

  // top(ids: Uint32Array) -> Promise<{ offsets, other, shared }>: the first K entries of each list
  Napi::Value Top(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    IndexPtr s = Live(env);
    auto ids = std::make_shared<std::vector<uint32_t>>(U32Arg(env, info[0], "ids"));
    const auto& d = s->st->directory();
    for (uint32_t id : *ids)
      if (id >= d.slots() || !d.entry(id).live()) ThrowRangeError(env, "no document " + std::to_string(id));
    struct Out {
      std::vector<uint32_t> offsets, other, shared;
    };
    auto out = std::make_shared<Out>();
    return QueueFn(env,
                   [s, ids, out](const std::atomic<bool>*) -> Status {
                     if (s->closed.load()) return Cancelled("chunk index");
                     std::vector<chunks::TopEntry> top;
                     out->offsets.push_back(0);
                     const uint32_t k = s->st->params().top_k;
                     for (uint32_t id : *ids) {
                       Status st = s->st->Top(id, &top);
                       if (!st.ok()) return st;
                       if (top.size() > k) top.resize(k);
                       for (const auto& t : top) {
                         out->other.push_back(t.other);
                         out->shared.push_back(t.shared);
                       }
                       out->offsets.push_back(uint32_t(out->other.size()));
                     }
                     return Status::Ok();
                   },
                   [out](Napi::Env env) {
                     Napi::Object o = Napi::Object::New(env);
                     o.Set("offsets", U32(env, std::move(out->offsets)));
                     o.Set("other", U32(env, std::move(out->other)));
                     o.Set("shared", U32(env, std::move(out->shared)));
                     return o;
                   });
  }

  // query(texts) -> Promise<{ chunks (per text), offsets, other, shared }>
  Napi::Value Query(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    IndexPtr s = Live(env);
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[0], "texts");
    struct Out {
      std::vector<uint32_t> chunks, offsets, other, shared;
    };
    auto out = std::make_shared<Out>();
    return QueueFn(env,
                   [s, texts, out](const std::atomic<bool>* stop) -> Status {
                     if (s->closed.load()) return Cancelled("chunk index");
                     std::vector<std::vector<chunks::TopEntry>> lists;
                     Status st = chunks::QueryTexts(*s->st, texts->docs(), stop, &out->chunks, &lists);
                     if (!st.ok()) return st;
                     out->offsets.push_back(0);
                     for (const auto& l : lists) {
                       for (const auto& t : l) {
                         out->other.push_back(t.other);
                         out->shared.push_back(t.shared);
                       }
                       out->offsets.push_back(uint32_t(out->other.size()));
                     }
                     return Status::Ok();
                   },
                   [texts, out](Napi::Env env) {
                     Napi::Object o = Napi::Object::New(env);
                     o.Set("chunks", U32(env, std::move(out->chunks)));
                     o.Set("offsets", U32(env, std::move(out->offsets)));
                     o.Set("other", U32(env, std::move(out->other)));
                     o.Set("shared", U32(env, std::move(out->shared)));
                     return o;
                   });
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state);
    return info.Env().Undefined();
  }
};

// The constructors of one environment's classes.
struct Ctors {
  Napi::FunctionReference index, builder, updater;
};

Napi::Value WrapIndex(Napi::Env env, const Ctors* c, std::shared_ptr<ChunkState> st) {
  Napi::Object o = c->index.New({});
  auto s = std::make_shared<IndexState>();
  s->st = std::move(st);
  ChunkIndexObject::Unwrap(o)->state = s;
  return o;
}

// Resolves an add() whose Status carries a bad-line index: { bad, message } or undefined.
struct AddResult {
  Status status;
  size_t bad = SIZE_MAX;
};
Napi::Value AddResultValue(Napi::Env env, const AddResult& r) {
  if (r.status.ok()) return env.Undefined();
  if (r.bad == SIZE_MAX) throw StatusError(env, r.status);
  Napi::Object o = Napi::Object::New(env);
  o.Set("bad", double(r.bad));
  o.Set("code", CodeName(r.status.code()));
  o.Set("message", r.status.message());
  return o;
}

// --------------------------------------------------------------------------------------------- builder

struct BuilderState : Closable {
  std::mutex mu;
  chunks::Builder b;
  std::shared_ptr<AddonState> addon;  // its closing flag stops the runs
  const Ctors* ctors = nullptr;
};
using BuilderPtr = std::shared_ptr<BuilderState>;

class ChunkBuilderObject : public Napi::ObjectWrap<ChunkBuilderObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ChunkBuilder",
                       {InstanceMethod("add", &ChunkBuilderObject::Add),
                        InstanceMethod("finishDocs", &ChunkBuilderObject::FinishDocs),
                        InstanceMethod("finish", &ChunkBuilderObject::Finish),
                        InstanceMethod("close", &ChunkBuilderObject::Close)});
  }
  explicit ChunkBuilderObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChunkBuilderObject>(info) {}
  BuilderPtr state;

 private:
  BuilderPtr Live(Napi::Env env) { return LiveState(env, state, "chunk builder"); }

  // add(ids: string[] (JSON texts), texts) -> Promise<undefined | { bad, code, message }>
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BuilderPtr s = Live(env);
    auto ids = std::make_shared<TextBatch>();
    ids->Load(env, info[0], "ids");
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[1], "texts");
    if (ids->size() != texts->size()) ThrowRangeError(env, "ids and texts must have the same length");
    auto r = std::make_shared<AddResult>();
    return QueueFn(env,
                   [s, ids, texts, r](const std::atomic<bool>* stop) -> Status {
                     if (s->closed.load()) return Cancelled("chunk builder");
                     std::lock_guard<std::mutex> l(s->mu);
                     std::vector<std::string_view> ext(ids->size());
                     for (size_t i = 0; i < ids->size(); i++)
                       ext[i] = std::string_view(reinterpret_cast<const char*>(ids->data(i)), ids->length(i));
                     r->status = s->b.Add(ext, texts->docs(), &r->bad);
                     if (!r->status.ok() && r->bad == SIZE_MAX) return r->status;
                     return Status::Ok();
                   },
                   [ids, texts, r](Napi::Env env) { return AddResultValue(env, *r); });
  }

  Napi::Value FinishDocs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BuilderPtr s = Live(env);
    return QueueFn(env,
                   [s](const std::atomic<bool>*) -> Status {
                     if (s->closed.load()) return Cancelled("chunk builder");
                     std::lock_guard<std::mutex> l(s->mu);
                     return s->b.FinishDocs();
                   },
                   [](Napi::Env env) { return env.Undefined(); });
  }

  // finish() -> Promise<ChunkIndex (the pending generation)>
  Napi::Value Finish(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BuilderPtr s = Live(env);
    auto out = std::make_shared<std::shared_ptr<ChunkState>>();
    return QueueFn(env,
                   [s, out](const std::atomic<bool>*) -> Status {
                     if (s->closed.load()) return Cancelled("chunk builder");
                     std::lock_guard<std::mutex> l(s->mu);
                     return s->b.Finish(out.get());
                   },
                   [s, out](Napi::Env env) { return WrapIndex(env, s->ctors, *out); });
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state);
    return info.Env().Undefined();
  }
};

// --------------------------------------------------------------------------------------------- updater

struct UpdaterState : Closable {
  std::mutex mu;
  std::unique_ptr<chunks::Updater> u;
  std::shared_ptr<AddonState> addon;
  const Ctors* ctors = nullptr;
};
using UpdaterPtr = std::shared_ptr<UpdaterState>;

class ChunkUpdaterObject : public Napi::ObjectWrap<ChunkUpdaterObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ChunkUpdater",
                       {InstanceMethod("add", &ChunkUpdaterObject::Add),
                        InstanceMethod("prepare", &ChunkUpdaterObject::Prepare),
                        InstanceMethod("close", &ChunkUpdaterObject::Close)});
  }
  explicit ChunkUpdaterObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChunkUpdaterObject>(info) {}
  UpdaterPtr state;

 private:
  UpdaterPtr Live(Napi::Env env) { return LiveState(env, state, "chunk updater"); }

  // add(ids, texts, deleted: Uint8Array) -> Promise<undefined | { bad, code, message }>
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    UpdaterPtr s = Live(env);
    auto ids = std::make_shared<TextBatch>();
    ids->Load(env, info[0], "ids");
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[1], "texts");
    if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      ThrowTypeError(env, "Expected deleted to be a Uint8Array");
    Napi::Uint8Array del = info[2].As<Napi::Uint8Array>();
    if (ids->size() != texts->size() || del.ElementLength() != ids->size())
      ThrowRangeError(env, "ids, texts and deleted must have the same length");
    auto dels = std::make_shared<std::vector<uint8_t>>(del.Data(), del.Data() + del.ElementLength());
    auto r = std::make_shared<AddResult>();
    return QueueFn(env,
                   [s, ids, texts, dels, r](const std::atomic<bool>*) -> Status {
                     if (s->closed.load()) return Cancelled("chunk updater");
                     std::lock_guard<std::mutex> l(s->mu);
                     std::vector<std::string_view> ext(ids->size());
                     for (size_t i = 0; i < ids->size(); i++)
                       ext[i] = std::string_view(reinterpret_cast<const char*>(ids->data(i)), ids->length(i));
                     Docs d = texts->docs();
                     std::vector<const uint8_t*> ptr(d.ptr, d.ptr + d.n);
                     for (size_t i = 0; i < d.n; i++)
                       if ((*dels)[i]) ptr[i] = nullptr;
                     r->status = s->u->Add(ext, Docs{ptr.data(), d.len, d.n}, &r->bad);
                     if (!r->status.ok() && r->bad == SIZE_MAX) return r->status;
                     return Status::Ok();
                   },
                   [ids, texts, r](Napi::Env env) { return AddResultValue(env, *r); });
  }

  // prepare(compact) -> Promise<{ summary..., pending: ChunkIndex | null }>
  Napi::Value Prepare(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    UpdaterPtr s = Live(env);
    const bool compact = info[0].ToBoolean();
    auto sum = std::make_shared<chunks::UpdateSummary>();
    auto out = std::make_shared<std::shared_ptr<ChunkState>>();
    return QueueFn(env,
                   [s, compact, sum, out](const std::atomic<bool>*) -> Status {
                     if (s->closed.load()) return Cancelled("chunk updater");
                     std::lock_guard<std::mutex> l(s->mu);
                     return s->u->Prepare(compact, sum.get(), out.get());
                   },
                   [s, sum, out](Napi::Env env) {
                     Napi::Object o = Napi::Object::New(env);
                     o.Set("added", double(sum->added));
                     o.Set("modified", double(sum->modified));
                     o.Set("deleted", double(sum->deleted));
                     o.Set("affected", double(sum->affected));
                     o.Set("recounted", double(sum->recounted));
                     o.Set("compacted", sum->merged);
                     o.Set("removed", U32(env, std::move(sum->removed)));
                     o.Set("upserted", U32(env, std::move(sum->upserted)));
                     std::vector<uint32_t> doc, other, shared;
                     for (const auto& r : sum->rows) {
                       doc.push_back(r.doc);
                       other.push_back(r.other);
                       shared.push_back(r.shared);
                     }
                     o.Set("rowDoc", U32(env, std::move(doc)));
                     o.Set("rowOther", U32(env, std::move(other)));
                     o.Set("rowShared", U32(env, std::move(shared)));
                     o.Set("pending", *out ? WrapIndex(env, s->ctors, *out) : env.Null());
                     return o;
                   });
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state);
    return info.Env().Undefined();
  }
};

// ------------------------------------------------------------------------------------------- functions

// chunkIndexProbe(dir) -> { manifest: generation | null, pending: generation | null, stage: boolean }
// A PENDING that cannot be read counts as absent (an interrupted run's leftover).
Napi::Value Probe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string dir = StringArg(env, info[0], "dir");
  Napi::Object o = Napi::Object::New(env);
  auto gen = [&](const char* name, bool must) -> Napi::Value {
    io::os::PathInfo pi;
    Status s = io::os::StatPath(dir + "/" + name, &pi);
    if (!s.ok()) throw StatusError(env, s);
    if (!pi.exists) return env.Null();
    chunks::Manifest m;
    s = chunks::ReadManifest(dir + "/" + name, &m);
    if (!s.ok()) {
      if (must) throw StatusError(env, s);
      return env.Null();
    }
    return Napi::Number::New(env, m.generation);
  };
  o.Set("manifest", gen(chunks::kManifestName, true));
  o.Set("pending", gen(chunks::kPendingName, false));
  io::os::PathInfo pi;
  Status s = io::os::StatPath(dir + "/" + chunks::kStageName, &pi);
  if (!s.ok()) throw StatusError(env, s);
  o.Set("stage", pi.exists);
  return o;
}

// chunkIndexLockState(path) -> 'held' | 'free' | 'unknown' (io::os::ProbeLock): whether a process holds the
// index's writer lock.
Napi::Value LockState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  switch (io::os::ProbeLock(StringArg(env, info[0], "path"))) {
    case io::os::LockState::kHeld: return Napi::String::New(env, "held");
    case io::os::LockState::kFree: return Napi::String::New(env, "free");
    default: return Napi::String::New(env, "unknown");
  }
}

Napi::Value IsIndexFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) ThrowTypeError(env, "Expected name to be a string");
  return Napi::Boolean::New(env, chunks::IsIndexFileName(info[0].As<Napi::String>().Utf8Value()));
}

// openChunkIndex(dir, which: 'MANIFEST' | 'PENDING', verify) -> Promise<ChunkIndex>
Napi::Value OpenIndex(const Napi::CallbackInfo& info, const Ctors* c) {
  Napi::Env env = info.Env();
  const std::string dir = StringArg(env, info[0], "dir");
  const std::string which = StringArg(env, info[1], "which");
  if (which != chunks::kManifestName && which != chunks::kPendingName)
    ThrowRangeError(env, "which must be 'MANIFEST' or 'PENDING'");
  const bool verify = info[2].ToBoolean();
  auto out = std::make_shared<std::shared_ptr<ChunkState>>();
  return QueueFn(env, [dir, which, verify, out](const std::atomic<bool>*) { return ChunkState::Open(dir, which, verify, out.get()); },
                 [c, out](Napi::Env env) { return WrapIndex(env, c, *out); });
}

// createChunkBuilder(dir, params, memory, tmp) -> ChunkBuilder
Napi::Value CreateBuilder(const Napi::CallbackInfo& info, const Ctors* c) {
  Napi::Env env = info.Env();
  const std::string dir = StringArg(env, info[0], "dir");
  const IndexParams p = ReadParams(env, info[1]);
  auto s = std::make_shared<BuilderState>();
  RunOptions ro = ReadRun(env, info[2], info[3]);
  s->addon = State(env);
  s->ctors = c;
  ro.stop = &s->addon->closing;
  Status st = s->b.Create(dir, p, ro);
  if (!st.ok()) throw StatusError(env, st);
  Napi::Object o = c->builder.New({});
  ChunkBuilderObject::Unwrap(o)->state = s;
  return o;
}

// createChunkUpdater(index, memory, tmp) -> ChunkUpdater
Napi::Value CreateUpdater(const Napi::CallbackInfo& info, const Ctors* c) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject() || !info[0].As<Napi::Object>().InstanceOf(c->index.Value()))
    ThrowTypeError(env, "Expected index to be a ChunkIndex");
  IndexPtr ix = LiveState(env, ChunkIndexObject::Unwrap(info[0].As<Napi::Object>())->state, "chunk index");
  RunOptions o = ReadRun(env, info[1], info[2]);
  auto s = std::make_shared<UpdaterState>();
  s->addon = State(env);
  s->ctors = c;
  o.stop = &s->addon->closing;
  s->u = std::make_unique<chunks::Updater>(ix->st, o);
  Napi::Object obj = c->updater.New({});
  ChunkUpdaterObject::Unwrap(obj)->state = s;
  return obj;
}

// chunkIndexCommit(dir): PENDING -> MANIFEST
Napi::Value Commit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Status s = chunks::CommitPending(StringArg(env, info[0], "dir"));
  if (!s.ok()) throw StatusError(env, s);
  return env.Undefined();
}

// chunkStagePart(dir, part, parts, pairsPath, memory, tmp) -> Promise<undefined>
Napi::Value StagePart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string dir = StringArg(env, info[0], "dir");
  if (!info[1].IsNumber()) ThrowTypeError(env, "Expected part to be a number");
  const double pd = info[1].As<Napi::Number>().DoubleValue();
  if (!(pd >= 0 && pd < chunks::kMaxParts) || pd != double(uint32_t(pd))) ThrowRangeError(env, "part out of range");
  const uint32_t part = uint32_t(pd);
  const uint32_t parts = info[2].IsUndefined() ? 0 : uint32_t(ToUint64(env, info[2], "parts"));
  const std::string out = StringArg(env, info[3], "pairsPath");
  RunOptions o = ReadRun(env, info[4], info[5]);
  return QueueFn(env,
                 [dir, part, parts, out, o](const std::atomic<bool>* stop) mutable {
                   o.stop = stop;
                   return chunks::StagePart(dir, part, parts, out, o);
                 },
                 [](Napi::Env env) { return env.Undefined(); });
}

// chunkStageFinish(dir, pairsPaths: string[], memory, tmp) -> Promise<ChunkIndex (pending)>
Napi::Value StageFinish(const Napi::CallbackInfo& info, const Ctors* c) {
  Napi::Env env = info.Env();
  const std::string dir = StringArg(env, info[0], "dir");
  if (!info[1].IsArray()) ThrowTypeError(env, "Expected pairsPaths to be an array of strings");
  Napi::Array a = info[1].As<Napi::Array>();
  std::vector<std::string> paths;
  for (uint32_t i = 0; i < a.Length(); i++) paths.push_back(StringArg(env, a.Get(i), "pairsPaths[i]"));
  RunOptions o = ReadRun(env, info[2], info[3]);
  auto out = std::make_shared<std::shared_ptr<ChunkState>>();
  return QueueFn(env,
                 [dir, paths, o, out](const std::atomic<bool>* stop) mutable {
                   o.stop = stop;
                   return chunks::StageFinish(dir, paths, o, out.get());
                 },
                 [c, out](Napi::Env env) { return WrapIndex(env, c, *out); });
}

// chunkTexts(texts, chunkOptions) -> Promise<{ chunks: BigUint64Array, offsets: Uint32Array }>
Napi::Value ChunkTexts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto texts = std::make_shared<TextBatch>();
  texts->Load(env, info[0], "texts");
  const chunks::ChunkOptions co = ReadChunkOptions(env, OptionsObject(env, info[1], "chunk options"));
  struct Out {
    std::vector<uint64_t> chunks;
    std::vector<uint32_t> offsets;
  };
  auto out = std::make_shared<Out>();
  return QueueFn(env,
                 [texts, co, out](const std::atomic<bool>* stop) -> Status {
                   const Docs d = texts->docs();
                   std::vector<std::vector<uint64_t>> per(d.n);
                   parallel::ParallelFor(d.n, 16, parallel::MaxSlots(), [&](size_t b, size_t e, size_t) {
                     chunks::Chunker c(co);
                     for (size_t i = b; i < e; i++) c.Run(d.ptr[i], d.len[i], &per[i]);
                   }, stop);
                   if (stop->load()) return Status(Code::kCancelled, "cancelled");
                   out->offsets.push_back(0);
                   for (const auto& p : per) {
                     out->chunks.insert(out->chunks.end(), p.begin(), p.end());
                     if (out->chunks.size() > 0xffffffffu) return Status(Code::kInvalidArgument, "more than 2^32 - 1 chunks: split the batch");
                     out->offsets.push_back(uint32_t(out->chunks.size()));
                   }
                   return Status::Ok();
                 },
                 [texts, out](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("chunks", NewBigUint64Array(env, std::move(out->chunks)));
                   o.Set("offsets", U32(env, std::move(out->offsets)));
                   return o;
                 });
}

}  // namespace

void ChunkIndexClass::Init(Napi::Env env, Napi::Object exports) {
  auto* c = new Ctors;
  c->index = Napi::Persistent(ChunkIndexObject::Define(env));
  c->builder = Napi::Persistent(ChunkBuilderObject::Define(env));
  c->updater = Napi::Persistent(ChunkUpdaterObject::Define(env));
  env.AddCleanupHook([c] { delete c; });
  auto fn = [&](const char* name, Napi::Value (*f)(const Napi::CallbackInfo&, const Ctors*)) {
    exports.Set(name, Napi::Function::New(env, [c, f](const Napi::CallbackInfo& info) { return f(info, c); }, name));
  };
  exports.Set("chunkIndexProbe", Napi::Function::New(env, Probe, "chunkIndexProbe"));
  exports.Set("chunkIndexFileName", Napi::Function::New(env, IsIndexFile, "chunkIndexFileName"));
  exports.Set("chunkIndexLockState", Napi::Function::New(env, LockState, "chunkIndexLockState"));
  exports.Set("chunkIndexCommit", Napi::Function::New(env, Commit, "chunkIndexCommit"));
  exports.Set("chunkStagePart", Napi::Function::New(env, StagePart, "chunkStagePart"));
  exports.Set("chunkTexts", Napi::Function::New(env, ChunkTexts, "chunkTexts"));
  fn("openChunkIndex", OpenIndex);
  fn("chunkStageFinish", StageFinish);
  fn("createChunkBuilder", CreateBuilder);
  fn("createChunkUpdater", CreateUpdater);
}

}  // namespace binding
}  // namespace neardup
