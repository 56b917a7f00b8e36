// Fuzz target: the exact-Jaccard sets of dedup's verification (minhash/shingle_set.h). The input after two
// control bytes is read as 64-bit values; byte 0 picks a mask that folds them onto few distinct values or
// few distinct top bits (the skewed inputs the radix sort's insertion pass must stay correct on) and the
// threshold, byte 1 where the values split into two sets. Invariants: SortHashes sorts exactly as std::sort
// does (repeats kept); JaccardAtLeast, with every kernel the CPU has, answers as the brute-force count
// inter / (na + nb - inter) >= t in doubles (empty sets: false), and gives that Jaccard value when true.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

#include "minhash/shingle_set.h"
#include "util/endian.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t k = data[0];
  static const uint64_t kMasks[8] = {~uint64_t(0), 0xff, 0xffff, 0xff00000000000000ull, 0xfff0000000000fffull,
                                     0x8000000000000001ull, 0xffffffff, 0x00ffff0000ffff00ull};
  const uint64_t mask = kMasks[k & 7];
  static const double kThresholds[8] = {0.0, 0.1, 0.5, 0.8, 0.85, 0.9, 1.0, 1.0 / 3};
  const double t = kThresholds[(k >> 3) & 7];
  const size_t n = (size - 2) / 8;
  std::vector<uint64_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = LoadLe64(data + 2 + 8 * i) & mask;

  // SortHashes against std::sort, on the whole array (repeats kept)
  std::vector<uint64_t> sorted = v, want = v, tmp;
  std::vector<uint32_t> cnt;
  lsh::SortHashes(sorted.data(), sorted.size(), &tmp, &cnt);
  std::sort(want.begin(), want.end());
  if (sorted != want) std::abort();

  // two sets: the values before and after the split, each sorted and distinct
  const size_t cut = n == 0 ? 0 : data[1] % (n + 1);
  std::vector<uint64_t> a(v.begin(), v.begin() + cut), b(v.begin() + cut, v.end());
  for (auto* s : {&a, &b}) {
    lsh::SortHashes(s->data(), s->size(), &tmp, &cnt);
    s->erase(std::unique(s->begin(), s->end()), s->end());
  }
  std::vector<uint64_t> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  const size_t inter = common.size(), uni = a.size() + b.size() - inter;
  const bool truth = !a.empty() && !b.empty() && double(inter) / double(uni) >= t;
  const lsh::IntersectKernel best = lsh::BestIntersectKernel();
  for (int kk = int(lsh::IntersectKernel::kPortable); kk <= int(best); kk++) {
    const auto kernel = lsh::IntersectKernel(kk);
    double j = -1;
    if (lsh::JaccardAtLeast(a.data(), a.size(), b.data(), b.size(), t, &j, kernel) != truth) std::abort();
    if (truth && j != double(inter) / double(uni)) std::abort();
    // symmetric
    double j2 = -1;
    if (lsh::JaccardAtLeast(b.data(), b.size(), a.data(), a.size(), t, &j2, kernel) != truth) std::abort();
  }
  return 0;
}
