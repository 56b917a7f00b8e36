#include "substrings.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "addon.h"
#include "args.h"
#include "substr/index_file.h"
#include "substr/repeats.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

struct CorpusState : Closable {
  std::mutex mu;
  substr::Corpus corpus;
};
using CorpusPtr = std::shared_ptr<CorpusState>;

Napi::Value F64(Napi::Env env, std::vector<double>&& v) {
  const size_t n = v.size();
  Napi::ArrayBuffer ab = ToArrayBuffer(env, std::move(v));
  return Napi::Float64Array::New(env, n, ab, 0);
}

class SubstringCorpusObject : public Napi::ObjectWrap<SubstringCorpusObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "SubstringCorpus",
                       {InstanceMethod("add", &SubstringCorpusObject::Add),
                        InstanceMethod("find", &SubstringCorpusObject::Find),
                        InstanceMethod("documents", &SubstringCorpusObject::Documents),
                        InstanceMethod("close", &SubstringCorpusObject::Close)});
  }
  explicit SubstringCorpusObject(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<SubstringCorpusObject>(info), state_(std::make_shared<CorpusState>()) {}

 private:
  CorpusPtr Live(Napi::Env env) { return LiveState(env, state_, "substring corpus"); }

  // add(texts) -> Promise<undefined | { bad, message }>: documents appended in order; a text that is not
  // UTF-8 refuses the whole batch (bad: its index in texts).
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CorpusPtr s = Live(env);
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[0], "texts");
    struct Out {
      Status status;
      size_t bad = SIZE_MAX;
    };
    auto out = std::make_shared<Out>();
    return QueueFn(env,
                   [s, texts, out](const std::atomic<bool>*) -> Status {
                     if (s->closed.load()) return Cancelled("substring corpus");
                     std::lock_guard<std::mutex> l(s->mu);
                     try {
                       out->status = s->corpus.Add(texts->docs(), &out->bad);
                     } catch (const std::bad_alloc&) {
                       return Status(Code::kInternal, "out of memory: the corpus is held in memory (its text, then 4-8 bytes a byte for its suffix array)");
                     }
                     if (!out->status.ok() && out->bad == SIZE_MAX) return out->status;
                     return Status::Ok();
                   },
                   [texts, out](Napi::Env env) -> Napi::Value {
                     if (out->status.ok()) return env.Undefined();
                     Napi::Object o = Napi::Object::New(env);
                     o.Set("bad", double(out->bad));
                     o.Set("code", CodeName(out->status.code()));
                     o.Set("message", out->status.message());
                     return o;
                   });
  }

  // find({ length, unit: 'byte' | 'token', dropAll }) -> Promise<{ doc, start, end, firstDoc, firstOffset (Float64Arrays), stats }>
  Napi::Value Find(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CorpusPtr s = Live(env);
    Napi::Object opts = OptionsObject(env, info[0], "find options");
    substr::FindOptions o;
    o.length = GetUint32(opts, "length", o.length, 1, substr::kMaxLength);
    o.drop_all = GetBool(opts, "dropAll", false);
    o.unit = GetEnum(opts, "unit", 0, {"byte", "token"}) == 1 ? substr::Unit::kToken : substr::Unit::kByte;
    const Napi::Value ip = opts.Get("indexPath");
    if (!ip.IsUndefined()) {
      o.index_path = PathArg(env, ip, "indexPath");
      if (o.unit == substr::Unit::kToken) ThrowRangeError(env, "Option 'indexPath' needs unit 'byte'");
    }
    if (o.unit == substr::Unit::kByte && o.length < substr::kMinLength)
      ThrowRangeError(env, "Option 'length' must be at least " + std::to_string(substr::kMinLength) + " bytes");
    struct Out {
      std::vector<substr::Span> spans;
      substr::FindStats stats;
    };
    auto out = std::make_shared<Out>();
    return QueueFn(env,
                   [s, o, out](const std::atomic<bool>* stop) mutable -> Status {
                     if (s->closed.load()) return Cancelled("substring corpus");
                     std::lock_guard<std::mutex> l(s->mu);
                     o.stop = stop;
                     return s->corpus.Find(o, &out->spans, &out->stats);
                   },
                   [out](Napi::Env env) -> Napi::Value {
                     const size_t n = out->spans.size();
                     std::vector<double> doc(n), start(n), end(n), first_doc(n), first_offset(n);
                     for (size_t i = 0; i < n; i++) {
                       const substr::Span& x = out->spans[i];
                       doc[i] = double(x.doc);
                       start[i] = double(x.start);
                       end[i] = double(x.end);
                       first_doc[i] = double(x.first_doc);
                       first_offset[i] = double(x.first_offset);
                     }
                     std::vector<substr::Span>().swap(out->spans);
                     Napi::Object r = Napi::Object::New(env);
                     r.Set("doc", F64(env, std::move(doc)));
                     r.Set("start", F64(env, std::move(start)));
                     r.Set("end", F64(env, std::move(end)));
                     r.Set("firstDoc", F64(env, std::move(first_doc)));
                     r.Set("firstOffset", F64(env, std::move(first_offset)));
                     const substr::FindStats& st = out->stats;
                     Napi::Object so = Napi::Object::New(env);
                     so.Set("documents", double(st.documents));
                     so.Set("bytes", double(st.bytes));
                     so.Set("removedBytes", double(st.removed_bytes));
                     so.Set("spans", double(n));
                     so.Set("documentsChanged", double(st.documents_changed));
                     so.Set("groups", double(st.groups));
                     so.Set("tokens", double(st.tokens));
                     so.Set("distinctTokens", double(st.distinct_tokens));
                     so.Set("suffixArrayBytes", double(st.wide_suffix_array ? 8 : 4));
                     so.Set("buildSeconds", st.build_seconds);
                     so.Set("buildCpuSeconds", st.build_cpu_seconds);
                     so.Set("scanSeconds", st.scan_seconds);
                     r.Set("stats", so);
                     return r;
                   });
  }

  Napi::Value Documents(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CorpusPtr s = Live(env);
    std::lock_guard<std::mutex> l(s->mu);
    return Napi::Number::New(env, double(s->corpus.documents()));
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state_);
    return info.Env().Undefined();
  }

  CorpusPtr state_;
};

