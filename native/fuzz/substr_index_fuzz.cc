// Fuzz target: the substring index loader (kind SUBX, version 1) over images with valid checksums. Whatever
// it accepts must answer counts without reading outside the image: a suffix array that is no suffix array
// (entries out of order, repeated, beyond the text) gives some count or ERR_NEARDUP_CORRUPT, never a crash.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "fuzz_image.h"
#include "io/header.h"
#include "util/endian.h"
#include "substr/index_file.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char kind[4] = {'S', 'U', 'B', 'X'};
  std::vector<uint8_t> raw(data, data + size);
  // Every other input is made layout-valid (one document, 4-byte entries: the largest n whose payload fits,
  // the text ending with its separator, entries mostly within the text), so that the searches run; the others
  // go to the layout checks as they are.
  if (size >= io::kHeaderSize && data[0] % 2 == 0) {
    const uint64_t payload = size - io::kHeaderSize;
    uint64_t n = payload / 5;
    while (n > 0 && ((n + 7) & ~uint64_t(7)) + 8 + 4 * n > payload) n--;
    if (n > 0) {
      raw.resize(io::kHeaderSize + ((n + 7) & ~uint64_t(7)) + 8 + 4 * n);
      StoreLe32(raw.data() + 36, 0);
      StoreLe64(raw.data() + 40, n);
      StoreLe64(raw.data() + 48, 1);
      uint8_t* text = raw.data() + io::kHeaderSize;
      text[n - 1] = 0xFF;
      uint8_t* starts = text + ((n + 7) & ~uint64_t(7));
      StoreLe64(starts, 0);
      uint8_t* sa = starts + 8;
      for (uint64_t i = 0; i < n; i++) StoreLe32(sa + 4 * i, LoadLe32(sa + 4 * i) % uint32_t(n + 2));
    }
  }
  std::vector<uint8_t> img = fuzz::FixedImage(raw.data(), raw.size(), kind, 1);
  substr::SubstringIndex idx;
  Status s = idx.Attach(img.data(), img.size(), "fuzz.subx", true);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  // patterns: pieces of the input itself, of lengths 1 to 8
  for (size_t k = 0; k < 8 && k < size; k++) {
    uint64_t c = 0;
    s = idx.Count(data + k, 1 + (size - k - 1) % 8, &c);
    if (!s.ok() && s.code() != Code::kCorrupt) std::abort();
    if (s.ok() && c > idx.text_bytes() + idx.documents()) std::abort();
  }
  return 0;
}
