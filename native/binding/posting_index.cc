#include "posting_index.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "addon.h"
#include "hash/crc32c.h"
#include "args.h"
#include "parallel/pool.h"
#include "io/file.h"
#include "io/os.h"
#include "postings/blot.h"
#include "postings/passages.h"
#include "postings/store.h"
#include "text/utf8.h"
#include "util/js_number.h"
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

std::vector<uint8_t> U8Arg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, std::string("Expected ") + what + " to be a Uint8Array");
  Napi::Uint8Array a = v.As<Napi::Uint8Array>();
  return std::vector<uint8_t>(a.Data(), a.Data() + a.ElementLength());
}

std::string StringArg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsString()) ThrowTypeError(env, std::string("Expected ") + what + " to be a string");
  return v.As<Napi::String>().Utf8Value();
}

// An optional folder for temporary files (undefined or not a string: none); a path with a NUL is refused.
std::string TmpArg(Napi::Env env, const Napi::Value& v) {
  return v.IsString() ? PathArg(env, v, "tmp") : std::string();
}

// Optional commit data (a Uint8Array; undefined: the index's commit data is kept).
std::shared_ptr<std::string> CommitDataArg(Napi::Env env, const Napi::Value& v) {
  if (v.IsUndefined()) return nullptr;
  std::vector<uint8_t> b = U8Arg(env, v, "commitData");
  return std::make_shared<std::string>(b.begin(), b.end());
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
  b.bits = GetUint32(o, "bits", 32, 32, 64);
  if (b.bits != 32 && b.bits != 64) ThrowRangeError(env, "blot bits must be 32 or 64");
  if (b.bits == 64 && b.profile == postings::BlotProfile::kDupi) ThrowRangeError(env, "the dupi blot profile has 32-bit blots only");
  return b;
}

// Per-document blot results, concatenated after a parallel pass.
struct BlotResult {
  std::vector<uint32_t> blots, doc_offsets, text_begin, text_end, tok_begin, tok_end;
  std::vector<uint64_t> blots64;  // bits = 64
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
      p.blots64 = bl.blots64();
      for (size_t j = 0; j < bl.num_blots(); j++) {
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
    r->blots64.insert(r->blots64.end(), p.blots64.begin(), p.blots64.end());
    r->text_begin.insert(r->text_begin.end(), p.text_begin.begin(), p.text_begin.end());
    r->text_end.insert(r->text_end.end(), p.text_end.begin(), p.text_end.end());
    r->tok_begin.insert(r->tok_begin.end(), p.tok_begin.begin(), p.tok_begin.end());
    r->tok_end.insert(r->tok_end.end(), p.tok_end.begin(), p.tok_end.end());
    r->doc_offsets.push_back(uint32_t(r->blots.size() + r->blots64.size()));
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
               [texts, r, bo](Napi::Env env) {
                 Napi::Object o = Napi::Object::New(env);
                 if (bo.bits == 64)
                   o.Set("blots", NewBigUint64Array(env, std::move(r->blots64)));
                 else
                   o.Set("blots", U32Array(env, std::move(r->blots)));
                 o.Set("docOffsets", U32Array(env, std::move(r->doc_offsets)));
                 o.Set("textBegins", U32Array(env, std::move(r->text_begin)));
                 o.Set("textEnds", U32Array(env, std::move(r->text_end)));
                 o.Set("tokenBegins", U32Array(env, std::move(r->tok_begin)));
                 o.Set("tokenEnds", U32Array(env, std::move(r->tok_end)));
                 return o;
               });
}

// ------------------------------------------------------------------------------------- PostingIndex

// The indexed documents' ids as JSON texts (document d's: json[offs[d] .. offs[d + 1])), for the passage
// functions that format their output lines natively (setDocIds).
struct IdTable {
  std::vector<uint8_t> json;
  std::vector<uint64_t> offs;
  size_t size() const { return offs.empty() ? 0 : offs.size() - 1; }
  uint64_t Bytes(uint32_t d) const { return d < size() ? offs[d + 1] - offs[d] : 0; }
  void Append(uint32_t d, std::vector<uint8_t>* out) const {
    out->insert(out->end(), json.begin() + long(offs[d]), json.begin() + long(offs[d + 1]));
  }
};

// An index of 32- or 64-bit keys (fixed when it was created), and its open streaming append, if any.
struct IndexState : Closable {
  std::shared_mutex mu;  // edits exclusive; lookups shared
  unsigned bits = 32;
  postings::PostingIndex ix32;
  postings::PostingIndex64 ix64;
  std::unique_ptr<postings::PostingIndex::Appender> app32;
  std::unique_ptr<postings::PostingIndex64::Appender> app64;
  std::mutex cursor_mu;  // the open extracts (PostingIndexObject::ExtractStart) and the ids
  std::map<uint32_t, std::shared_ptr<struct ExtractCursor>> cursors;
  uint32_t next_cursor = 0;
  std::shared_ptr<const IdTable> ids;
};
using StatePtr = std::shared_ptr<IndexState>;

template <typename Key>
struct Width;
template <>
struct Width<uint32_t> {
  static postings::PostingIndex& Ix(IndexState& s) { return s.ix32; }
  static std::unique_ptr<postings::PostingIndex::Appender>& App(IndexState& s) { return s.app32; }
};
template <>
struct Width<uint64_t> {
  static postings::PostingIndex64& Ix(IndexState& s) { return s.ix64; }
  static std::unique_ptr<postings::PostingIndex64::Appender>& App(IndexState& s) { return s.app64; }
};

// Keys of the index's width: a Uint32Array (32-bit keys) or a BigUint64Array (64-bit keys).
struct KeysArg {
  std::vector<uint32_t> k32;
  std::vector<uint64_t> k64;
  size_t size() const { return k32.size() + k64.size(); }
};
KeysArg ReadKeys(Napi::Env env, const Napi::Value& v, unsigned bits, const char* what) {
  KeysArg k;
  const napi_typedarray_type want = bits == 64 ? napi_biguint64_array : napi_uint32_array;
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != want)
    ThrowTypeError(env, std::string("Expected ") + what + (bits == 64 ? " to be a BigUint64Array (the index has 64-bit keys)"
                                                                      : " to be a Uint32Array (the index has 32-bit keys)"));
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  const uint8_t* d = static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
  if (bits == 64) {
    k.k64.resize(ta.ElementLength());
    if (!k.k64.empty()) std::memcpy(k.k64.data(), d, k.k64.size() * 8);
  } else {
    k.k32.resize(ta.ElementLength());
    if (!k.k32.empty()) std::memcpy(k.k32.data(), d, k.k32.size() * 4);
  }
  return k;
}
std::vector<uint32_t> OffsetsArg(Napi::Env env, const Napi::Value& v, size_t nkeys) {
  std::vector<uint32_t> offs = U32Arg(env, v, "offsets");
  if (offs.empty() || offs[0] != 0 || offs.back() != nkeys) ThrowRangeError(env, "offsets must start at 0 and end at keys.length");
  for (size_t i = 1; i < offs.size(); i++)
    if (offs[i] < offs[i - 1]) ThrowRangeError(env, "offsets must not decrease");
  return offs;
}

Status NoAppend() { return Status(Code::kInvalidArgument, "no append is in progress (call beginAppend first)"); }

