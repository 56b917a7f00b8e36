#include "code.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "addon.h"
#include "args.h"
#include "code/match.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

struct CodeState : Closable {
  std::mutex mu;
  std::unique_ptr<code::CodeCorpus> corpus;
};
using CodePtr = std::shared_ptr<CodeState>;

template <typename T>
Napi::Value U32(Napi::Env env, std::vector<T>&& v) {
  const size_t n = v.size();
  Napi::ArrayBuffer ab = ToArrayBuffer(env, std::move(v));
  return Napi::Uint32Array::New(env, n, ab, 0);
}
Napi::Value F64(Napi::Env env, std::vector<double>&& v) {
  const size_t n = v.size();
  Napi::ArrayBuffer ab = ToArrayBuffer(env, std::move(v));
  return Napi::Float64Array::New(env, n, ab, 0);
}

code::LexOptions LexOpts(const Napi::Object& o) {
  code::LexOptions l;
  l.keep_identifiers = GetBool(o, "keepIdentifiers", false);
  l.keep_literals = GetBool(o, "keepLiterals", false);
  return l;
}

code::Lang LangArg(Napi::Env env, const Napi::Value& v) {
  if (!v.IsString()) ThrowTypeError(env, "Expected lang to be a string");
  code::Lang l;
  if (!code::ParseLang(v.As<Napi::String>().Utf8Value(), &l))
    ThrowRangeError(env, "lang must be one of c, cpp, csharp, java, javascript, typescript, go, rust, python");
  return l;
}

// A typed array of n entries (or undefined: zeros).
template <typename T>
std::vector<T> TypedList(Napi::Env env, const Napi::Value& v, napi_typedarray_type type, size_t n, const char* what,
                         const char* type_name) {
  using A = Napi::TypedArrayOf<T>;
  std::vector<T> out(n, 0);
  if (v.IsUndefined()) return out;
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
    ThrowTypeError(env, std::string("Expected ") + what + " to be a " + type_name);
  A a = v.As<A>();
  if (a.ElementLength() != n) ThrowRangeError(env, std::string(what) + " must have one entry per source");
  for (size_t i = 0; i < n; i++) out[i] = a[i];
  return out;
}

