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

Status DecodeSignatureHeader(const uint8_t* d, size_t head_len, uint64_t size, const std::string& name,
                             SignatureFileInfo* out) {
  auto corrupt = [&](uint64_t offset, const std::string& why) {
    return Status(Code::kCorrupt, "'" + name + "': " + why + " (offset " + std::to_string(offset) + ")");
  };
  constexpr uint64_t kMaxValues = 65536;  // minhash::kMaxPerm: the most any writer stores per record
  SignatureFileInfo info;
  if (head_len >= kDoubriHeaderSize && std::memcmp(d, "MinHash", 7) == 0) {
    if (d[7] != 4) return corrupt(7, std::to_string(d[7]) + " bytes per value; only 4 is supported");
    info.format = FileFormat::kDoubri;
    info.count = LoadLe64(d + 8);
    info.num_perm = LoadLe64(d + 16);
    if (info.num_perm == 0 || info.num_perm > kMaxValues)
      return corrupt(16, "header announces " + std::to_string(info.num_perm) + " values per record (expected 1..65536)");
    const uint64_t record = info.num_perm * 4;
    if (info.count > (size - kDoubriHeaderSize) / record || kDoubriHeaderSize + info.count * record != size)
      return corrupt(8, "header announces " + std::to_string(info.count) + " records of " +
                            std::to_string(info.num_perm) + " values but the file has " + std::to_string(size) + " bytes");
    info.values_offset = kDoubriHeaderSize;
    info.trailer_offset = size;
    *out = info;
    return Status::Ok();
  }
  if (head_len < io::kHeaderSize || std::memcmp(d, io::kMagic, 8) != 0)
    return corrupt(0, "not a signature file (neither a neardup nor a doubri .hash header)");
  io::FileHeader h;
  Status s = io::DecodeHeaderOnly(d, head_len, size, kSignatureKind, kSignatureVersion, name, &h);
  if (!s.ok()) return s;
  if (h.flags > 2) return corrupt(36, "unknown profile id " + std::to_string(h.flags) + " in the header flags");
  info.count = h.params[0];
  info.num_perm = h.params[1];
  if (info.num_perm == 0 || info.num_perm > kMaxValues)
    return corrupt(48, "header announces " + std::to_string(info.num_perm) + " values per record (expected 1..65536)");
  const uint64_t record = info.num_perm * 4;
  if (info.count > h.payload_size / record)
    return corrupt(40, "header announces " + std::to_string(info.count) + " records of " +
                           std::to_string(info.num_perm) + " values, more than the payload holds");
  info.profile = h.flags;
  info.values_offset = io::kHeaderSize;
  info.trailer_offset = io::kHeaderSize + info.count * record;
  info.payload_crc = h.payload_crc;
  *out = info;
  return Status::Ok();
}

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
