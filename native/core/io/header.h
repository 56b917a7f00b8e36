// The common 64-byte header of every neardup file format (docs/FORMAT.md, "Common header").
//
//   off size field
//    0   8  magic          4E 44 55 50 0D 0A 1A 0A  ("NDUP\r\n\x1a\n": catches text-mode mangling)
//    8   4  kind           4 ASCII bytes naming the format, e.g. "MHSG"
//   12   4  version        u32, per kind; readers refuse a version newer than they know
//   16   4  byte order     u32 0x01020304 as written (files are little-endian: 04 03 02 01)
//   20   4  header size    u32, 64 (room to grow; readers skip what they do not know)
//   24   8  payload size   u64, bytes after the header
//   32   4  payload crc    CRC-32C of the payload
//   36   4  flags          u32, per kind
//   40  16  params         two u64, per kind
//   56   4  reserved       0
//   60   4  header crc     CRC-32C of bytes 0..59
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace neardup {
namespace io {

constexpr size_t kHeaderSize = 64;
extern const uint8_t kMagic[8];

struct FileHeader {
  char kind[4] = {0, 0, 0, 0};
  uint32_t version = 1;
  uint64_t payload_size = 0;
  uint32_t payload_crc = 0;
  uint32_t flags = 0;
  uint64_t params[2] = {0, 0};
};

void EncodeHeader(const FileHeader& h, uint8_t out[kHeaderSize]);

// Checks magic, kind, version (<= max_version), byte order, header CRC and that the file is long enough
// for the payload it announces. Payload CRC is checked only when verify_payload is set (it reads it all).
// `file` names the file in error messages.
Status DecodeHeader(const uint8_t* data, size_t size, const char kind[4], uint32_t max_version,
                    bool verify_payload, const std::string& file, FileHeader* out);
// The same checks but the payload CRC, from the first `head_len` bytes of a file of `file_size` bytes
// (readers that stream the payload and check its CRC as they go).
Status DecodeHeaderOnly(const uint8_t* head, size_t head_len, uint64_t file_size, const char kind[4],
                        uint32_t max_version, const std::string& file, FileHeader* out);

}  // namespace io
}  // namespace neardup
