#include "jsonl.h"

#include <memory>
#include <string>
#include <vector>

#include "addon.h"
#include "args.h"
#include "io/line_reader.h"
#include "io/zstd_stream.h"
#include "parallel/pool.h"
#include "text/jsonl_batch.h"

namespace neardup {
namespace binding {
namespace {

const uint8_t* BytesOf(const Napi::Uint8Array& a) {
  return static_cast<const uint8_t*>(a.ArrayBuffer().Data()) + a.ByteOffset();
}

Napi::Uint8Array ExpectBytes(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected " + what + " to be a Uint8Array (Buffer)");
  return v.As<Napi::Uint8Array>();
}

jsonl::FieldPath FieldPathArg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsString()) ThrowTypeError(env, std::string("Expected ") + what + " to be a string");
  jsonl::FieldPath p;
  const Status s = jsonl::ParseFieldPath(v.As<Napi::String>().Utf8Value(), &p);
  if (!s.ok()) ThrowRangeError(env, s.message());
  return p;
}

// parseFieldPath(spec): the path's parts ("meta.content" -> ["meta", "content"]; "\." is a dot in a name).
Napi::Value ParseFieldPath(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const jsonl::FieldPath p = FieldPathArg(env, info[0], "field");
  Napi::Array out = Napi::Array::New(env, p.parts.size());
  for (size_t i = 0; i < p.parts.size(); i++) out.Set(static_cast<uint32_t>(i), Napi::String::New(env, p.parts[i]));
  return out;
}

template <typename T>
Napi::Uint32Array U32(Napi::Env env, std::vector<T>&& v) {
  const size_t n = v.size();
  return Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(v)), 0);
}

Napi::Uint8Array U8(Napi::Env env, RawBuffer<uint8_t>&& v) {
  const size_t n = v.size();
  return Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(v)), 0);
}

Napi::Uint8Array U8(Napi::Env env, std::vector<uint8_t>&& v) {
  const size_t n = v.size();
  return Napi::Uint8Array::New(env, n, ToArrayBuffer(env, std::move(v)), 0);
}

// The JavaScript form of a parsed batch (NativeJsonlBatch in lib/native.ts).
Napi::Object BatchObject(Napi::Env env, jsonl::ParsedBatch& out, bool has_id) {
  Napi::Object r = Napi::Object::New(env);
  if (out.too_long != SIZE_MAX) {
    r.Set("tooLong", Napi::Number::New(env, static_cast<double>(out.too_long)));
    return r;
  }
  r.Set("lines", Napi::Number::New(env, static_cast<double>(out.lines)));
  r.Set("text", U8(env, std::move(out.text)));
  r.Set("offsets", U32(env, std::move(out.offsets)));
  if (!out.bad.empty()) r.Set("bad", U8(env, std::move(out.bad)));
  Napi::Array reasons = Napi::Array::New(env, out.reasons.size());
  std::vector<uint32_t> bad_lines(out.reasons.size());
  for (size_t i = 0; i < out.reasons.size(); i++) {
    bad_lines[i] = out.reasons[i].first;
    reasons.Set(static_cast<uint32_t>(i), Napi::String::New(env, out.reasons[i].second));
  }
  r.Set("badLines", U32(env, std::move(bad_lines)));
  r.Set("reasons", reasons);
  if (has_id) {
    r.Set("ids", U8(env, std::move(out.ids)));
    r.Set("idOffsets", U32(env, std::move(out.id_offsets)));
    r.Set("idKinds", U8(env, std::move(out.id_kinds)));
  }
  return r;
}

// The options every parse takes: field, idField, maxLineBytes.
struct ParseOptions {
  jsonl::FieldPath text, id;
  bool has_id = false;
  size_t max_line = SIZE_MAX;
  void Read(Napi::Env env, const Napi::Value& options) {
    Napi::Object o = OptionsObject(env, options, "options");
    text = FieldPathArg(env, o.Has("field") && !o.Get("field").IsUndefined() ? o.Get("field") : Napi::String::New(env, "text"), "options.field");
    if (o.Has("idField") && !o.Get("idField").IsUndefined()) {
      id = FieldPathArg(env, o.Get("idField"), "options.idField");
      has_id = true;
    }
    if (o.Has("maxLineBytes") && !o.Get("maxLineBytes").IsUndefined()) max_line = GetUint32(o, "maxLineBytes", 0, 1, 0xFFFFFFFFu);
  }
};

