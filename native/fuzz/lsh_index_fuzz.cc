// Fuzz target: the LSH index loader (kind LSHI) over images with valid checksums. Whatever it accepts must
// be safe to query, and every id a query, candidate pair or cluster reports must be one of the index's ids.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "fuzz_image.h"
#include "minhash/lsh.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char kind[4] = {'L', 'S', 'H', 'I'};
  std::vector<uint8_t> img = fuzz::FixedImage(data, size, kind, 1);
  lsh::FrozenIndex ix;
  Status s = ix.LoadBytes(img.data(), img.size(), "fuzz.lsh", /*verify_checksum=*/true);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  std::vector<uint64_t> ids, reps;
  ix.Clusters(&ids, &reps);
  std::vector<uint64_t> known = ids;
  std::sort(known.begin(), known.end());
  auto is_known = [&](uint64_t id) { return std::binary_search(known.begin(), known.end(), id); };
  if (reps.size() != ids.size()) std::abort();
  for (uint64_t r : reps)
    if (!is_known(r)) std::abort();
  if (ids.size() <= 64) {  // pairs are quadratic in a bucket: only for small images
    std::vector<lsh::Pair> pairs;
    ix.CandidatePairs(&pairs);
    for (const auto& p : pairs)
      if (!is_known(p.first) || !is_known(p.second) || p.first >= p.second) std::abort();
  }
  // A query with a signature made of the image's own bytes.
  const lsh::Params& p = ix.params();
  std::vector<uint8_t> sig(size_t(p.num_perm) * p.value_bytes);
  for (size_t i = 0; i < sig.size(); i++) sig[i] = img[i % img.size()];
  std::vector<uint64_t> out;
  ix.Query(sig.data(), &out);
  for (uint64_t id : out)
    if (!is_known(id)) std::abort();
  return 0;
}
