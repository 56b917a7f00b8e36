// Fuzz target: the SimHash index loader (kind SIMH) over images with valid checksums. Whatever it accepts
// must be safe to query (single and batch lookups) and to compact (copying the mapped tables).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_image.h"
#include "simhash/index.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char kind[4] = {'S', 'I', 'M', 'H'};
  std::vector<uint8_t> img = fuzz::FixedImage(data, size, kind, 1);
  std::unique_ptr<simhash::Index> ix;
  Status s = simhash::Index::OpenBytes(img.data(), img.size(), "fuzz.simh", /*verify=*/true, &ix);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  std::vector<uint64_t> qs = {0, ~uint64_t{0}};
  for (size_t i = 0; i + 8 <= size && qs.size() < 8; i += 8) {
    uint64_t q;
    std::memcpy(&q, data + i, 8);
    qs.push_back(q);
  }
  std::vector<uint64_t> ids;
  for (uint64_t q : qs) {
    uint64_t id;
    ix->FindFirst(q, &id);
    ix->FindAll(q, &ids);
  }
  ix->Compact(1);  // materializes the mapped index: every table entry is read and copied
  for (uint64_t q : qs) ix->FindAll(q, &ids);
  return 0;
}
