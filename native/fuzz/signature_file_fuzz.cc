// Fuzz target: the signature file header decoder (neardup MHSG and doubri .hash), used by
// readSignatureFile, over images whose common header has valid checksums (odd first byte: taken as a
// doubri .hash instead). Whatever it accepts must describe a layout inside the file.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_image.h"
#include "hash/crc32c.h"
#include "minhash/signature_file.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> img;
  if (size > 0 && (data[0] & 1) && size >= 24) {
    img.assign(data, data + size);
    std::memcpy(img.data(), "MinHash", 7);
  } else {
    const char kind[4] = {'M', 'H', 'S', 'G'};
    img = fuzz::FixedImage(data, size, kind, 1);
  }
  minhash::SignatureFileInfo h;
  Status s = minhash::DecodeSignatureHeader(img.data(), img.size() < 64 ? img.size() : 64, img.size(), "fuzz.sig", &h);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  if (h.num_perm < 1 || h.num_perm > 65536) std::abort();
  const uint64_t values = h.count * h.num_perm * 4;
  if (h.values_offset > img.size() || values > img.size() - h.values_offset) std::abort();
  if (h.trailer_offset != h.values_offset + values || h.trailer_offset > img.size()) std::abort();
  if (h.format == minhash::FileFormat::kDoubri && h.trailer_offset != img.size()) std::abort();
  if (h.format == minhash::FileFormat::kNeardup) {
    if (h.profile > 2) std::abort();
    if (Crc32c(img.data() + 64, img.size() - 64) != h.payload_crc) std::abort();  // FixedImage set it
  }
  return 0;
}