class ParseWorker : public PromiseWorker {
 public:
  ParseWorker(Napi::Env env, const Napi::Value& segments, const Napi::Value& options) : PromiseWorker(env) {
    if (!segments.IsArray()) ThrowTypeError(env, "Expected segments to be an array of Uint8Arrays");
    Napi::Array arr = segments.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); i++) {
      Napi::Uint8Array a = ExpectBytes(env, arr.Get(i), "segments[" + std::to_string(i) + "]");
      segs_.push_back(jsonl::Segment{BytesOf(a), a.ByteLength()});
      refs_.push_back(Napi::Persistent(a.As<Napi::Object>()));
    }
    opt_.Read(env, options);
    slots_ = parallel::MaxSlots();
  }

 protected:
  Status Run() override {
    return jsonl::ParseBatch(segs_.data(), segs_.size(), opt_.text, opt_.has_id ? &opt_.id : nullptr, opt_.max_line, slots_,
                             stop(), &out_);
  }
  Napi::Value Resolve(Napi::Env env) override { return BatchObject(env, out_, opt_.has_id); }

 private:
  std::vector<jsonl::Segment> segs_;
  std::vector<Napi::ObjectReference> refs_;
  ParseOptions opt_;
  size_t slots_ = 1;
  jsonl::ParsedBatch out_;
};

Napi::Value ParseJsonl(const Napi::CallbackInfo& info) {
  auto* w = new ParseWorker(info.Env(), info[0], info[1]);
  return w->QueueAndGetPromise();
}

// new JsonlFile(path): next({ field, idField, maxLineBytes, batchBytes, lines }) -> Promise<batch & { bytes, eof }>:
// the next whole lines of a plain file (io::LineReader: read into one reused buffer), parsed on the pool;
// `bytes`: the file bytes they took. One call at a time; the file is closed when the object is collected or
// close() is called (after a running call).
struct FileState {
  io::LineReader reader;
  std::atomic<bool> busy{false};
};

class FileWorker : public PromiseWorker {
 public:
  FileWorker(Napi::Env env, std::shared_ptr<FileState> st, const Napi::Value& options) : PromiseWorker(env), st_(std::move(st)) {
    opt_.Read(env, options);
    want_ = GetUint32(OptionsObject(env, options, "options"), "batchBytes", 16 << 20, 1, 1u << 30);
    lines_ = GetBool(OptionsObject(env, options, "options"), "lines", false);
    slots_ = parallel::MaxSlots();
  }
  ~FileWorker() override { st_->busy.store(false); }

 protected:
  Status Run() override {
    const uint64_t before = st_->reader.offset();
    const uint8_t* data = nullptr;
    size_t size = 0;
    bool too_long = false;
    Status s = st_->reader.Next(want_, opt_.max_line, &data, &size, &too_long, &eof_);
    if (!s.ok()) return s;
    bytes_ = st_->reader.offset() - before;
    start_ = st_->reader.offset() - size;  // the file offset of data[0] (after a BOM)
    if (too_long) {
      out_.too_long = 0;
      return Status::Ok();
    }
    const jsonl::Segment seg{data, size};
    return jsonl::ParseBatch(&seg, size > 0 ? 1 : 0, opt_.text, opt_.has_id ? &opt_.id : nullptr, opt_.max_line, slots_, stop(), &out_,
                             lines_);
  }
  Napi::Value Resolve(Napi::Env env) override {
    const bool lines = lines_ && out_.too_long == SIZE_MAX;
    std::vector<uint32_t> at(lines ? out_.line_at.begin() : out_.line_at.end(), out_.line_at.end());  // < 4 GiB: a batch
    std::vector<uint32_t> len = std::move(out_.line_len);
    Napi::Object r = BatchObject(env, out_, opt_.has_id);
    if (lines) {
      // with { lines: true }: each line's place in the file, start + lineAt[i], and its length without the '\n'
      r.Set("start", Napi::Number::New(env, static_cast<double>(start_)));
      r.Set("lineAt", U32(env, std::move(at)));
      r.Set("lineLen", U32(env, std::move(len)));
    }
    r.Set("bytes", Napi::Number::New(env, static_cast<double>(bytes_)));
    r.Set("eof", Napi::Boolean::New(env, eof_));
    return r;
  }

