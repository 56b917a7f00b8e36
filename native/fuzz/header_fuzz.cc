// Fuzz target: the common header decoder never reads out of bounds and accepts only self-consistent headers.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "hash/crc32c.h"
#include "io/header.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  io::FileHeader h;
  const char kind[4] = {'F', 'U', 'Z', 'Z'};
  Status s = io::DecodeHeader(data, size, kind, 3, true, "fuzz", &h);
  if (s.ok()) {
    if (size < io::kHeaderSize || h.payload_size != size - io::kHeaderSize) std::abort();
    if (Crc32c(data + io::kHeaderSize, h.payload_size) != h.payload_crc) std::abort();
  } else if (s.message().empty()) {
    std::abort();
  }
  return 0;
}
