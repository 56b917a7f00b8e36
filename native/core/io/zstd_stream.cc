#include "io/zstd_stream.h"

#include <algorithm>
#include <new>

#include "zstd.h"

namespace neardup {
namespace io {

namespace {
std::string Prefix(const std::string& what) { return what.empty() ? std::string() : what + ": "; }
}  // namespace

bool IsZstdMagic(const uint8_t* p, size_t n) {
  return n >= 4 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD;
}

ZstdStream::ZstdStream() : ctx_(ZSTD_createDStream()) {
  if (ctx_ == nullptr) throw std::bad_alloc();
}

ZstdStream::~ZstdStream() { ZSTD_freeDStream(static_cast<ZSTD_DStream*>(ctx_)); }

Status ZstdStream::Feed(const uint8_t* in, size_t n, size_t* consumed, size_t max_out, RawBuffer<uint8_t>* out,
                        const std::string& what) {
  auto* ds = static_cast<ZSTD_DStream*>(ctx_);
  ZSTD_inBuffer ib{in, n, *consumed};
  const size_t step = ZSTD_DStreamOutSize();
  out->Allocate(max_out + step);
  size_t pos = 0;
  while ((ib.pos < ib.size || mid_frame_) && pos < max_out) {
    ZSTD_outBuffer ob{out->data() + pos, std::min(step, out->size() - pos), 0};
    const size_t r = ZSTD_decompressStream(ds, &ob, &ib);
    pos += ob.pos;
    if (ZSTD_isError(r)) {
      *consumed = ib.pos;
      out->Shrink(pos);
      return Status(Code::kCorrupt, Prefix(what) + "not valid zstd data (" + ZSTD_getErrorName(r) + ")");
    }
    mid_frame_ = r != 0;
    // no progress possible without more input (the output buffer was not filled)
    if (ob.pos < ob.size && ib.pos >= ib.size) break;
  }
  *consumed = ib.pos;
  out->Shrink(pos);
  return Status::Ok();
}

void ZstdStream::Reset() {
  ZSTD_DCtx_reset(static_cast<ZSTD_DStream*>(ctx_), ZSTD_reset_session_only);
  mid_frame_ = false;
}

Status ZstdStream::Finish(const std::string& what) const {
  if (mid_frame_) return Status(Code::kCorrupt, Prefix(what) + "the zstd data ends inside a frame (a truncated file?)");
  return Status::Ok();
}

ZstdWriter::ZstdWriter(int level) : ctx_(ZSTD_createCCtx()) {
  if (ctx_ == nullptr) throw std::bad_alloc();
  auto* cc = static_cast<ZSTD_CCtx*>(ctx_);
  ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
}

ZstdWriter::~ZstdWriter() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(ctx_)); }

Status ZstdWriter::Feed(const uint8_t* in, size_t n, bool end, std::vector<uint8_t>* out) {
  auto* cc = static_cast<ZSTD_CCtx*>(ctx_);
  ZSTD_inBuffer ib{in, n, 0};
  const size_t step = ZSTD_CStreamOutSize();
  for (;;) {
    const size_t at = out->size();
    out->resize(at + step);
    ZSTD_outBuffer ob{out->data() + at, step, 0};
    const size_t r = ZSTD_compressStream2(cc, &ob, &ib, end ? ZSTD_e_end : ZSTD_e_continue);
    out->resize(at + ob.pos);
    if (ZSTD_isError(r)) return Status(Code::kInternal, std::string("zstd compression failed (") + ZSTD_getErrorName(r) + ")");
    if (end ? r == 0 : ib.pos == ib.size) break;
  }
  return Status::Ok();
}

Status ZstdDecompressAll(const uint8_t* in, size_t n, std::vector<uint8_t>* out, const std::string& what,
                         size_t max_out) {
  ZstdStream s;
  size_t consumed = 0;
  out->clear();
  RawBuffer<uint8_t> part;
  constexpr size_t kStep = size_t(16) << 20;
  size_t step = kStep;
  do {
    // with a limit, a step never asks for more than one byte past it (so "more than max_out" is seen early)
    step = max_out == 0 ? kStep : std::min(kStep, max_out - out->size() + 1);
    const Status st = s.Feed(in, n, &consumed, step, &part, what);
    if (!st.ok()) return st;
    if (max_out != 0 && part.size() > max_out - out->size())
      return Status(Code::kInvalidInput, (what.empty() ? std::string() : what + ": ") + "expands to more than " +
                                  std::to_string(max_out) + " bytes");
    out->insert(out->end(), part.data(), part.data() + part.size());
  } while (consumed < n || part.size() >= step);
  return s.Finish(what);
}

}  // namespace io
}  // namespace neardup