// Adds documents (keys[offsets[i] .. offsets[i+1]) each) to an appender; their ids to ids.
template <typename Appender, typename Key>
Status AddDocs(Appender* app, const Key* keys, const uint32_t* offs, size_t ndocs, std::vector<uint32_t>* ids) {
  if (!app) return NoAppend();
  ids->resize(ndocs);
  for (size_t i = 0; i < ndocs; i++) {
    Status st = app->Add(keys + offs[i], offs[i + 1] - offs[i], &(*ids)[i]);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

// A whole append in one call (its own appender: an open streaming append is left alone).
template <typename Key>
Status AppendOnce(IndexState& s, const Key* keys, const uint32_t* offs, size_t ndocs, uint64_t memory, const std::string& tmp,
                  unsigned key_bits, std::vector<uint32_t>* ids, const std::atomic<bool>* stop) {
  std::unique_ptr<typename postings::BasicPostingIndex<Key>::Appender> app;
  Status st = Width<Key>::Ix(s).StartAppend(memory, tmp, key_bits, &app);
  if (st.ok()) st = AddDocs(app.get(), keys, offs, ndocs, ids);
  if (st.ok()) st = app->Commit(stop);
  return st;
}

template <typename Key>
Status Begin(IndexState& s, uint64_t memory, const std::string& tmp, unsigned key_bits) {
  return Width<Key>::Ix(s).StartAppend(memory, tmp, key_bits, &Width<Key>::App(s));
}

template <typename Key>
Status Commit(IndexState& s, const std::atomic<bool>* stop, const std::string* data) {
  auto& app = Width<Key>::App(s);
  if (!app) return NoAppend();
  Status st = app->Commit(stop, data);
  app.reset();  // committed, or discarded on failure
  return st;
}

template <typename Key>
Status LookupAll(IndexState& s, const std::vector<Key>& keys, std::vector<uint32_t>* docs, std::vector<uint32_t>* offs,
                 const std::atomic<bool>* stop) {
  std::vector<std::vector<uint32_t>> part(keys.size());
  Status err;
  std::mutex em;
  const auto& ix = Width<Key>::Ix(s);
  parallel::ParallelFor(keys.size(), 256, parallel::MaxSlots(), [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; i++) {
      Status st = ix.Lookup(keys[i], &part[i]);
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
}

// Every key with live documents, ascending, and its count (from the key blocks alone when there is one
// segment and no tombstone).
template <typename Key>
Status KeyCountsOf(IndexState& s, std::vector<Key>* keys, std::vector<uint32_t>* counts) {
  const auto& ix = Width<Key>::Ix(s);
  if (ix.num_segments() == 1 && ix.tombstones().empty()) {
    const auto& seg = ix.segment(0);
    typename postings::BasicSegment<Key>::Block blk;
    for (uint64_t b = 0; b < seg.num_blocks(); b++) {
      Status st = seg.ReadBlock(b, &blk);
      if (!st.ok()) return st;
      keys->insert(keys->end(), blk.keys, blk.keys + blk.n);
      counts->insert(counts->end(), blk.counts, blk.counts + blk.n);
    }
    return Status::Ok();
  }
  return ix.ForEach([&](Key k, const std::vector<uint32_t>& d) {
    keys->push_back(k);
    counts->push_back(uint32_t(d.size()));
    return Status::Ok();
  });
}

// The indexed documents' texts for the passage functions: { files: string[], file: Uint32Array,
// offset: Float64Array, length: Uint32Array, crc?: Uint32Array } (document d = length[d] bytes at offset[d] of
// files[file[d]]), read from memory-mapped files. With crc, a document's text is checked against crc[d]
// (its CRC-32C, from the document list) the first time it is read; documents whose list carries no CRC
// (an index written before they did) have pending[d] = 0 from the start.
struct TextSource {
  std::vector<std::string> names;
  std::vector<uint32_t> file, length, crc;
  std::vector<double> offset;
  std::vector<io::MappedFile> maps;
  std::unique_ptr<std::atomic<uint8_t>[]> pending;  // 1: the text's CRC is still to be checked
  Status Open() {
    maps.resize(names.size());
    for (size_t i = 0; i < names.size(); i++) {
      Status s = maps[i].Open(names[i]);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  postings::TextFn Fn() const {
    return [this](uint32_t d, const uint8_t** t, size_t* n) -> Status {
      if (d >= file.size() || file[d] >= maps.size())
        return Status(Code::kCorrupt, "document " + std::to_string(d) + " is not in the document lists");
      const io::MappedFile& m = maps[file[d]];
      const double off = offset[d];
      if (off < 0 || off + length[d] > double(m.size()))
        return Status(Code::kCorrupt, "'" + names[file[d]] + "' is shorter than its document list says (document " +
                                          std::to_string(d) + ")");
      *t = m.data() + size_t(off);
      *n = length[d];
      if (pending && pending[d].load(std::memory_order_relaxed)) {
        if (Crc32c(*t, *n) != crc[d])
          return Status(Code::kCorrupt, "'" + names[file[d]] + "' is corrupt at offset " + std::to_string(uint64_t(off)) +
                                            ": the text of document " + std::to_string(d) + " does not match its checksum");
        pending[d].store(0, std::memory_order_relaxed);
      }
      return Status::Ok();
    };
  }
};

// The longest a pairs line can be besides its two ids: {"a":,"b":,"passages":U32,"windows":U32,"coverA":NUM,
// "coverB":NUM}\n with numbers as JavaScript writes doubles (at most 24 characters each).
constexpr uint64_t kPairLineFixed = 5 + 5 + 12 + 10 + 11 + 10 + 10 + 24 + 10 + 24 + 2 + 17;

// An extract (or pairs) in progress: its passages or pairs (spilled beyond the cap) and the texts they are
// read from.
struct ExtractCursor {
  std::mutex mu;
  std::shared_ptr<TextSource> texts;
  postings::PassageExtractor x;
  postings::PassagePairFinder pairs;
  std::shared_ptr<const IdTable> ids;  // the index's when the extract started (for formatted lines)
  unsigned bits = 32;                  // the blots' width (the hex digits of extract's "blot": bits / 4)
  std::vector<uint8_t> lines;          // pairsNext's formatted lines, reused from call to call
  size_t longest_id = SIZE_MAX;        // of ids, once measured (pairsNext into a caller's buffer)
};

std::shared_ptr<TextSource> ReadTextSource(Napi::Env env, const Napi::Value& v) {
  if (!v.IsObject()) ThrowTypeError(env, "Expected texts to be { files, file, offset, length }");
  Napi::Object o = v.As<Napi::Object>();
  auto ts = std::make_shared<TextSource>();
  Napi::Value files = o.Get("files");
  if (!files.IsArray()) ThrowTypeError(env, "Expected texts.files to be an array of strings");
  Napi::Array fa = files.As<Napi::Array>();
  for (uint32_t i = 0; i < fa.Length(); i++) ts->names.push_back(PathArg(env, fa.Get(i), "texts.files[i]"));
  ts->file = U32Arg(env, o.Get("file"), "texts.file");
  ts->length = U32Arg(env, o.Get("length"), "texts.length");
  Napi::Value off = o.Get("offset");
  if (!off.IsTypedArray() || off.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    ThrowTypeError(env, "Expected texts.offset to be a Float64Array");
  Napi::Float64Array fo = off.As<Napi::Float64Array>();
  ts->offset.assign(fo.Data(), fo.Data() + fo.ElementLength());
  if (ts->offset.size() != ts->file.size() || ts->length.size() != ts->file.size())
    ThrowRangeError(env, "texts.file, texts.offset and texts.length must have one entry per document");
  Napi::Value crc = o.Get("crc");
  if (!crc.IsUndefined()) {
    ts->crc = U32Arg(env, crc, "texts.crc");
    std::vector<uint8_t> check = U8Arg(env, o.Get("check"), "texts.check");
    if (ts->crc.size() != ts->file.size() || check.size() != ts->file.size())
      ThrowRangeError(env, "texts.crc and texts.check must have one entry per document");
    ts->pending = std::make_unique<std::atomic<uint8_t>[]>(check.size());
    for (size_t i = 0; i < check.size(); i++) ts->pending[i].store(check[i] ? 1 : 0, std::memory_order_relaxed);
  }
  return ts;
}

class PostingIndexObject : public Napi::ObjectWrap<PostingIndexObject> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "PostingIndex",
                       {InstanceMethod("append", &PostingIndexObject::Append),
                        InstanceMethod("appendTexts", &PostingIndexObject::AppendTexts),
                        InstanceMethod("beginAppend", &PostingIndexObject::BeginAppend),
                        InstanceMethod("addKeys", &PostingIndexObject::AddKeys),
                        InstanceMethod("addTexts", &PostingIndexObject::AddTexts),
                        InstanceMethod("commitAppend", &PostingIndexObject::CommitAppend),
                        InstanceMethod("abortAppend", &PostingIndexObject::AbortAppend),
                        InstanceMethod("delete", &PostingIndexObject::Delete),
                        InstanceMethod("merge", &PostingIndexObject::Merge),
                        InstanceMethod("appendIndexes", &PostingIndexObject::AppendIndexes),
                        InstanceMethod("appendKeyRanges", &PostingIndexObject::AppendKeyRanges),
                        InstanceMethod("lookup", &PostingIndexObject::Lookup),
                        InstanceMethod("keyCounts", &PostingIndexObject::KeyCounts),
                        InstanceMethod("formatLists", &PostingIndexObject::FormatLists),
                        InstanceMethod("dupiOrder", &PostingIndexObject::DupiOrder),
                        InstanceMethod("setDocIds", &PostingIndexObject::SetDocIds),
                        InstanceMethod("extractStart", &PostingIndexObject::ExtractStart),
                        InstanceMethod("extractNext", &PostingIndexObject::ExtractNext),
                        InstanceMethod("extractEnd", &PostingIndexObject::ExtractEnd),
                        InstanceMethod("queryPassages", &PostingIndexObject::QueryPassages),
                        InstanceMethod("pairsStart", &PostingIndexObject::PairsStart),
                        InstanceMethod("pairsNext", &PostingIndexObject::PairsNext),
                        InstanceMethod("info", &PostingIndexObject::Info),
                        InstanceMethod("commitData", &PostingIndexObject::CommitData),
                        InstanceMethod("close", &PostingIndexObject::Close)});
  }
  explicit PostingIndexObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<PostingIndexObject>(info) {}
  StatePtr state;

 private:
  StatePtr Live(Napi::Env env) { return LiveState(env, state, "posting index"); }

  // Runs fn(state) on the pool under the exclusive lock.
  static Napi::Value Exclusive(Napi::Env env, StatePtr s, std::function<Status(IndexState&, const std::atomic<bool>*)> fn,
                               std::function<Napi::Value(Napi::Env)> resolve) {
    return Queue(env,
                 [s, fn](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::unique_lock<std::shared_mutex> l(s->mu);
                   return fn(*s, stop);
                 },
                 std::move(resolve));
  }
  static Napi::Value Undefined(Napi::Env env) { return env.Undefined(); }

  // append(keys: Uint32Array | BigUint64Array, offsets: Uint32Array, memory, tmpDir) -> Promise<Uint32Array ids>
  Napi::Value Append(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto keys = std::make_shared<KeysArg>(ReadKeys(env, info[0], s->bits, "keys"));
    auto offs = std::make_shared<std::vector<uint32_t>>(OffsetsArg(env, info[1], keys->size()));
    const uint64_t memory = ToUint64(env, info[2], "memory");
    const std::string tmp = TmpArg(env, info[3]);
    auto ids = std::make_shared<std::vector<uint32_t>>();
    return Exclusive(env, s,
                     [keys, offs, memory, tmp, ids](IndexState& st, const std::atomic<bool>* stop) {
                       const size_t n = offs->size() - 1;
                       return st.bits == 64 ? AppendOnce<uint64_t>(st, keys->k64.data(), offs->data(), n, memory, tmp, 64, ids.get(), stop)
                                            : AppendOnce<uint32_t>(st, keys->k32.data(), offs->data(), n, memory, tmp, 32, ids.get(), stop);
                     },
                     [ids](Napi::Env env) { return U32Array(env, std::move(*ids)); });
  }

  // Blots texts on the pool (32-bit keys = blot mod keyModulus, 0: the full blots): the keys of documents
  // [16 c, 16 c + 16) are parts[c] (one allocation per 16 documents, reused blotters).
  template <typename Key>
  struct KeyPart {
    std::vector<Key> keys;
    std::vector<uint32_t> offs;
  };
  // Key: uint32_t (bo.bits 32) or uint64_t (bo.bits 64).
  template <typename Key>
  static Status BlotKeys(const Docs& d, const BlotOptions& bo, uint64_t modulus, const std::atomic<bool>* stop,
                         std::vector<KeyPart<Key>>* parts) {
    constexpr size_t kGrain = 16;
    parts->resize((d.n + kGrain - 1) / kGrain);
    const size_t slots = parallel::MaxSlots();
    std::vector<std::unique_ptr<postings::Blotter>> blotters(slots);
    parallel::ParallelFor(d.n, kGrain, slots, [&](size_t b, size_t e, size_t slot) {
      if (!blotters[slot]) blotters[slot] = std::make_unique<postings::Blotter>(bo);
      postings::Blotter& bl = *blotters[slot];
      KeyPart<Key>& p = (*parts)[b / kGrain];
      p.offs.assign(1, 0);
      for (size_t i = b; i < e; i++) {
        bl.RunBlots(d.ptr[i], d.len[i]);
        const size_t at = p.keys.size();
        if (sizeof(Key) == 8)
          p.keys.insert(p.keys.end(), bl.blots64().begin(), bl.blots64().end());
        else
          p.keys.insert(p.keys.end(), bl.blots().begin(), bl.blots().end());
        if (modulus)
          for (size_t j = at; j < p.keys.size(); j++) p.keys[j] = Key(p.keys[j] % modulus);
        p.offs.push_back(uint32_t(p.keys.size()));
      }
    }, stop);
    if (stop->load()) return Status(Code::kCancelled, "cancelled");
    return Status::Ok();
  }
  template <typename Appender, typename Key>
  static Status AddParts(Appender* app, const std::vector<KeyPart<Key>>& parts, std::vector<uint32_t>* ids) {
    std::vector<uint32_t> part_ids;
    for (const KeyPart<Key>& p : parts) {
      Status st = AddDocs(app, p.keys.data(), p.offs.data(), p.offs.size() - 1, &part_ids);
      if (!st.ok()) return st;
      ids->insert(ids->end(), part_ids.begin(), part_ids.end());
    }
    return Status::Ok();
  }

  void Need32(Napi::Env env, const StatePtr& s, const char* what) {
    if (s->bits != 32) ThrowTypeError(env, std::string(what) + " needs an index of 32-bit keys (blots)");
  }
  // The index as the passage searches see it (its keys widened to 64 bits).
  static postings::BlotIndex BlotIx(const IndexState& s) {
    return s.bits == 64 ? postings::BlotIndex(s.ix64) : postings::BlotIndex(s.ix32);
  }

  // The blots' width must be the index's keys' (a key modulus: 32-bit blots).
  void NeedWidth(Napi::Env env, const StatePtr& s, const BlotOptions& bo, uint64_t modulus, const char* what) {
    if (modulus && bo.bits != 32) ThrowRangeError(env, std::string(what) + ": a key modulus needs 32-bit blots");
    if (s->bits != bo.bits)
      ThrowTypeError(env, std::string(what) + " with " + std::to_string(bo.bits) + "-bit blots needs an index of " +
                              std::to_string(bo.bits) + "-bit keys (this one has " + std::to_string(s->bits) + "-bit keys)");
  }
  template <typename Key>
  static Status AppendTextsAs(IndexState& st, const Docs& d, const BlotOptions& bo, uint64_t modulus, uint64_t memory,
                              const std::string& tmp, std::vector<uint32_t>* ids, const std::atomic<bool>* stop) {
    std::vector<KeyPart<Key>> parts;
    Status r = BlotKeys<Key>(d, bo, modulus, stop, &parts);
    if (!r.ok()) return r;
    std::unique_lock<std::shared_mutex> l(st.mu);
    std::unique_ptr<typename postings::BasicPostingIndex<Key>::Appender> app;
    r = Width<Key>::Ix(st).StartAppend(memory, tmp, modulus ? postings::BitWidth(modulus - 1) : unsigned(8 * sizeof(Key)), &app);
    if (r.ok()) r = AddParts(app.get(), parts, ids);
    if (r.ok()) r = app->Commit(stop);
    return r;
  }
  template <typename Key>
  static Status AddTextsAs(IndexState& st, const Docs& d, const BlotOptions& bo, uint64_t modulus, std::vector<uint32_t>* ids,
                           const std::atomic<bool>* stop) {
    std::vector<KeyPart<Key>> parts;
    Status r = BlotKeys<Key>(d, bo, modulus, stop, &parts);
    if (!r.ok()) return r;
    std::unique_lock<std::shared_mutex> l(st.mu);
    auto& app = Width<Key>::App(st);
    if (!app) return NoAppend();
    return AddParts(app.get(), parts, ids);
  }

  // appendTexts(texts, blotOptions, keyModulus, memory, tmpDir) -> Promise<Uint32Array ids>
  Napi::Value AppendTexts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[0], "texts");
    const BlotOptions bo = ReadBlotOptions(env, info[1]);
    const uint64_t modulus = ToUint64(env, info[2], "keyModulus");
    NeedWidth(env, s, bo, modulus, "appendTexts");
    const uint64_t memory = ToUint64(env, info[3], "memory");
    const std::string tmp = TmpArg(env, info[4]);
    auto ids = std::make_shared<std::vector<uint32_t>>();
    return Queue(env,
                 [s, texts, bo, modulus, memory, tmp, ids](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   return bo.bits == 64 ? AppendTextsAs<uint64_t>(*s, texts->docs(), bo, modulus, memory, tmp, ids.get(), stop)
                                        : AppendTextsAs<uint32_t>(*s, texts->docs(), bo, modulus, memory, tmp, ids.get(), stop);
                 },
                 [texts, ids](Napi::Env env) { return U32Array(env, std::move(*ids)); });
  }

  // beginAppend(memory, tmpDir, keyBits) -> Promise<void>: opens a streaming append (one new segment).
  Napi::Value BeginAppend(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    const uint64_t memory = ToUint64(env, info[0], "memory");
    const std::string tmp = TmpArg(env, info[1]);
    const uint64_t key_bits = info[2].IsUndefined() ? s->bits : ToUint64(env, info[2], "keyBits");
    if (key_bits < 1 || key_bits > s->bits) ThrowRangeError(env, "keyBits must be between 1 and the index's key width");
    return Exclusive(env, s,
                     [memory, tmp, key_bits](IndexState& st, const std::atomic<bool>*) {
                       return st.bits == 64 ? Begin<uint64_t>(st, memory, tmp, unsigned(key_bits))
                                            : Begin<uint32_t>(st, memory, tmp, unsigned(key_bits));
                     },
                     Undefined);
  }

  // addKeys(keys, offsets) -> Promise<Uint32Array ids>
  Napi::Value AddKeys(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto keys = std::make_shared<KeysArg>(ReadKeys(env, info[0], s->bits, "keys"));
    auto offs = std::make_shared<std::vector<uint32_t>>(OffsetsArg(env, info[1], keys->size()));
    auto ids = std::make_shared<std::vector<uint32_t>>();
    return Exclusive(env, s,
                     [keys, offs, ids](IndexState& st, const std::atomic<bool>*) {
                       const size_t n = offs->size() - 1;
                       return st.bits == 64 ? AddDocs(st.app64.get(), keys->k64.data(), offs->data(), n, ids.get())
                                            : AddDocs(st.app32.get(), keys->k32.data(), offs->data(), n, ids.get());
                     },
                     [ids](Napi::Env env) { return U32Array(env, std::move(*ids)); });
  }

  // addTexts(texts, blotOptions, keyModulus) -> Promise<Uint32Array ids>: blots on the pool, then adds.
  Napi::Value AddTexts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto texts = std::make_shared<TextBatch>();
    texts->Load(env, info[0], "texts");
    const BlotOptions bo = ReadBlotOptions(env, info[1]);
    const uint64_t modulus = ToUint64(env, info[2], "keyModulus");
    NeedWidth(env, s, bo, modulus, "addTexts");
    auto ids = std::make_shared<std::vector<uint32_t>>();
    return Queue(env,
                 [s, texts, bo, modulus, ids](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   return bo.bits == 64 ? AddTextsAs<uint64_t>(*s, texts->docs(), bo, modulus, ids.get(), stop)
                                        : AddTextsAs<uint32_t>(*s, texts->docs(), bo, modulus, ids.get(), stop);
                 },
                 [texts, ids](Napi::Env env) { return U32Array(env, std::move(*ids)); });
  }

  // commitAppend(commitData?: Uint8Array) -> Promise<void>: writes the new segment and the manifest (with the
  // new commit data, when given).
  Napi::Value CommitAppend(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto data = CommitDataArg(env, info[0]);
    return Exclusive(env, s,
                     [data](IndexState& st, const std::atomic<bool>* stop) {
                       return st.bits == 64 ? Commit<uint64_t>(st, stop, data.get()) : Commit<uint32_t>(st, stop, data.get());
                     },
                     Undefined);
  }

  // commitData() -> Buffer | null: the commit data of the manifest this object holds.
  Napi::Value CommitData(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    std::shared_lock<std::shared_mutex> l(s->mu);
    const std::string& d = s->bits == 64 ? s->ix64.commit_data() : s->ix32.commit_data();
    if (d.empty()) return env.Null();
    return Napi::Buffer<char>::Copy(env, d.data(), d.size());
  }

  // abortAppend() -> Promise<void>: discards the open append (no-op when there is none).
  Napi::Value AbortAppend(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    return Exclusive(env, s,
                     [](IndexState& st, const std::atomic<bool>*) {
                       st.app32.reset();
                       st.app64.reset();
                       return Status::Ok();
                     },
                     Undefined);
  }

  Napi::Value Delete(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto ids = std::make_shared<std::vector<uint32_t>>(U32Arg(env, info[0], "ids"));
    return Exclusive(env, s,
                     [ids](IndexState& st, const std::atomic<bool>*) {
                       return st.bits == 64 ? st.ix64.Delete(*ids) : st.ix32.Delete(*ids);
                     },
                     Undefined);
  }

  Napi::Value Merge(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    return Exclusive(env, s,
                     [](IndexState& st, const std::atomic<bool>* stop) {
                       return st.bits == 64 ? st.ix64.Merge(stop) : st.ix32.Merge(stop);
                     },
                     Undefined);
  }

  // appendIndexes(dirs: string[], commitData?) -> Promise<void>: the documents of other indexes as one new segment
  Napi::Value AppendIndexes(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto dirs = std::make_shared<std::vector<std::string>>(PathList(env, info[0], "dirs"));
    auto data = CommitDataArg(env, info[1]);
    return Exclusive(env, s,
                     [dirs, data](IndexState& st, const std::atomic<bool>* stop) {
                       return st.bits == 64 ? st.ix64.AppendIndexes(*dirs, stop, data.get()) : st.ix32.AppendIndexes(*dirs, stop, data.get());
                     },
                     Undefined);
  }

  // appendKeyRanges(files: string[], documents, commitData?) -> Promise<void>: the key ranges of writeKeyRange as one
  // new segment
  Napi::Value AppendKeyRanges(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto files = std::make_shared<std::vector<std::string>>(PathList(env, info[0], "files"));
    const uint64_t documents = ToUint64(env, info[1], "documents");
    auto data = CommitDataArg(env, info[2]);
    return Exclusive(env, s,
                     [files, documents, data](IndexState& st, const std::atomic<bool>* stop) {
                       return st.bits == 64 ? st.ix64.AppendKeyRanges(*files, documents, stop, data.get())
                                            : st.ix32.AppendKeyRanges(*files, documents, stop, data.get());
                     },
                     Undefined);
  }

  // lookup(keys) -> Promise<{ docs: Uint32Array, offsets: Uint32Array }>
  Napi::Value Lookup(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto keys = std::make_shared<KeysArg>(ReadKeys(env, info[0], s->bits, "keys"));
    auto docs = std::make_shared<std::vector<uint32_t>>();
    auto offs = std::make_shared<std::vector<uint32_t>>();
    return Queue(env,
                 [s, keys, docs, offs](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::shared_lock<std::shared_mutex> l(s->mu);
                   return s->bits == 64 ? LookupAll<uint64_t>(*s, keys->k64, docs.get(), offs.get(), stop)
                                        : LookupAll<uint32_t>(*s, keys->k32, docs.get(), offs.get(), stop);
                 },
                 [docs, offs](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("docs", U32Array(env, std::move(*docs)));
                   o.Set("offsets", U32Array(env, std::move(*offs)));
                   return o;
                 });
  }

  // formatLists(keys: Uint32Array, table: Uint8Array, tableOffsets: Uint32Array, out: Uint8Array, start)
  //   -> Promise<{ next, bytes, need }>
  // dupi's extract lines, written into out (reused by the caller: no allocation per line): from keys[start],
  // one line per key (32-bit index): the key in lower-case hex without leading zeros, then for each live
  // document d of its list a space and table[tableOffsets[d] .. tableOffsets[d + 1]), then "\n", as long as
  // lines fit. next = the first key not written, bytes = bytes written, need = the size of line `next` when
  // it did not fit in an empty out (0 otherwise).
  Napi::Value FormatLists(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    Need32(env, s, "formatLists");
    struct Job {
      Napi::Reference<Napi::Value> keep[3];
      const uint32_t* keys;
      size_t nkeys;
      const uint8_t* table;
      const uint32_t* toffs;
      size_t rows;
      uint8_t* out;
      size_t cap, start, next = 0, bytes = 0, need = 0;
    };
    auto job = std::make_shared<Job>();
    for (int i : {0, 2}) {
      if (!info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
        ThrowTypeError(env, i == 0 ? "Expected keys to be a Uint32Array" : "Expected tableOffsets to be a Uint32Array");
    }
    for (int i : {1, 3}) {
      if (!info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        ThrowTypeError(env, i == 1 ? "Expected table to be a Uint8Array" : "Expected out to be a Uint8Array");
    }
    Napi::Uint32Array k = info[0].As<Napi::Uint32Array>(), to = info[2].As<Napi::Uint32Array>();
    Napi::Uint8Array tab = info[1].As<Napi::Uint8Array>(), out = info[3].As<Napi::Uint8Array>();
    job->keys = k.Data();
    job->nkeys = k.ElementLength();
    job->table = tab.Data();
    job->toffs = to.Data();
    job->rows = to.ElementLength() ? to.ElementLength() - 1 : 0;
    job->out = out.Data();
    job->cap = out.ElementLength();
    job->start = size_t(ToUint64(env, info[4], "start"));
    if (job->start > job->nkeys) ThrowRangeError(env, "start must be at most keys.length");
    for (size_t i = 0; i < to.ElementLength(); i++)
      if (job->toffs[i] > tab.ElementLength() || (i > 0 && job->toffs[i] < job->toffs[i - 1]))
        ThrowRangeError(env, "tableOffsets must ascend within the table");
    job->keep[0] = Napi::Persistent(info[0]);
    job->keep[1] = Napi::Persistent(info[1]);
    job->keep[2] = Napi::Persistent(info[3]);  // the JS arrays stay alive (and unmoved) while the job runs
    return Queue(env,
                 [s, job](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::shared_lock<std::shared_mutex> l(s->mu);
                   Job& j = *job;
                   std::vector<uint32_t> docs;
                   size_t at = 0, i = j.start;
                   for (; i < j.nkeys && !stop->load(); i++) {
                     Status st = s->ix32.Lookup(j.keys[i], &docs);
                     if (!st.ok()) return st;
                     char hex[9];
                     size_t h = 0;
                     for (uint32_t v = j.keys[i]; h == 0 || v; v >>= 4) hex[h++] = "0123456789abcdef"[v & 15];
                     size_t len = h + 1;
                     for (uint32_t d : docs) {
                       if (d >= j.rows) return Status(Code::kCorrupt, "document " + std::to_string(d) + " is not in the document table");
                       len += 1 + j.toffs[d + 1] - j.toffs[d];
                     }
                     if (at + len > j.cap) {
                       if (at == 0) j.need = len;
                       break;
                     }
                     uint8_t* o = j.out + at;
                     while (h) *o++ = uint8_t(hex[--h]);
                     for (uint32_t d : docs) {
                       *o++ = ' ';
                       std::memcpy(o, j.table + j.toffs[d], j.toffs[d + 1] - j.toffs[d]);
                       o += j.toffs[d + 1] - j.toffs[d];
                     }
                     *o++ = '\n';
                     at += len;
                   }
                   j.next = i;
                   j.bytes = at;
                   return Status::Ok();
                 },
                 [job](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("next", double(job->next));
                   o.Set("bytes", double(job->bytes));
                   o.Set("need", double(job->need));
                   for (auto& r : job->keep) r.Reset();
                   return o;
                 });
  }

  // dupiOrder(shards, sigma) -> Promise<{ order: Uint32Array, posts, mean, sigma }>: dupi's statistics and
  // extract order over an index of reduced blots (keys < shards x 65536; postings::DupiExtractOrder).
  Napi::Value DupiOrder(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    Need32(env, s, "dupiOrder");
    const uint64_t shards = ToUint64(env, info[0], "shards");
    if (shards < 1 || shards > 1024) ThrowRangeError(env, "shards must be between 1 and 1024");
    if (!info[1].IsNumber()) ThrowTypeError(env, "Expected sigma to be a number");
    const double sigma = info[1].As<Napi::Number>().DoubleValue();
    auto order = std::make_shared<std::vector<uint32_t>>();
    auto st = std::make_shared<postings::DupiStats>();
    return Queue(env,
                 [s, shards, sigma, order, st](const std::atomic<bool>*) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::vector<uint32_t> keys, counts;
                   {
                     std::shared_lock<std::shared_mutex> l(s->mu);
                     Status r = KeyCountsOf<uint32_t>(*s, &keys, &counts);
                     if (!r.ok()) return r;
                   }
                   std::vector<std::vector<uint32_t>> per(shards, std::vector<uint32_t>(65536));
                   for (size_t i = 0; i < keys.size(); i++) {
                     if (keys[i] >= shards * 65536)
                       return Status(Code::kCorrupt, "key " + std::to_string(keys[i]) + " is not a reduced blot of " +
                                                         std::to_string(shards) + " shards");
                     per[keys[i] % shards][keys[i] / shards] = counts[i];
                   }
                   postings::DupiExtractOrder(per, sigma, order.get(), st.get());
                   return Status::Ok();
                 },
                 [order, st](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("order", U32Array(env, std::move(*order)));
                   o.Set("posts", double(st->posts));
                   o.Set("mean", st->mean);
                   o.Set("sigma", st->sigma);
                   return o;
                 });
  }

  // setDocIds(json: Uint8Array, offsets: Float64Array): the documents' ids as JSON texts (document d's:
  // json[offsets[d] .. offsets[d + 1])), copied, for the lines extractNext and queryPassages format.
  Napi::Value SetDocIds(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    Napi::Value j = info[0], of = info[1];
    if (!j.IsTypedArray() || j.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      ThrowTypeError(env, "Expected json to be a Uint8Array");
    if (!of.IsTypedArray() || of.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
      ThrowTypeError(env, "Expected offsets to be a Float64Array");
    Napi::Uint8Array ja = j.As<Napi::Uint8Array>();
    Napi::Float64Array oa = of.As<Napi::Float64Array>();
    auto t = std::make_shared<IdTable>();
    t->json.assign(ja.Data(), ja.Data() + ja.ElementLength());
    for (size_t i = 0; i < oa.ElementLength(); i++) {
      const double v = oa[i];
      if (!(v >= 0 && v <= double(ja.ElementLength())) || (i > 0 && v < double(t->offs.back())))
        ThrowRangeError(env, "offsets must ascend within json");
      t->offs.push_back(uint64_t(v));
    }
    std::lock_guard<std::mutex> g(s->cursor_mu);
    s->ids = std::move(t);
    return env.Undefined();
  }

  // extractStart(sigma, minDocs, memory, tmpDir, texts, blotOptions) -> Promise<{ cursor, threshold,
  // keys, mean, sd, ... }>: computes dupi's cut-off and every passage in bounded memory
  // (postings::PassageExtractor, spilling into tmpDir beyond `memory`; 0 = no cap); extractNext(cursor, ...)
  // then reads them in order and extractEnd(cursor) frees them (and removes the spill files).
  Napi::Value ExtractStart(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    if (!info[0].IsNumber()) ThrowTypeError(env, "Expected sigma to be a number");
    const double sigma = info[0].As<Napi::Number>().DoubleValue();
    const uint64_t min_docs = ToUint64(env, info[1], "minDocs");
    const uint64_t memory = ToUint64(env, info[2], "memory");
    const std::string tmp = TmpArg(env, info[3]);
    auto ts = ReadTextSource(env, info[4]);
    const BlotOptions bo = ReadBlotOptions(env, info[5]);
    NeedWidth(env, s, bo, 0, "a passage search");
    auto cur = std::make_shared<ExtractCursor>();
    cur->texts = ts;
    cur->bits = bo.bits;
    {
      std::lock_guard<std::mutex> g(s->cursor_mu);
      cur->ids = s->ids;
    }
    auto cut = std::make_shared<postings::CutOff>();
    uint32_t id;
    {
      std::lock_guard<std::mutex> g(s->cursor_mu);
      id = ++s->next_cursor;
      s->cursors[id] = cur;
    }
    return Queue(env,
                 [s, cur, cut, sigma, min_docs, memory, tmp, bo](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   Status r = cur->texts->Open();
                   if (!r.ok()) return r;
                   std::shared_lock<std::shared_mutex> l(s->mu);
                   r = postings::ExtractCutOff(BlotIx(*s), sigma, min_docs, stop, cut.get());
                   if (!r.ok()) return r;
                   postings::ExtractOptions o;
                   o.memory = memory;
                   o.tmp_dir = tmp;
                   o.slots = parallel::MaxSlots();
                   return cur->x.Start(BlotIx(*s), cut->threshold, bo, cur->texts->Fn(), o, stop);
                 },
                 [id, cut, cur](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("cursor", double(id));
                   o.Set("threshold", double(cut->threshold));
                   o.Set("keys", double(cut->keys));
                   o.Set("mean", cut->mean);
                   o.Set("sd", cut->sd);
                   const auto& c = cur->x.counters();
                   o.Set("chosenKeys", double(c.chosen_keys));
                   o.Set("passages", double(c.passages));
                   o.Set("spilledBytes", double(c.spilled_bytes));
                   o.Set("peakBytes", double(cur->x.peak_bytes()));
                   return o;
                 });
  }

  // extractNext(cursor, maxOccurrences, maxTextBytes, lines) -> Promise<{ done, windows, firstBlot, docOffsets,
  // docs, begins, ends, text }>: the next passages (passage i's documents are docs[docOffsets[i] ..
  // docOffsets[i + 1]), their texts back to back in text), up to about maxOccurrences occurrences and
  // maxTextBytes of text (at least one passage); done once none is left. With lines (the cursor has ids):
  // { done, passages, lines } instead, lines = the passages as JSON lines, byte for byte what
  // JSON.stringify writes for PassageIndex.extract's objects.
  Napi::Value ExtractNext(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    std::shared_ptr<ExtractCursor> cur = CursorOf(env, s, info[0]);
    const uint64_t max_occ = std::max<uint64_t>(1, ToUint64(env, info[1], "maxOccurrences"));
    const uint64_t max_text = std::max<uint64_t>(1, ToUint64(env, info[2], "maxTextBytes"));
    if (info.Length() > 3 && info[3].ToBoolean().Value()) {
      if (!cur->ids || cur->ids->size() < cur->texts->file.size())
        ThrowTypeError(env, "this extract was started without the documents' ids (setDocIds): it cannot format lines");
      return ExtractLines(env, cur, max_occ, max_text);
    }
    struct Out {
      bool done = false;
      std::vector<uint32_t> windows, offs{0}, docs, begins, ends;
      std::vector<uint64_t> first;
      std::vector<uint8_t> text;
    };
    auto out = std::make_shared<Out>();
    return Queue(env,
                 [cur, out, max_occ, max_text](const std::atomic<bool>* stop) {
                   std::lock_guard<std::mutex> g(cur->mu);  // one read at a time
                   const postings::TextFn fn = cur->texts->Fn();
                   std::vector<postings::Passage> ps;
                   uint64_t occ = 0;
                   while (!out->done && occ < max_occ && out->text.size() < max_text) {
                     if (stop->load()) return Status(Code::kCancelled, "cancelled");
                     ps.clear();
                     Status r = cur->x.Next(1, &ps, &out->done);
                     if (!r.ok()) return r;
                     for (const auto& p : ps) {
                       out->windows.push_back(p.windows);
                       out->first.push_back(p.first_blot);
                       for (const auto& o : p.docs) {
                         const uint8_t* t = nullptr;
                         size_t n = 0;
                         r = fn(o.doc, &t, &n);
                         if (!r.ok()) return r;
                         if (o.end > n || o.begin > o.end) return Status(Code::kInternal, "passage outside its document");
                         out->text.insert(out->text.end(), t + o.begin, t + o.end);
                         out->docs.push_back(o.doc), out->begins.push_back(o.begin), out->ends.push_back(o.end);
                       }
                       occ += p.docs.size();
                       out->offs.push_back(uint32_t(out->docs.size()));
                     }
                   }
                   return Status::Ok();
                 },
                 [out](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("done", out->done);
                   o.Set("windows", U32Array(env, std::move(out->windows)));
                   o.Set("firstBlot", NewBigUint64Array(env, std::move(out->first)));
                   o.Set("docOffsets", U32Array(env, std::move(out->offs)));
                   o.Set("docs", U32Array(env, std::move(out->docs)));
                   o.Set("begins", U32Array(env, std::move(out->begins)));
                   o.Set("ends", U32Array(env, std::move(out->ends)));
                   const size_t n = out->text.size();
                   o.Set("text", Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out->text)), 0));
                   return o;
                 });
  }

  static Napi::Value ExtractLines(Napi::Env env, std::shared_ptr<ExtractCursor> cur, uint64_t max_occ, uint64_t max_bytes) {
    struct Out {
      bool done = false;
      uint64_t passages = 0;
      std::vector<uint8_t> lines;
    };
    auto out = std::make_shared<Out>();
    return Queue(env,
                 [cur, out, max_occ, max_bytes](const std::atomic<bool>* stop) {
                   std::lock_guard<std::mutex> g(cur->mu);
                   const postings::TextFn fn = cur->texts->Fn();
                   std::vector<postings::Passage> ps;
                   std::vector<uint8_t>& o = out->lines;
                   uint64_t occ = 0;
                   char num[96];
                   while (!out->done && occ < max_occ && o.size() < max_bytes) {
                     if (stop->load()) return Status(Code::kCancelled, "cancelled");
                     ps.clear();
                     Status r = cur->x.Next(1, &ps, &out->done);
                     if (!r.ok()) return r;
                     for (const auto& p : ps) {
                       int k = std::snprintf(num, sizeof num, "{\"blot\":\"%0*llx\",\"count\":%zu,\"windows\":%u,\"docs\":[",
                                             int(cur->bits / 4), static_cast<unsigned long long>(p.first_blot), p.docs.size(), p.windows);
                       o.insert(o.end(), num, num + k);
                       for (size_t i = 0; i < p.docs.size(); i++) {
                         const auto& x = p.docs[i];
                         const uint8_t* t = nullptr;
                         size_t n = 0;
                         r = fn(x.doc, &t, &n);
                         if (!r.ok()) return r;
                         if (x.end > n || x.begin > x.end) return Status(Code::kInternal, "passage outside its document");
                         if (x.doc >= cur->ids->size()) return Status(Code::kInternal, "document without an id");
                         static const char kId[] = "{\"id\":";
                         if (i) o.push_back(',');
                         o.insert(o.end(), kId, kId + 6);
                         cur->ids->Append(x.doc, &o);
                         k = std::snprintf(num, sizeof num, ",\"begin\":%u,\"end\":%u,\"text\":", x.begin, x.end);
                         o.insert(o.end(), num, num + k);
                         utf8::AppendJsonString(t + x.begin, x.end - x.begin, &o);
                         o.push_back('}');
                       }
                       static const char kEnd[] = "]}\n";
                       o.insert(o.end(), kEnd, kEnd + 3);
                       occ += p.docs.size();
                       out->passages++;
                     }
                   }
                   return Status::Ok();
                 },
                 [out](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("done", out->done);
                   o.Set("passages", double(out->passages));
                   const size_t n = out->lines.size();
                   o.Set("lines", Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out->lines)), 0));
                   return o;
                 });
  }

  // extractEnd(cursor): frees an extract's passages and removes its spill files (once a running
  // extractNext on it has finished).
  Napi::Value ExtractEnd(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!state) return env.Undefined();
    const uint32_t id = uint32_t(ToUint64(env, info[0], "cursor"));
    std::lock_guard<std::mutex> g(state->cursor_mu);
    state->cursors.erase(id);
    return env.Undefined();
  }

  static std::shared_ptr<ExtractCursor> CursorOf(Napi::Env env, const StatePtr& s, const Napi::Value& v) {
    const uint64_t id = ToUint64(env, v, "cursor");
    std::lock_guard<std::mutex> g(s->cursor_mu);
    auto it = s->cursors.find(uint32_t(id));
    if (id > 0xffffffffu || it == s->cursors.end()) ThrowRangeError(env, "no such extract cursor (ended, or never started)");
    return it->second;
  }

  // queryPassages(queryTexts, texts, blotOptions, minPassages, maxDocs, lines) -> Promise<{ matchOffsets, doc,
  // windows, runOffsets, qBegin, qEnd, dBegin, dEnd, runWindows }>: query i's matches are
  // [matchOffsets[i], matchOffsets[i + 1]), match m's runs [runOffsets[m], runOffsets[m + 1]). With lines
  // (after setDocIds): { lines, lineOffsets } instead, query i's matches formatted as the JSON array of
  // PassageIndex.query's objects in lines[lineOffsets[i] .. lineOffsets[i + 1]).
  // The windows of nominated documents kept across the queries of one call (20 bytes per window).
  static constexpr size_t kQueryCacheBytes = size_t(256) << 20;

  Napi::Value QueryPassages(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto q = std::make_shared<TextBatch>();
    q->Load(env, info[0], "queryTexts");
    auto ts = ReadTextSource(env, info[1]);
    const BlotOptions bo = ReadBlotOptions(env, info[2]);
    NeedWidth(env, s, bo, 0, "a passage search");
    const uint64_t min_passages = ToUint64(env, info[3], "minPassages");
    const uint64_t max_docs = ToUint64(env, info[4], "maxDocs");
    if (min_passages > 0xffffffffu || max_docs > 0xffffffffu) ThrowRangeError(env, "minPassages and maxDocs must be below 2^32");
    std::shared_ptr<const IdTable> ids;
    if (info.Length() > 5 && info[5].ToBoolean().Value()) {
      std::lock_guard<std::mutex> g(s->cursor_mu);
      ids = s->ids;
      if (!ids || ids->size() < ts->file.size()) ThrowTypeError(env, "the documents' ids were not set (setDocIds): no lines can be formatted");
    }
    struct Out {
      std::vector<uint32_t> moffs{0}, doc, windows, roffs{0}, qb, qe, db, de, rw;
      std::vector<uint8_t> text;  // each run's text in the indexed document, back to back
      std::vector<uint8_t> lines;  // or each query's matches as a JSON array, back to back
      std::vector<double> line_offs{0};
    };
    auto out = std::make_shared<Out>();
    return Queue(env,
                 [s, q, ts, bo, min_passages, max_docs, out, ids](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   Status r = ts->Open();
                   if (!r.ok()) return r;
                   std::shared_lock<std::shared_mutex> l(s->mu);
                   const Docs d = q->docs();
                   const size_t slots = parallel::MaxSlots();
                   std::vector<std::vector<postings::QueryMatch>> m(d.n);
                   Status err;
                   std::mutex em;
                   const postings::TextFn fn = ts->Fn();
                   {
                     postings::WindowsCache cache(kQueryCacheBytes);
                     parallel::ParallelFor(d.n, 1, slots, [&](size_t b, size_t e, size_t) {
                       postings::Blotter bl(bo);
                       postings::Windows qw;
                       for (size_t i = b; i < e; i++) {
                         postings::WindowsOf(&bl, d.ptr[i], d.len[i], &qw);
                         Status st = postings::QueryPassages(BlotIx(*s), qw, bo, fn, uint32_t(min_passages), uint32_t(max_docs), &m[i], &cache, &bl);
                         if (!st.ok()) {
                           std::lock_guard<std::mutex> g(em);
                           err = st;
                           return;
                         }
                       }
                     }, stop);
                   }
                   // The cache (up to kQueryCacheBytes, freed in small pieces by every thread) is handed back
                   // to the system: glibc would otherwise keep it in the threads' arenas, and a long run of
                   // calls crept from 0.76 to 1.0 GiB.
                   io::os::ReleaseFreeMemory();
                   if (!err.ok()) return err;
                   if (stop->load()) return Status(Code::kCancelled, "cancelled");
                   if (ids) return FormatMatches(m, fn, *ids, &out->lines, &out->line_offs);
                   for (size_t i = 0; i < d.n; i++) {
                     for (size_t k = 0; k < m[i].size(); k++) {
                       const auto& x = m[i][k];
                       const uint8_t* t = nullptr;
                       size_t tn = 0;
                       Status st = fn(x.doc, &t, &tn);
                       if (!st.ok()) return st;
                       out->doc.push_back(x.doc);
                       out->windows.push_back(x.windows);
                       for (const auto& sp : x.spans) {
                         if (sp.d_end > tn || sp.d_begin > sp.d_end) return Status(Code::kInternal, "passage outside its document");
                         out->text.insert(out->text.end(), t + sp.d_begin, t + sp.d_end);
                         out->qb.push_back(sp.q_begin);
                         out->qe.push_back(sp.q_end);
                         out->db.push_back(sp.d_begin);
                         out->de.push_back(sp.d_end);
                         out->rw.push_back(sp.windows);
                       }
                       out->roffs.push_back(uint32_t(out->rw.size()));
                     }
                     out->moffs.push_back(uint32_t(out->doc.size()));
                   }
                   return Status::Ok();
                 },
                 [q, out, ids](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   if (ids) {
                     const size_t n = out->lines.size();
                     o.Set("lines", Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out->lines)), 0));
                     Napi::Float64Array lo = Napi::Float64Array::New(env, out->line_offs.size());
                     std::copy(out->line_offs.begin(), out->line_offs.end(), lo.Data());
                     o.Set("lineOffsets", lo);
                     return o;
                   }
                   o.Set("matchOffsets", U32Array(env, std::move(out->moffs)));
                   o.Set("doc", U32Array(env, std::move(out->doc)));
                   o.Set("windows", U32Array(env, std::move(out->windows)));
                   o.Set("runOffsets", U32Array(env, std::move(out->roffs)));
                   o.Set("qBegin", U32Array(env, std::move(out->qb)));
                   o.Set("qEnd", U32Array(env, std::move(out->qe)));
                   o.Set("dBegin", U32Array(env, std::move(out->db)));
                   o.Set("dEnd", U32Array(env, std::move(out->de)));
                   o.Set("runWindows", U32Array(env, std::move(out->rw)));
                   const size_t n = out->text.size();
                   o.Set("text", Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(out->text)), 0));
                   return o;
                 });
  }

  // Each query's matches as the JSON array PassageIndex.query's objects stringify to:
  // [{"id","passages","windows","spans":[{"windows","query":[b,e],"doc":[b,e],"text"}]}], back to back.
  static Status FormatMatches(const std::vector<std::vector<postings::QueryMatch>>& m, const postings::TextFn& fn,
                              const IdTable& ids, std::vector<uint8_t>* o, std::vector<double>* offs) {
    char num[128];
    {
      // room for the texts (as is: plain text needs few escapes) and the numbers, so that a large passage's
      // line is not grown by doubling (a copy, and up to twice the room, beside it)
      uint64_t want = 0;
      for (const auto& matches : m) {
        want += 2;
        for (const auto& x : matches) {
          want += 96 + ids.Bytes(x.doc);
          for (const auto& sp : x.spans) want += 96 + uint64_t(sp.d_end - sp.d_begin);
        }
      }
      o->reserve(o->size() + want);
    }
    for (const auto& matches : m) {
      o->push_back('[');
      for (size_t k = 0; k < matches.size(); k++) {
        const auto& x = matches[k];
        const uint8_t* t = nullptr;
        size_t tn = 0;
        Status st = fn(x.doc, &t, &tn);
        if (!st.ok()) return st;
        if (x.doc >= ids.size()) return Status(Code::kInternal, "document without an id");
        static const char kId[] = "{\"id\":";
        if (k) o->push_back(',');
        o->insert(o->end(), kId, kId + 6);
        ids.Append(x.doc, o);
        int n = std::snprintf(num, sizeof num, ",\"passages\":%zu,\"windows\":%u,\"spans\":[", x.spans.size(), x.windows);
        o->insert(o->end(), num, num + n);
        for (size_t j = 0; j < x.spans.size(); j++) {
          const auto& sp = x.spans[j];
          if (sp.d_end > tn || sp.d_begin > sp.d_end) return Status(Code::kInternal, "passage outside its document");
          n = std::snprintf(num, sizeof num, "%s{\"windows\":%u,\"query\":[%u,%u],\"doc\":[%u,%u],\"text\":", j ? "," : "", sp.windows,
                            sp.q_begin, sp.q_end, sp.d_begin, sp.d_end);
          o->insert(o->end(), num, num + n);
          utf8::AppendJsonString(t + sp.d_begin, sp.d_end - sp.d_begin, o);
          o->push_back('}');
        }
        o->insert(o->end(), {']', '}'});
      }
      o->push_back(']');
      offs->push_back(double(o->size()));
    }
    return Status::Ok();
  }

  // pairsStart(minPassages, maxDocs, memory, tmpDir, texts, blotOptions) -> Promise<{ cursor, eligibleKeys,
  // occurrences, pairs, partitions, blocks, spilledBytes, peakBytes }>: every pair of documents sharing
  // passages, in bounded memory (postings::PassagePairFinder, spilling into tmpDir beyond `memory`; 0 = no
  // cap); pairsNext(cursor, ...) then reads them in order and extractEnd(cursor) frees them (and removes
  // the spill files).
  Napi::Value PairsStart(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    const uint64_t min_passages = ToUint64(env, info[0], "minPassages");
    const uint64_t max_docs = ToUint64(env, info[1], "maxDocs");
    if (min_passages > 0xffffffffu || max_docs > 0xffffffffu) ThrowRangeError(env, "minPassages and maxDocs must be below 2^32");
    const uint64_t memory = ToUint64(env, info[2], "memory");
    const std::string tmp = TmpArg(env, info[3]);
    auto ts = ReadTextSource(env, info[4]);
    const BlotOptions bo = ReadBlotOptions(env, info[5]);
    NeedWidth(env, s, bo, 0, "a passage search");
    auto cur = std::make_shared<ExtractCursor>();
    cur->texts = ts;
    cur->bits = bo.bits;
    uint32_t id;
    {
      std::lock_guard<std::mutex> g(s->cursor_mu);
      cur->ids = s->ids;
      id = ++s->next_cursor;
      s->cursors[id] = cur;
    }
    return Queue(env,
                 [s, cur, min_passages, max_docs, memory, tmp, bo](const std::atomic<bool>* stop) {
                   if (s->closed.load()) return Cancelled("posting index");
                   Status r = cur->texts->Open();
                   if (!r.ok()) return r;
                   std::shared_lock<std::shared_mutex> l(s->mu);
                   postings::PairsOptions o;
                   o.memory = memory;
                   o.tmp_dir = tmp;
                   o.slots = parallel::MaxSlots();
                   return cur->pairs.Start(BlotIx(*s), bo, cur->texts->Fn(), uint32_t(min_passages), uint32_t(max_docs), o, stop);
                 },
                 [id, cur](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   const auto& c = cur->pairs.counters();
                   o.Set("cursor", double(id));
                   o.Set("eligibleKeys", double(c.eligible_keys));
                   o.Set("occurrences", double(c.occurrences));
                   o.Set("matches", double(c.matches));
                   o.Set("pairs", double(c.pairs));
                   o.Set("partitions", double(c.partitions));
                   o.Set("blocks", double(c.blocks));
                   o.Set("spilledBytes", double(c.spilled_bytes));
                   o.Set("peakBytes", double(cur->pairs.peak_bytes()));
                   return o;
                 });
  }

  // pairsNext(cursor, maxPairs, lines, into?) -> Promise<{ done, a, b, passages, windows, bytesA, bytesB }>: the
  // next pairs (up to maxPairs); done once none is left. With lines (the cursor has ids): { done, pairs,
  // lines } instead, lines = the pairs as JSON lines, byte for byte what JSON.stringify writes for
  // PassageIndex.pairs's objects (cover = covered bytes / the document's text length). With a Uint8Array
  // `into` as well, the lines are written into it and { done, pairs, bytes } returned: as many pairs as surely
  // fit (a line is at most kPairLineFixed bytes plus its two ids), so no buffer is made per call; when not even
  // one line surely fits, `into` is not used.
  Napi::Value PairsNext(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    std::shared_ptr<ExtractCursor> cur = CursorOf(env, s, info[0]);
    uint64_t max_pairs = std::max<uint64_t>(1, ToUint64(env, info[1], "maxPairs"));
    const bool lines = info.Length() > 2 && info[2].ToBoolean().Value();
    if (lines && (!cur->ids || cur->ids->size() < cur->texts->file.size()))
      ThrowTypeError(env, "these pairs were started without the documents' ids (setDocIds): they cannot be formatted");
    struct Out {
      bool done = false;
      std::vector<postings::PairSummary> p;
      std::vector<uint8_t> lines;
      uint8_t* into = nullptr;
      size_t bytes = 0;
      Napi::Reference<Napi::Value> keep;
    };
    auto out = std::make_shared<Out>();
    if (lines && info.Length() > 3 && !info[3].IsUndefined()) {
      if (!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        ThrowTypeError(env, "Expected into to be a Uint8Array");
      Napi::Uint8Array into = info[3].As<Napi::Uint8Array>();
      if (cur->longest_id == SIZE_MAX) {
        size_t m = 0;
        for (size_t d = 0; d < cur->ids->size(); d++) m = std::max<size_t>(m, cur->ids->offs[d + 1] - cur->ids->offs[d]);
        cur->longest_id = m;
      }
      const uint64_t line = kPairLineFixed + 2 * uint64_t(cur->longest_id);
      if (into.ByteLength() >= line) {  // else (ids of megabytes) the lines come in a new buffer, as without into
        max_pairs = std::min<uint64_t>(max_pairs, into.ByteLength() / line);
        out->into = into.Data();
        out->keep = Napi::Persistent(info[3]);  // alive (and unmoved) while the job runs
      }
    }
    return Queue(env,
                 [cur, out, max_pairs, lines](const std::atomic<bool>* stop) {
                   std::lock_guard<std::mutex> g(cur->mu);  // one read at a time
                   if (stop->load()) return Status(Code::kCancelled, "cancelled");
                   Status r = cur->pairs.Next(size_t(std::min<uint64_t>(max_pairs, uint64_t(1) << 24)), &out->p, &out->done);
                   if (!r.ok() || !lines) return r;
                   const IdTable& ids = *cur->ids;
                   const std::vector<uint32_t>& len = cur->texts->length;
                   std::vector<uint8_t>& o = out->into ? cur->lines : out->lines;
                   o.clear();
                   char num[160];
                   for (const auto& x : out->p) {
                     if (x.a >= ids.size() || x.b >= ids.size() || x.a >= len.size() || x.b >= len.size())
                       return Status(Code::kInternal, "document without an id");
                     static const char kA[] = "{\"a\":", kB[] = ",\"b\":";
                     o.insert(o.end(), kA, kA + 5);
                     ids.Append(x.a, &o);
                     o.insert(o.end(), kB, kB + 5);
                     ids.Append(x.b, &o);
                     int k = std::snprintf(num, sizeof num, ",\"passages\":%u,\"windows\":%u,\"coverA\":", x.passages, x.windows);
                     size_t n = size_t(k);
                     n += FormatJsNumber(len[x.a] ? double(x.bytes_a) / double(len[x.a]) : 0.0, num + n);
                     static const char kC[] = ",\"coverB\":";
                     std::memcpy(num + n, kC, 10);
                     n += 10;
                     n += FormatJsNumber(len[x.b] ? double(x.bytes_b) / double(len[x.b]) : 0.0, num + n);
                     num[n++] = '}';
                     num[n++] = '\n';
                     o.insert(o.end(), num, num + n);
                   }
                   if (out->into) {
                     std::memcpy(out->into, o.data(), o.size());
                     out->bytes = o.size();
                   }
                   return Status::Ok();
                 },
                 [out, lines](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("done", out->done);
                   const size_t n = out->p.size();
                   if (out->into) {
                     out->keep.Reset();
                     o.Set("pairs", double(n));
                     o.Set("bytes", double(out->bytes));
                     return o;
                   }
                   if (lines) {
                     o.Set("pairs", double(n));
                     const size_t nb = out->lines.size();
                     o.Set("lines", Napi::Uint8Array::New(env, nb, ToArrayBuffer(env, std::move(out->lines)), 0));
                     return o;
                   }
                   std::vector<uint32_t> a(n), b(n), p(n), w(n);
                   Napi::Float64Array ba = Napi::Float64Array::New(env, n), bb = Napi::Float64Array::New(env, n);
                   for (size_t i = 0; i < n; i++) {
                     const auto& x = out->p[i];
                     a[i] = x.a, b[i] = x.b, p[i] = x.passages, w[i] = x.windows;
                     ba[i] = double(x.bytes_a), bb[i] = double(x.bytes_b);
                   }
                   o.Set("a", U32Array(env, std::move(a)));
                   o.Set("b", U32Array(env, std::move(b)));
                   o.Set("passages", U32Array(env, std::move(p)));
                   o.Set("windows", U32Array(env, std::move(w)));
                   o.Set("bytesA", ba);
                   o.Set("bytesB", bb);
                   return o;
                 });
  }

  // keyCounts() -> Promise<{ keys: Uint32Array | BigUint64Array, counts: Uint32Array }>
  Napi::Value KeyCounts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    auto keys = std::make_shared<KeysArg>();
    auto counts = std::make_shared<std::vector<uint32_t>>();
    return Queue(env,
                 [s, keys, counts](const std::atomic<bool>*) {
                   if (s->closed.load()) return Cancelled("posting index");
                   std::shared_lock<std::shared_mutex> l(s->mu);
                   return s->bits == 64 ? KeyCountsOf<uint64_t>(*s, &keys->k64, counts.get())
                                        : KeyCountsOf<uint32_t>(*s, &keys->k32, counts.get());
                 },
                 [s, keys, counts](Napi::Env env) {
                   Napi::Object o = Napi::Object::New(env);
                   o.Set("keys", s->bits == 64 ? NewBigUint64Array(env, std::move(keys->k64)) : U32Array(env, std::move(keys->k32)));
                   o.Set("counts", U32Array(env, std::move(*counts)));
                   return o;
                 });
  }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    StatePtr s = Live(env);
    std::shared_lock<std::shared_mutex> l(s->mu);
    Napi::Object o = Napi::Object::New(env);
    auto fill = [&](const auto& ix) {
      uint64_t posts = 0, keys = 0;
      for (size_t i = 0; i < ix.num_segments(); i++) posts += ix.segment(i).num_posts(), keys += ix.segment(i).num_keys();
      o.Set("keyBits", double(s->bits));
      o.Set("nextId", double(ix.next_id()));
      o.Set("liveDocs", double(ix.live_docs()));
      o.Set("segments", double(ix.num_segments()));
      o.Set("tombstones", double(ix.tombstones().size()));
      o.Set("freeIds", double(ix.free_ids().size()));
      o.Set("posts", double(posts));
      o.Set("keys", double(keys));
      o.Set("appending", s->app32 != nullptr || s->app64 != nullptr);
    };
    if (s->bits == 64)
      fill(s->ix64);
    else
      fill(s->ix32);
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (state) {
      std::lock_guard<std::mutex> g(state->cursor_mu);
      state->cursors.clear();  // their spill files go (a running extractNext keeps its cursor until it ends)
    }
    CloseState(&state);
    return info.Env().Undefined();
  }
};

