// Helpers for the loader fuzz targets: turn a fuzz input into a file image whose common header is
// self-consistent (magic, kind, a supported version, byte order, header size, reserved word, payload size,
// payload and header CRC-32C), so that the fuzzer spends its time in each loader's structure checks instead
// of failing at a checksum. header_fuzz covers the header checks themselves.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "hash/crc32c.h"
#include "io/header.h"
#include "util/endian.h"

namespace neardup {
namespace fuzz {

// Inputs shorter than the header are returned as they are (the short-file path).
inline std::vector<uint8_t> FixedImage(const uint8_t* data, size_t size, const char kind[4], uint32_t max_version) {
  std::vector<uint8_t> b(data, data + size);
  if (size < io::kHeaderSize) return b;
  std::memcpy(b.data(), io::kMagic, 8);
  std::memcpy(b.data() + 8, kind, 4);
  const uint32_t v = LoadLe32(b.data() + 12);
  if (v == 0 || v > max_version) StoreLe32(b.data() + 12, 1 + v % max_version);
  StoreLe32(b.data() + 16, 0x01020304u);
  StoreLe32(b.data() + 20, static_cast<uint32_t>(io::kHeaderSize));
  StoreLe64(b.data() + 24, size - io::kHeaderSize);
  StoreLe32(b.data() + 56, 0);
  StoreLe32(b.data() + 32, Crc32c(b.data() + io::kHeaderSize, size - io::kHeaderSize));
  StoreLe32(b.data() + 60, Crc32c(b.data(), 60));
  return b;
}

}  // namespace fuzz
}  // namespace neardup
