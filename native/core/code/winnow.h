// Winnowing (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document fingerprinting",
// SIGMOD 2003) over a stream of normalised token values.
//
// A k-gram hash for every position p in [0, n - k]: a polynomial hash of values[p .. p + k) modulo 2^64,
// finalised by fast64::Mix64 (so that its minimum is a uniform choice). Windows are the w consecutive k-gram
// hashes starting at each q in [0, n - k - w + 1]; each window selects its minimum, the rightmost one when
// the minimum occurs more than once (the paper's robust winnowing), and the fingerprints are the distinct
// selected positions in increasing order. A stream with at least one k-gram but fewer than w has one
// window, all of its k-grams. Guarantee: two streams sharing a run of at least w + k - 1 equal values share
// a selected hash at the same offset within that run (the window of w k-grams wholly inside the run selects
// the same position in both), and no shared run shorter than k is ever detected.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup {
namespace code {

// Dolos's defaults (k-gram length 23, window 17); MOSS's documented ones are of the same order.
constexpr uint32_t kDefaultK = 23;
constexpr uint32_t kDefaultW = 17;
constexpr uint32_t kMaxK = 1000;
constexpr uint32_t kMaxW = 1000;

struct Fingerprint {
  uint64_t hash;
  uint32_t pos;  // the k-gram's first token
};

// The k-gram hashes of values[0..n), appended to *out (n - k + 1 of them, none when n < k).
void KgramHashes(const uint32_t* values, size_t n, uint32_t k, std::vector<uint64_t>* out);

// Robust winnowing of hashes[0..m) with window w, appended to *out.
void Winnow(const uint64_t* hashes, size_t m, uint32_t w, std::vector<Fingerprint>* out);

}  // namespace code
}  // namespace neardup
