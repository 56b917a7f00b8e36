// All pairs within k bits in a set of fingerprints (batch, no index kept), and connected components.
//
// Per table (in parallel): sort the items by the table's prefix (LSD radix sort of packed
// (prefix, index) words), then compare within each group of equal prefix. Each pair is reported only by its
// canonical table (layout.h), so no de-duplication pass is needed.
//
// Skew: a group larger than a few dozen members is re-partitioned instead of compared all-to-all. Let V
// be the bits on which the group's members vary; if |V| <= k every pair is within k; otherwise V is split
// into k+1 blocks (each with at least one varying bit, so every sub-group is strictly smaller) and, by the
// pigeonhole principle again, two members within k bits agree on at least one of them: the group is
// sorted by each block in turn and the sub-groups are processed recursively (a pair is reported only at
// the first block it agrees on, at every level).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/status.h"

namespace neardup {
namespace simhash {

// Index pairs (i, j), i < j, with popcount(fps[i] ^ fps[j]) <= distance, each once, sorted. Identical
// fingerprints at different indices are pairs (distance 0).
Status AllPairs(const uint64_t* fps, size_t n, uint32_t blocks, uint32_t distance, size_t slots,
                const std::atomic<bool>* stop, std::vector<std::pair<uint32_t, uint32_t>>* out);

// labels[i] = the smallest index in i's connected component.
void Components(size_t n, const std::vector<std::pair<uint32_t, uint32_t>>& pairs, std::vector<uint32_t>* labels);

}  // namespace simhash
}  // namespace neardup