class CodeCorpusObject : public Napi::ObjectWrap<CodeCorpusObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "CodeCorpus",
                       {InstanceMethod("add", &CodeCorpusObject::Add), InstanceMethod("match", &CodeCorpusObject::Match),
                        InstanceMethod("files", &CodeCorpusObject::Files), InstanceMethod("close", &CodeCorpusObject::Close)});
  }

  // new CodeCorpus({ k, w, keepIdentifiers, keepLiterals, maxFileBytes })
  explicit CodeCorpusObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CodeCorpusObject>(info), state_(std::make_shared<CodeState>()) {
    Napi::Env env = info.Env();
    Napi::Object o = OptionsObject(env, info[0], "code options");
    code::CorpusOptions co;
    co.k = GetUint32(o, "k", co.k, 1, code::kMaxK);
    co.w = GetUint32(o, "w", co.w, 1, code::kMaxW);
    co.lex = LexOpts(o);
    co.max_file_bytes = GetUint64(o, "maxFileBytes", co.max_file_bytes);
    if (co.max_file_bytes == 0 || co.max_file_bytes >= (uint64_t(1) << 32)) ThrowRangeError(env, "maxFileBytes must be from 1 to 2^32 - 1");
    state_->corpus = std::make_unique<code::CodeCorpus>(co);
  }

 private:
  CodePtr Live(Napi::Env env) { return LiveState(env, state_, "code corpus"); }

  // add({ texts?: TextInput, paths?: string[], langs: Uint8Array, groups?: Uint32Array, base?: Uint8Array })
  //   -> Promise<Uint8Array>: each source's state (0 indexed, 1 binary, 2 invalid UTF-8, 3 too large, 4 base)
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CodePtr s = Live(env);
    Napi::Object o = OptionsObject(env, info[0], "sources");
    auto texts = std::make_shared<TextBatch>();
    auto paths = std::make_shared<std::vector<std::string>>();
    const bool by_path = !o.Get("paths").IsUndefined();
    if (by_path == !o.Get("texts").IsUndefined()) ThrowTypeError(env, "Expected sources to have either texts or paths");
    if (by_path) *paths = PathList(env, o.Get("paths"), "paths");
    else texts->Load(env, o.Get("texts"), "texts");
    const size_t n = by_path ? paths->size() : texts->size();
    if (o.Get("langs").IsUndefined()) ThrowTypeError(env, "Expected langs to be a Uint8Array");
    std::vector<uint8_t> langs = TypedList<uint8_t>(env, o.Get("langs"), napi_uint8_array, n, "langs", "Uint8Array");
    for (uint8_t l : langs)
      if (l >= code::kLangCount) ThrowRangeError(env, "langs holds a value that is no language");
    std::vector<uint32_t> groups = TypedList<uint32_t>(env, o.Get("groups"), napi_uint32_array, n, "groups", "Uint32Array");
    std::vector<uint8_t> base = TypedList<uint8_t>(env, o.Get("base"), napi_uint8_array, n, "base", "Uint8Array");
    auto sources = std::make_shared<std::vector<code::Source>>(n);
    for (size_t i = 0; i < n; i++) {
      code::Source& x = (*sources)[i];
      if (by_path) {
        x.path = (*paths)[i];
      } else {
        x.data = texts->data(i);
        x.size = texts->length(i);
        if (x.data == nullptr) x.data = reinterpret_cast<const uint8_t*>("");
      }
      x.lang = code::Lang(langs[i]);
      x.group = groups[i];
      x.base = base[i] != 0;
    }
    auto states = std::make_shared<std::vector<code::SourceState>>();
    return QueueFn(env,
                   [s, texts, sources, states](const std::atomic<bool>* stop) -> Status {
                     if (s->closed.load()) return Cancelled("code corpus");
                     std::lock_guard<std::mutex> l(s->mu);
                     try {
                       return s->corpus->Add(*sources, states.get(), stop);
                     } catch (const std::bad_alloc&) {
                       return Status(Code::kInternal, "out of memory: the code corpus holds 8 bytes per token of every file");
                     }
                   },
                   [texts, states](Napi::Env env) -> Napi::Value {
                     std::vector<uint8_t> v(states->size());
                     for (size_t i = 0; i < v.size(); i++) v[i] = uint8_t((*states)[i]);
                     const size_t n = v.size();
                     Napi::ArrayBuffer ab = ToArrayBuffer(env, std::move(v));
                     return Napi::Uint8Array::New(env, n, ab, 0);
                   });
  }

  // match({ maxGroups, maxRepeat, mergeGap, minShared, pairBudget }) -> Promise<{ pairs..., regions..., stats }>
  Napi::Value Match(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CodePtr s = Live(env);
    Napi::Object opts = OptionsObject(env, info[0], "match options");
    code::MatchOptions mo;
    mo.max_groups = GetUint32(opts, "maxGroups", mo.max_groups, 0, UINT32_MAX);
    mo.max_repeat = GetUint32(opts, "maxRepeat", mo.max_repeat, 1, UINT32_MAX);
    mo.merge_gap = GetUint32(opts, "mergeGap", mo.merge_gap, 0, UINT32_MAX);
    mo.pair_budget = GetUint64(opts, "pairBudget", mo.pair_budget);
    if (mo.pair_budget == 0) ThrowRangeError(env, "pairBudget must be at least 1");
    const Napi::Value ms = opts.Get("minShared");
    if (!ms.IsUndefined()) {
      if (!ms.IsNumber()) ThrowTypeError(env, "Expected minShared to be a number");
      mo.min_shared = ms.As<Napi::Number>().DoubleValue();
      if (!(mo.min_shared >= 0 && mo.min_shared <= 1)) ThrowRangeError(env, "minShared must be from 0 to 1");
    }
    struct Out {
      std::vector<code::PairResult> pairs;
      code::MatchStats stats;
    };
    auto out = std::make_shared<Out>();
    return QueueFn(env,
                   [s, mo, out](const std::atomic<bool>* stop) mutable -> Status {
                     if (s->closed.load()) return Cancelled("code corpus");
                     std::lock_guard<std::mutex> l(s->mu);
                     mo.stop = stop;
                     try {
                       return s->corpus->Match(mo, &out->pairs, &out->stats);
                     } catch (const std::bad_alloc&) {
                       return Status(Code::kInternal, "out of memory while matching (lower pairBudget, or maxGroups)");
                     }
                   },
                   [out](Napi::Env env) -> Napi::Value {
                     const size_t n = out->pairs.size();
                     size_t nr = 0;
                     for (const auto& p : out->pairs) nr += p.regions.size();
                     CheckResultSize(env, uint64_t(nr) * 4 * 11);
                     std::vector<uint32_t> ga(n), gb(n), rstart(n + 1, 0);
                     std::vector<double> sa(n), sb(n), tok(n), ma(n), mb(n);
                     // the regions' columns, in the order of kRegionColumns
                     static const char* const kRegionColumns[] = {"fileA", "fileB", "aFirstLine", "aLastLine", "bFirstLine", "bLastLine",
                                                                  "tokens", "aBegin", "aEnd", "bBegin", "bEnd"};
                     constexpr size_t kColumns = sizeof(kRegionColumns) / sizeof(kRegionColumns[0]);
                     std::vector<std::vector<uint32_t>> cols(kColumns, std::vector<uint32_t>(nr));
                     size_t r = 0;
                     for (size_t i = 0; i < n; i++) {
                       const code::PairResult& p = out->pairs[i];
                       ga[i] = p.group_a;
                       gb[i] = p.group_b;
                       sa[i] = p.shared_a;
                       sb[i] = p.shared_b;
                       tok[i] = double(p.tokens);
                       ma[i] = double(p.matched_a);
                       mb[i] = double(p.matched_b);
                       for (const code::Region& g : p.regions) {
                         const uint32_t v[kColumns] = {g.file_a, g.file_b, g.a_first_line, g.a_last_line, g.b_first_line, g.b_last_line,
                                                       g.tokens, g.a_begin, g.a_end, g.b_begin, g.b_end};
                         for (size_t c = 0; c < kColumns; c++) cols[c][r] = v[c];
                         r++;
                       }
                       rstart[i + 1] = uint32_t(r);
                     }
                     std::vector<code::PairResult>().swap(out->pairs);
                     Napi::Object o = Napi::Object::New(env);
                     o.Set("groupA", U32(env, std::move(ga)));
                     o.Set("groupB", U32(env, std::move(gb)));
                     o.Set("sharedA", F64(env, std::move(sa)));
                     o.Set("sharedB", F64(env, std::move(sb)));
                     o.Set("tokens", F64(env, std::move(tok)));
                     o.Set("matchedA", F64(env, std::move(ma)));
                     o.Set("matchedB", F64(env, std::move(mb)));
                     o.Set("regionStart", U32(env, std::move(rstart)));
                     Napi::Object rg = Napi::Object::New(env);
                     for (size_t c = 0; c < kColumns; c++) rg.Set(kRegionColumns[c], U32(env, std::move(cols[c])));
                     o.Set("regions", rg);
                     const code::MatchStats& st = out->stats;
                     Napi::Object so = Napi::Object::New(env);
                     so.Set("files", double(st.files));
                     so.Set("baseFiles", double(st.base_files));
                     so.Set("tokens", double(st.tokens));
                     so.Set("fingerprints", double(st.fingerprints));
                     so.Set("baseKgrams", double(st.base_kgrams));
                     so.Set("baseFingerprints", double(st.base_fingerprints));
                     so.Set("boilerplateHashes", double(st.boilerplate_hashes));
                     so.Set("boilerplateFingerprints", double(st.boilerplate_fingerprints));
                     so.Set("repeatedFingerprints", double(st.repeated_fingerprints));
                     so.Set("pairEntries", double(st.pair_entries));
                     so.Set("passes", double(st.passes));
                     so.Set("candidatePairs", double(st.candidate_pairs));
                     so.Set("mems", double(st.mems));
                     so.Set("fingerprintSeconds", st.seconds_fingerprints);
                     so.Set("pairSeconds", st.seconds_pairs);
                     o.Set("stats", so);
                     return o;
                   });
  }

  Napi::Value Files(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CodePtr s = Live(env);
    std::lock_guard<std::mutex> l(s->mu);
    return Napi::Number::New(env, double(s->corpus->files()));
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    CloseState(&state_);
    return info.Env().Undefined();
  }

  CodePtr state_;
};

