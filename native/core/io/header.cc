#include "io/header.h"
#include "util/endian.h"

#include <cstring>

#include "hash/crc32c.h"

namespace neardup {
namespace io {

const uint8_t kMagic[8] = {0x4E, 0x44, 0x55, 0x50, 0x0D, 0x0A, 0x1A, 0x0A};

namespace {
std::string KindString(const char* k) {
  std::string s;
  for (int i = 0; i < 4; i++) {
    const unsigned char c = static_cast<unsigned char>(k[i]);
    if (c >= 0x20 && c < 0x7f) {
      s.push_back(static_cast<char>(c));
    } else {
      static const char* hex = "0123456789abcdef";
      s += "\\x";
      s.push_back(hex[c >> 4]);
      s.push_back(hex[c & 15]);
    }
  }
  return s;
}
}  // namespace

void EncodeHeader(const FileHeader& h, uint8_t out[kHeaderSize]) {
  std::memset(out, 0, kHeaderSize);
  std::memcpy(out, kMagic, 8);
  std::memcpy(out + 8, h.kind, 4);
  StoreLe32(out + 12, h.version);
  StoreLe32(out + 16, 0x01020304u);
  StoreLe32(out + 20, static_cast<uint32_t>(kHeaderSize));
  StoreLe64(out + 24, h.payload_size);
  StoreLe32(out + 32, h.payload_crc);
  StoreLe32(out + 36, h.flags);
  StoreLe64(out + 40, h.params[0]);
  StoreLe64(out + 48, h.params[1]);
  StoreLe32(out + 60, Crc32c(out, 60));
}

Status DecodeHeader(const uint8_t* d, size_t size, const char kind[4], uint32_t max_version, bool verify_payload,
                    const std::string& file, FileHeader* out) {
  FileHeader h;
  Status s = DecodeHeaderOnly(d, size, size, kind, max_version, file, &h);
  if (!s.ok()) return s;
  if (verify_payload && Crc32c(d + kHeaderSize, h.payload_size) != h.payload_crc)
    return Status(Code::kCorrupt, "'" + file + "': payload checksum mismatch");
  *out = h;
  return Status::Ok();
}

Status DecodeHeaderOnly(const uint8_t* d, size_t head_len, uint64_t size, const char kind[4], uint32_t max_version,
                        const std::string& file, FileHeader* out) {
  auto corrupt = [&](const std::string& why) { return Status(Code::kCorrupt, "'" + file + "': " + why); };
  if (head_len < kHeaderSize && head_len < size) return Status(Code::kInternal, "DecodeHeaderOnly: short head");
  if (size < kHeaderSize) return corrupt("file is " + std::to_string(size) + " bytes, shorter than the 64-byte header");
  if (std::memcmp(d, kMagic, 8) != 0) return corrupt("not a neardup file (bad magic at offset 0)");
  if (std::memcmp(d + 8, kind, 4) != 0)
    return corrupt("is a '" + KindString(reinterpret_cast<const char*>(d + 8)) + "' file, expected '" +
                   KindString(kind) + "'");
  if (LoadLe32(d + 16) != 0x01020304u) return corrupt("unsupported byte order mark at offset 16");
  if (Crc32c(d, 60) != LoadLe32(d + 60)) return corrupt("header checksum mismatch (offset 60)");
  const uint32_t version = LoadLe32(d + 12);
  if (version == 0 || version > max_version)
    return Status(Code::kUnsupported, "'" + file + "': format version " + std::to_string(version) +
                                          " is not supported (this build reads up to " +
                                          std::to_string(max_version) + ")");
  const uint32_t hsize = LoadLe32(d + 20);
  // Every writer writes a 64-byte header with the reserved word 0; anything else is damage, not a newer
  // writer (a newer layout gets a new version).
  if (hsize != kHeaderSize) return corrupt("bad header size " + std::to_string(hsize) + " at offset 20 (expected 64)");
  if (LoadLe32(d + 56) != 0) return corrupt("reserved header field at offset 56 is not 0");
  FileHeader h;
  std::memcpy(h.kind, d + 8, 4);
  h.version = version;
  h.payload_size = LoadLe64(d + 24);
  h.payload_crc = LoadLe32(d + 32);
  h.flags = LoadLe32(d + 36);
  h.params[0] = LoadLe64(d + 40);
  h.params[1] = LoadLe64(d + 48);
  if (h.payload_size != size - hsize)
    return corrupt("truncated or extended: header announces " + std::to_string(h.payload_size) +
                   " payload bytes, file has " + std::to_string(size - hsize));
  *out = h;
  return Status::Ok();
}

}  // namespace io
}  // namespace neardup