 private:
  std::shared_ptr<FileState> st_;
  ParseOptions opt_;
  size_t want_ = 0, slots_ = 1;
  bool lines_ = false;
  uint64_t bytes_ = 0, start_ = 0;
  bool eof_ = false;
  jsonl::ParsedBatch out_;
};

class JsonlFile : public Napi::ObjectWrap<JsonlFile> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "JsonlFile", {InstanceMethod<&JsonlFile::Next>("next"), InstanceMethod<&JsonlFile::Close>("close")});
  }
  explicit JsonlFile(const Napi::CallbackInfo& info) : Napi::ObjectWrap<JsonlFile>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString()) ThrowTypeError(env, "Expected path to be a string");
    const std::string path = CheckPath(env, info[0].As<Napi::String>().Utf8Value(), "path");
    st_ = std::make_shared<FileState>();
    const Status s = st_->reader.Open(path);
    if (!s.ok()) throw StatusError(env, s);
  }

 private:
  Napi::Value Next(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!st_) throw CodedError(env, "ERR_NEARDUP_CLOSED", "the JSONL file is closed");
    if (st_->busy.exchange(true)) throw CodedError(env, "ERR_NEARDUP_BUSY", "the JSONL file is already being read");
    FileWorker* w;
    try {
      w = new FileWorker(env, st_, info[0]);
    } catch (...) {
      st_->busy.store(false);
      throw;
    }
    return w->QueueAndGetPromise();
  }
  Napi::Value Close(const Napi::CallbackInfo& info) {
    st_.reset();  // a running call keeps the file open until it is done
    return info.Env().Undefined();
  }
  std::shared_ptr<FileState> st_;
};

// new ZstdDecoder(name): decompress(input, offset, maxOut) -> Promise<{ output, consumed }> (offset: where to
// start in input; at most about maxOut bytes of output per call, all input used unless that bound is met);
// finish() throws ERR_NEARDUP_CORRUPT when the data ended inside a frame. One call at a time.
struct ZstdState {
  io::ZstdStream stream;
  std::string name;
  std::atomic<bool> busy{false};
};

class ZstdWorker : public PromiseWorker {
 public:
  ZstdWorker(Napi::Env env, std::shared_ptr<ZstdState> st, const Napi::Uint8Array& in, size_t offset, size_t max_out)
      : PromiseWorker(env), st_(std::move(st)), ref_(Napi::Persistent(in.As<Napi::Object>())), in_(BytesOf(in)),
        n_(in.ByteLength()), consumed_(offset), max_out_(max_out) {}
  ~ZstdWorker() override { st_->busy.store(false); }  // on the JS thread, before any continuation runs

 protected:
  Status Run() override {
    return st_->stream.Feed(in_, n_, &consumed_, max_out_, &out_, st_->name);
  }
  Napi::Value Resolve(Napi::Env env) override {
    Napi::Object r = Napi::Object::New(env);
    r.Set("output", U8(env, std::move(out_)));
    r.Set("consumed", Napi::Number::New(env, static_cast<double>(consumed_)));
    return r;
  }

 private:
  std::shared_ptr<ZstdState> st_;
  Napi::ObjectReference ref_;
  const uint8_t* in_;
  size_t n_, consumed_, max_out_;
  RawBuffer<uint8_t> out_;
};

class ZstdDecoder : public Napi::ObjectWrap<ZstdDecoder> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ZstdDecoder",
                       {InstanceMethod<&ZstdDecoder::Decompress>("decompress"),
                        InstanceMethod<&ZstdDecoder::Finish>("finish")});
  }
  explicit ZstdDecoder(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ZstdDecoder>(info) {
    st_ = std::make_shared<ZstdState>();
    st_->name = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : std::string("zstd input");
  }

 private:
  Napi::Value Decompress(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Uint8Array in = ExpectBytes(env, info[0], "input");
    if (!info[1].IsNumber() || !info[2].IsNumber()) ThrowTypeError(env, "Expected offset and maxOut to be numbers");
    const double off = info[1].As<Napi::Number>().DoubleValue(), max = info[2].As<Napi::Number>().DoubleValue();
    if (!(off >= 0 && off <= static_cast<double>(in.ByteLength()))) ThrowRangeError(env, "offset is outside the input");
    if (!(max >= 1 && max <= 1 << 30)) ThrowRangeError(env, "maxOut must be from 1 to 2^30");
    if (st_->busy.exchange(true)) throw CodedError(env, "ERR_NEARDUP_BUSY", "the zstd decoder is already decompressing");
    auto* w = new ZstdWorker(env, st_, in, static_cast<size_t>(off), static_cast<size_t>(max));
    return w->QueueAndGetPromise();
  }
  Napi::Value Finish(const Napi::CallbackInfo& info) {
    const Status s = st_->stream.Finish(st_->name);
    if (!s.ok()) throw StatusError(info.Env(), s);
    return info.Env().Undefined();
  }
  std::shared_ptr<ZstdState> st_;
};

