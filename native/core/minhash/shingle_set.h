// Shingle sets for exact Jaccard: a document's set is its 64-bit shingle hashes, sorted and distinct; two sets
// are compared by one merge that stops as soon as the threshold is out of reach. Used by dedup's exact
// verification (lsh_dedup.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup {
namespace lsh {

// Sorts 64-bit hashes (close to uniform, repeats allowed) in place: an LSD radix sort on their top lg(n) + 4
// bits (passes of at most 11 bits, counted in one pass), after which equal top bits are rare and one insertion
// pass finishes (it moves almost nothing; on skewed input it is quadratic only in the longest run of equal top
// bits). ~1.6x faster than bucketing on the top bits with insertion-sorted buckets, ~6x faster than std::sort
// on a document's set. tmp and cnt are scratch, reused by the caller.
void SortHashes(uint64_t* a, size_t n, std::vector<uint64_t>* tmp, std::vector<uint32_t>* cnt);

// The merge: blocks of 8 (AVX-512) or 4 (AVX2) values of one set against a block of the other, then one value
// at a time. BestIntersectKernel() is the best the CPU has (NEARDUP_DISABLE_SIMD=1: portable).
enum class IntersectKernel { kPortable, kAvx2, kAvx512 };
IntersectKernel BestIntersectKernel();
const char* IntersectKernelName(IntersectKernel k);

// Whether two sorted sets of distinct values have Jaccard >= t, decided exactly as
// inter / (na + nb - inter) >= t in doubles (an empty set: false, also against another). Sets whose sizes alone rule the threshold
// out are not read, and the merge stops once even matching every remaining value could not reach it; the
// Jaccard value goes to *j only when the answer is true. `kernel` must be one the CPU has.
bool JaccardAtLeast(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, double t, double* j,
                    IntersectKernel kernel = BestIntersectKernel());

}  // namespace lsh
}  // namespace neardup