// createPostingIndex(dir, keyBits) (sync, creates the folder and an empty manifest)
Napi::Value CreateIndex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string dir = PathArg(env, info[0], "dir");
  const uint64_t bits = info[1].IsUndefined() ? 32 : ToUint64(env, info[1], "keyBits");
  if (bits != 32 && bits != 64) ThrowRangeError(env, "keyBits must be 32 or 64");
  Status s = bits == 64 ? postings::PostingIndex64::Create(dir) : postings::PostingIndex::Create(dir);
  if (!s.ok()) throw StatusError(env, s);
  return env.Undefined();
}

// writeKeyRange(partDirs, out, firstId, range, ranges, tmpDir) -> Promise<{ keys, posts }>: key range `range`
// of `ranges` of the parts' merged lists, ids from firstId, as the segment file `out`
Napi::Value WriteKeyRange(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto dirs = std::make_shared<std::vector<std::string>>(PathList(env, info[0], "partDirs"));
  if (dirs->empty()) ThrowRangeError(env, "partDirs must name at least one index");
  const std::string out = PathArg(env, info[1], "out");
  const uint64_t first = ToUint64(env, info[2], "firstId"), range = ToUint64(env, info[3], "range"), ranges = ToUint64(env, info[4], "ranges");
  if (first > 0xFFFFFFFFull) ThrowRangeError(env, "firstId must be below 2^32");
  if (ranges < 1 || ranges > 0xFFFFFFFFull || range >= ranges) ThrowRangeError(env, "range must be below ranges (1 .. 2^32 - 1)");
  const std::string tmp = info[5].IsUndefined() ? std::string() : PathArg(env, info[5], "tmpDir");
  auto counts = std::make_shared<std::pair<uint64_t, uint64_t>>();
  return Queue(env,
               [dirs, out, first, range, ranges, tmp, counts](const std::atomic<bool>* stop) {
                 unsigned bits = 32;
                 Status s = postings::IndexKeyBits((*dirs)[0], &bits);
                 if (!s.ok()) return s;
                 return bits == 64 ? postings::PostingIndex64::WriteKeyRange(*dirs, uint32_t(first), uint32_t(range), uint32_t(ranges), out, tmp, stop, &counts->first, &counts->second)
                                   : postings::PostingIndex::WriteKeyRange(*dirs, uint32_t(first), uint32_t(range), uint32_t(ranges), out, tmp, stop, &counts->first, &counts->second);
               },
               [counts](Napi::Env env) {
                 Napi::Object o = Napi::Object::New(env);
                 o.Set("keys", Napi::Number::New(env, double(counts->first)));
                 o.Set("posts", Napi::Number::New(env, double(counts->second)));
                 return o;
               });
}

}  // namespace