// new ZstdEncoder(level): compress(input, end) -> Promise<Uint8Array> (the frame's bytes ready so far; `end`
// closes the frame). On the libuv thread pool; one call at a time.
struct ZstdEncState {
  explicit ZstdEncState(int level) : writer(level) {}
  io::ZstdWriter writer;
  std::atomic<bool> busy{false};
};

class ZstdEncWorker : public PromiseWorker {
 public:
  ZstdEncWorker(Napi::Env env, std::shared_ptr<ZstdEncState> st, const Napi::Uint8Array& in, bool end)
      : PromiseWorker(env), st_(std::move(st)), ref_(Napi::Persistent(in.As<Napi::Object>())), in_(BytesOf(in)),
        n_(in.ByteLength()), end_(end) {}
  ~ZstdEncWorker() override { st_->busy.store(false); }

 protected:
  Status Run() override { return st_->writer.Feed(in_, n_, end_, &out_); }
  Napi::Value Resolve(Napi::Env env) override { return U8(env, std::move(out_)); }

 private:
  std::shared_ptr<ZstdEncState> st_;
  Napi::ObjectReference ref_;
  const uint8_t* in_;
  size_t n_;
  bool end_;
  std::vector<uint8_t> out_;
};

class ZstdEncoder : public Napi::ObjectWrap<ZstdEncoder> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ZstdEncoder", {InstanceMethod<&ZstdEncoder::Compress>("compress")});
  }
  explicit ZstdEncoder(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ZstdEncoder>(info) {
    int level = 3;
    if (info[0].IsNumber()) level = info[0].As<Napi::Number>().Int32Value();
    if (level < 1 || level > 19) ThrowRangeError(info.Env(), "the zstd level must be from 1 to 19");
    st_ = std::make_shared<ZstdEncState>(level);
  }

 private:
  Napi::Value Compress(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Uint8Array in = ExpectBytes(env, info[0], "input");
    if (st_->busy.exchange(true)) throw CodedError(env, "ERR_NEARDUP_BUSY", "the zstd encoder is already compressing");
    auto* w = new ZstdEncWorker(env, st_, in, info[1].ToBoolean().Value());
    return w->QueueAndGetPromise();
  }
  std::shared_ptr<ZstdEncState> st_;
};

// zstdDecompressSync(bytes, name, maxBytes?): one whole buffer of zstd frames (a Parquet page), on the calling
// thread; more than maxBytes out (when given and not 0) is ERR_NEARDUP_INVALID_INPUT, found before more is made.
Napi::Value ZstdDecompressSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Uint8Array in = ExpectBytes(env, info[0], "input");
  const std::string name = info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : std::string("zstd data");
  const uint64_t max_out = info[2].IsUndefined() ? 0 : GetCap(env, info[2], "maxBytes");
  std::vector<uint8_t> out;
  return RunSync(
      env, [&] { return io::ZstdDecompressAll(BytesOf(in), in.ByteLength(), &out, name, static_cast<size_t>(max_out)); },
      [&](Napi::Env e) { return U8(e, std::move(out)); });
}

}  // namespace

void Jsonl::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("parseJsonl", Napi::Function::New(env, ParseJsonl, "parseJsonl"));
  exports.Set("parseFieldPath", Napi::Function::New(env, ParseFieldPath, "parseFieldPath"));
  exports.Set("JsonlFile", JsonlFile::Define(env));
  exports.Set("ZstdDecoder", ZstdDecoder::Define(env));
  exports.Set("ZstdEncoder", ZstdEncoder::Define(env));
  exports.Set("zstdDecompressSync", Napi::Function::New(env, ZstdDecompressSync, "zstdDecompressSync"));
}

}  // namespace binding
}  // namespace neardup