// substringIndexCount(path, strings: string[], verify = true) -> Promise<{ counts: Float64Array, documents, bytes }>
Napi::Value IndexCount(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string path = PathArg(env, info[0], "path");
  auto strings = std::make_shared<TextBatch>();
  strings->Load(env, info[1], "strings");
  for (size_t i = 0; i < strings->size(); i++)
    if (strings->length(i) == 0) ThrowRangeError(env, "strings[" + std::to_string(i) + "] is empty");
  const bool verify = info[2].IsUndefined() ? true : info[2].ToBoolean().Value();
  struct Out {
    std::vector<double> counts;
    uint64_t documents = 0, bytes = 0;
  };
  auto out = std::make_shared<Out>();
  return QueueFn(env,
                 [path, strings, verify, out](const std::atomic<bool>*) -> Status {
                   substr::SubstringIndex idx;
                   Status s = idx.Open(path, verify);
                   if (!s.ok()) return s;
                   out->documents = idx.documents();
                   out->bytes = idx.text_bytes();
                   for (size_t i = 0; i < strings->size(); i++) {
                     uint64_t c = 0;
                     s = idx.Count(strings->data(i), strings->length(i), &c);
                     if (!s.ok()) return s;
                     out->counts.push_back(double(c));
                   }
                   return Status::Ok();
                 },
                 [strings, out](Napi::Env env) -> Napi::Value {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("counts", F64(env, std::move(out->counts)));
                   o.Set("documents", double(out->documents));
                   o.Set("bytes", double(out->bytes));
                   return o;
                 });
}

// substringsLibrary() -> { ok: boolean, message: string }
Napi::Value Library(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Status why;
  const bool ok = substr::SuffixSortAvailable(&why);
  Napi::Object o = Napi::Object::New(env);
  o.Set("ok", ok);
  o.Set("message", why.message());
  return o;
}

}  // namespace

void SubstringsBinding::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("SubstringCorpus", SubstringCorpusObject::Define(env));
  exports.Set("substringsLibrary", Napi::Function::New(env, Library, "substringsLibrary"));
  exports.Set("substringIndexCount", Napi::Function::New(env, IndexCount, "substringIndexCount"));
}

}  // namespace binding
}  // namespace neardup