void PostingIndexClass::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = PostingIndexObject::Define(env);
  auto* ref = new Napi::FunctionReference(Napi::Persistent(cls));
  env.AddCleanupHook([ref] { delete ref; });
  exports.Set("blotBatch", Napi::Function::New(env, BlotBatch, "blotBatch"));
  exports.Set("createPostingIndex", Napi::Function::New(env, CreateIndex, "createPostingIndex"));
  exports.Set("writeKeyRange", Napi::Function::New(env, WriteKeyRange, "writeKeyRange"));
  // openPostingIndex(dir, verify) -> Promise<PostingIndex>
  exports.Set("openPostingIndex", Napi::Function::New(env, [ref](const Napi::CallbackInfo& info) -> Napi::Value {
    Napi::Env env = info.Env();
    const std::string dir = PathArg(env, info[0], "dir");
    const bool verify = info[1].ToBoolean();
    auto st = std::make_shared<IndexState>();
    return Queue(env,
                 [st, dir, verify](const std::atomic<bool>*) {
                   Status r = postings::IndexKeyBits(dir, &st->bits);
                   if (!r.ok()) return r;
                   return st->bits == 64 ? st->ix64.Open(dir, verify) : st->ix32.Open(dir, verify);
                 },
                 [st, ref](Napi::Env env) {
                   Napi::Object o = ref->New({});
                   PostingIndexObject::Unwrap(o)->state = st;
                   return o;
                 });
  }, "openPostingIndex"));
}

}  // namespace binding
}  // namespace neardup
