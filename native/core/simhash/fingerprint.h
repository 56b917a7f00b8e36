// SimHash fingerprints (Charikar): every feature (a 64-bit shingle hash) votes on each of the 64 output
// bits, +w where its bit is 1 and -w where it is 0; output bit i is 1 iff the total for bit i is > 0
// (ties and empty input give 0).
//
// Weighting of shingles: kCount (every occurrence votes, so a shingle seen c times weighs c; this is what
// seomoz simhash does) or kBinary (each distinct shingle votes once).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "text/docs.h"
#include "text/shingle_batch.h"
#include "util/status.h"

namespace neardup {
namespace simhash {

// Unit votes (+1/-1) of n features.
uint64_t Compute(const uint64_t* features, size_t n);
// Weighted votes: feature i votes +w[i] / -w[i]. Weights must be finite (checked by the caller).
uint64_t ComputeWeighted(const uint64_t* features, const double* weights, size_t n);

enum class Weighting : uint8_t { kCount = 0, kBinary = 1 };

struct FingerprintConfig {
  ShingleConfig shingles;  // hash must be a 64-bit kind; `dedupe` is ignored (see weighting)
  Weighting weighting = Weighting::kCount;
};

// The seomoz simhash-py pipeline: re.split(r'\W+', text.lower()) without empty tokens, overlapping word
// 4-grams joined by one space (none when there are fewer than 4 words), unsigned_hash = first 8 bytes of
// MD5 big-endian, every shingle votes +-1.
FingerprintConfig SeomozProfile();

// Default pipeline of neardup's own profile: word 3-grams of \W+-split lower-cased text, fast64.
FingerprintConfig DefaultProfile();

Status ValidateFingerprintConfig(const FingerprintConfig& c);

// One fingerprint per document, on the thread pool (slots = 1: the calling thread only).
Status FingerprintBatch(const Docs& docs, const FingerprintConfig& config, size_t slots,
                        const std::atomic<bool>* stop, std::vector<uint64_t>* out);

}  // namespace simhash
}  // namespace neardup
