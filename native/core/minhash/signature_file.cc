#include "minhash/signature_file.h"
#include "util/endian.h"

#include <cstring>
#include <vector>

#include "hash/crc32c.h"
#include "io/header.h"

namespace neardup {
namespace minhash {

namespace {
constexpr bool kBigEndianHost =
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    true;
#else
    false;
#endif
}  // namespace

Status SignatureFileWriter::Open(const std::string& path, FileFormat format, uint32_t k, uint32_t profile,
                                 std::string options_json) {
  if (k == 0) return Status(Code::kInvalidArgument, "a signature file needs at least one value per record");
  format_ = format;
  k_ = k;
  profile_ = profile;
  options_ = std::move(options_json);
  records_ = 0;
  crc_ = 0;
  Status s = file_.Open(path);
  if (!s.ok()) return s;
  uint8_t zero[io::kHeaderSize] = {0};
  s = file_.Write(zero, format == FileFormat::kDoubri ? kDoubriHeaderSize : io::kHeaderSize);
  open_ = s.ok();
  return s;
}

Status SignatureFileWriter::Append(const uint32_t* values, size_t n) {
  if (!open_) return Status(Code::kInternal, "signature file is not open");
  const size_t count = n * k_;
  Status s;
  if (kBigEndianHost) {
    std::vector<uint32_t> tmp(values, values + count);
    for (auto& v : tmp) v = __builtin_bswap32(v);
    if (format_ == FileFormat::kNeardup) crc_ = Crc32c(tmp.data(), count * 4, crc_);
    s = file_.Write(tmp.data(), count * 4);
  } else {
    if (format_ == FileFormat::kNeardup) crc_ = Crc32c(values, count * 4, crc_);
    s = file_.Write(values, count * 4);
  }
  if (s.ok()) records_ += n;
  return s;
}

Status SignatureFileWriter::Commit() {
  if (!open_) return Status(Code::kInternal, "signature file is not open");
  open_ = false;
  Status s;
  if (format_ == FileFormat::kDoubri) {
    uint8_t h[kDoubriHeaderSize];
    std::memcpy(h, "MinHash", 7);
    h[7] = 4;
    StoreLe64(h + 8, records_);
    StoreLe64(h + 16, k_);
    s = file_.WriteAt(0, h, sizeof h);
  } else {
    crc_ = Crc32c(options_.data(), options_.size(), crc_);
    s = file_.Write(options_.data(), options_.size());
    if (!s.ok()) return s;
    io::FileHeader fh;
    std::memcpy(fh.kind, kSignatureKind, 4);
    fh.version = kSignatureVersion;
    fh.payload_size = records_ * k_ * 4 + options_.size();
    fh.payload_crc = crc_;
    fh.flags = profile_;
    fh.params[0] = records_;
    fh.params[1] = k_;
    uint8_t h[io::kHeaderSize];
    io::EncodeHeader(fh, h);
    s = file_.WriteAt(0, h, sizeof h);
  }
  if (!s.ok()) return s;
  return file_.Commit();
}

}  // namespace minhash
}  // namespace neardup
