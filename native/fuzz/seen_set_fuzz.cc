// Fuzz target: the seen-set loader (kind PSEN, versions 1 and 2) over images with valid checksums.
// Whatever it accepts must answer lookups and take inserts with memory bounded by the file: a stored
// capacity may not make the first insert allocate without limit (the 80-byte file that asked for 24 GB).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "filter/seen_set.h"
#include "fuzz_image.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char kind[4] = {'P', 'S', 'E', 'N'};
  std::vector<uint8_t> img = fuzz::FixedImage(data, size, kind, 2);
  std::unique_ptr<filter::SeenSet> set;
  uint32_t n = 0;
  Status s = filter::ParseSeenSet(img.data(), img.size(), "fuzz.psen", &set, &n);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  if (n < 1 || n > 4096) std::abort();
  const uint64_t before = set->memory_bytes();
  uint64_t keys[64];
  for (size_t i = 0; i < 64; i++) keys[i] = 0x9e3779b97f4a7c15ull * (i + 1) ^ (size > i ? data[i] : 0);
  uint8_t found[64];
  set->ContainsBatch(keys, 64, found);
  set->InsertBatch(keys, 64);
  set->ContainsBatch(keys, 64, found);
  for (size_t i = 0; i < 64; i++)
    if (!found[i]) std::abort();  // no false negatives after an insert
  // One new stage at most: bounded by 64 MiB here (the first stage of a default set is ~40 KiB; a loaded
  // set grows from its largest stage, itself bounded by the file's size).
  if (set->memory_bytes() > before + (uint64_t(64) << 20) + 4 * img.size()) std::abort();
  return 0;
}
