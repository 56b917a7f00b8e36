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
//
// Equal fingerprints: the search runs on the distinct values only (Distinct below), and a pair of values
// stands for every pair of their members, the members of one value pairing among themselves. Without that,
// n identical fingerprints are one group that no partition splits, compared all-to-all in every table and
// at every level. Dense groups of distinct values (most members within a few bits of each other) are
// compared all-to-all where partitioning would not pay (all_pairs.cc, Finder::Group): O(g^2) at most.
//
// The number of pairs can be quadratic (n identical fingerprints make n(n-1)/2): AllPairs takes a cap,
// Components never holds the pairs, and PairStream hands them out in sorted chunks of bounded size.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/status.h"

namespace neardup {
namespace simhash {

// The distinct values of a set of fingerprints and, for each, the indices holding it. Memory when a value
// repeats: 4 bytes per fingerprint and 12 per distinct value (none otherwise: identity). Beyond 2^17
// fingerprints, repeats are looked for in an evenly spaced sample of 2^16 (identity when it has none).
struct Distinct {
  bool identity = true;         // no repeat found (all_pairs.cc): value u is fingerprint u (vectors empty)
  size_t n = 0;                 // fingerprints
  std::vector<uint64_t> fps;    // the distinct values (ascending)
  std::vector<uint32_t> start;  // value u's members: members[start[u] .. start[u+1]), ascending
  std::vector<uint32_t> members;
  size_t size() const { return identity ? n : fps.size(); }
  const uint32_t* begin(size_t u) const { return members.data() + start[u]; }
  const uint32_t* end(size_t u) const { return members.data() + start[u + 1]; }
};
void FindDistinct(const uint64_t* fps, size_t n, Distinct* d);

// Index pairs (i, j), i < j, with popcount(fps[i] ^ fps[j]) <= distance, each once, sorted. Identical
// fingerprints at different indices are pairs (distance 0). More than max_pairs pairs: kTooManyResults and
// an empty *out (checked while they are found: memory stays about max_pairs pairs).
Status AllPairs(const uint64_t* fps, size_t n, uint32_t blocks, uint32_t distance, size_t slots,
                const std::atomic<bool>* stop, std::vector<std::pair<uint32_t, uint32_t>>* out,
                uint64_t max_pairs = UINT64_MAX);

// labels[i] = the smallest index in i's connected component.
void Components(size_t n, const std::vector<std::pair<uint32_t, uint32_t>>& pairs, std::vector<uint32_t>* labels);

// The same labels straight from the fingerprints, without holding the pairs (memory: 4 bytes per
// fingerprint per slot).
Status AllComponents(const uint64_t* fps, size_t n, uint32_t blocks, uint32_t distance, size_t slots,
                     const std::atomic<bool>* stop, std::vector<uint32_t>* labels);

// Every pair of ids (a < b) whose fingerprints are within the distance, sorted and distinct (entries
// sharing an id pair once; an id never pairs with itself), in chunks: the pairs of a range of first ids at
// a time, found by a search restricted to that range. A first pass counts the pairs per entry when they do
// not all fit in the first chunk. Memory: the entries (16 bytes each), 4 bytes per entry per slot for the
// counts, and one chunk; time: one search per chunk (each costs about one AllPairs, minus the pairs).
class PairStream {
 public:
  // ids empty: entry i has id i; ids_are_fps: each entry's id is its fingerprint (find-all of bare
  // fingerprints), so no second copy is kept.
  PairStream(std::vector<uint64_t> fps, std::vector<uint64_t> ids, uint32_t blocks, uint32_t distance, bool ids_are_fps = false);
  // Appends the next chunk: all pairs of the next range of first ids, about max_pairs of them (more when one
  // id alone has more); *done once every pair has been produced.
  Status Next(uint64_t max_pairs, size_t slots, const std::atomic<bool>* stop,
              std::vector<std::pair<uint64_t, uint64_t>>* out, bool* done);

 private:
  Status Range(uint32_t lo, uint32_t hi, uint64_t cap, size_t slots, const std::atomic<bool>* stop,
               std::vector<std::pair<uint64_t, uint64_t>>* out);
  std::vector<uint64_t> fps_, ids_;  // sorted by id (stable); ids_ empty: the index, or with fps_ids_ fps_
  bool fps_ids_ = false;             // an entry's id is its fingerprint (fps_ ascending)
  uint64_t IdOf(uint32_t i) const { return fps_ids_ ? fps_[i] : ids_.empty() ? i : ids_[i]; }
  uint32_t m_, k_;
  std::vector<uint32_t> counts_;  // pairs whose smaller entry is i (filled when needed)
  Distinct distinct_;             // of fps_ (found on the first Next)
  uint32_t next_ = 0;             // the first entry of the next chunk
  bool counted_ = false, done_ = false, grouped_ = false;
};

}  // namespace simhash
}  // namespace neardup
