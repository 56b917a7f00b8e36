// MinHash profiles: which shingles, which hash and which permutations make a signature.
//
//   fast        one fast64 hash per shingle; k values by one-permutation hashing (bin = high bits of the
//               hash, value = its low 32 bits, minimum per bin) with optimal densification of empty bins
//               (Shrivastava 2017). The default. docs/minhash.md gives its estimator quality.
//   doubri-v1   doubri 1.0: value i = min over the distinct shingles of MurmurHash3_x86_32(shingle, seed+i);
//               a text with fewer than n units is hashed as the single shingle "EMPTY".
//   datasketch  datasketch 1.x legacy: h = first 4 bytes of SHA-1 (little-endian); value i = min over the
//               distinct shingles of (((a_i*h + b_i) mod 2^64) mod (2^61-1)) & 0xFFFFFFFF, with (a_i, b_i)
//               drawn from numpy RandomState(seed).
// Every profile outputs k unsigned 32-bit values per document.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "text/shingle.h"
#include "util/status.h"

namespace neardup {
namespace minhash {

enum class Profile : uint8_t { kFast = 0, kDoubriV1 = 1, kDatasketch = 2 };
const char* ProfileName(Profile p);

struct Config {
  Profile profile = Profile::kFast;
  TextOptions text;
  uint32_t num_perm = 128;  // k, values per signature
  uint64_t seed = 0;        // fast: fast64 seed; doubri-v1: first Murmur3 seed; datasketch: RandomState seed
};

// Limits on k per profile: fast 1..1024 (densification costs O(k^2 / filled bins) for tiny documents),
// doubri-v1 1..65536, datasketch 1..65536.
constexpr uint32_t kMaxFastPerm = 1024;
constexpr uint32_t kMaxPerm = 65536;

// The profile's own defaults: fast = char 5-grams, k 128, seed 0; doubri-v1 = char 5-grams, k 800, seed 0;
// datasketch = lower-cased whitespace word 5-grams (Python's text.lower().split()), k 128, seed 1.
Config DefaultConfig(Profile p);
Status ValidateConfig(const Config& c);

// The immutable part of a configuration, shared by every thread: validated options and permutations.
class Plan {
 public:
  static Status Create(const Config& c, std::shared_ptr<const Plan>* out);
  const Config& config() const { return c_; }
  Profile profile() const { return c_.profile; }
  size_t k() const { return c_.num_perm; }
  // datasketch only: a_i and b_i.
  const uint64_t* a() const { return a_.data(); }
  const uint64_t* b() const { return b_.data(); }
  // fast only: prepared fast64 seed and the seed of the densification probes.
  uint64_t fast_seed() const { return fast_seed_; }
  uint64_t probe_seed() const { return probe_seed_; }

 private:
  Config c_;
  std::vector<uint64_t> a_, b_;
  uint64_t fast_seed_ = 0, probe_seed_ = 0;
};

}  // namespace minhash
}  // namespace neardup