// codeTokens(text: string | Uint8Array, lang, { keepIdentifiers, keepLiterals })
//   -> { kind: Uint8Array, value, begin, end, line: Uint32Array, seconds }: on the calling thread.
Napi::Value Tokens(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TextBatch t;
  Napi::Array one = Napi::Array::New(env, 1);
  one.Set(uint32_t(0), info[0]);
  t.Load(env, one, "text");
  const code::Lang lang = LangArg(env, info[1]);
  Napi::Object o = OptionsObject(env, info[2], "token options");
  const code::LexOptions lex = LexOpts(o);
  if (t.length(0) >= (uint64_t(1) << 32)) ThrowRangeError(env, "text must be shorter than 4 GiB");
  std::vector<code::Token> toks;
  const auto t0 = std::chrono::steady_clock::now();
  code::Tokenize(t.data(0), t.length(0), lang, lex, &toks);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t n = toks.size();
  std::vector<uint8_t> kind(n);
  std::vector<uint32_t> value(n), begin(n), end(n), line(n);
  for (size_t i = 0; i < n; i++) {
    kind[i] = uint8_t(toks[i].kind);
    value[i] = toks[i].value;
    begin[i] = toks[i].begin;
    end[i] = toks[i].end;
    line[i] = toks[i].line;
  }
  Napi::Object r = Napi::Object::New(env);
  Napi::ArrayBuffer kab = ToArrayBuffer(env, std::move(kind));
  r.Set("kind", Napi::Uint8Array::New(env, n, kab, 0));
  r.Set("value", U32(env, std::move(value)));
  r.Set("begin", U32(env, std::move(begin)));
  r.Set("end", U32(env, std::move(end)));
  r.Set("line", U32(env, std::move(line)));
  r.Set("seconds", secs);
  return r;
}

}  // namespace

void CodeBinding::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("CodeCorpus", CodeCorpusObject::Define(env));
  exports.Set("codeTokens", Napi::Function::New(env, Tokens, "codeTokens"));
}

}  // namespace binding
}  // namespace neardup
