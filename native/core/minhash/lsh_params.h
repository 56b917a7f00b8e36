// MinHash LSH parameters and band keys (shared by the index, its file format and dedup).
//
// A signature is num_perm values of value_bytes (4: u32, 8: u64) each, little-endian in memory. Band j
// covers values [j*r, (j+1)*r). Its key bytes depend on the profile:
//   datasketch: each value as 8 bytes big-endian (datasketch's MinHashLSH, legacy scheme);
//   doubri:     the raw bytes (u32 little-endian, as in .hash files);
//   fast:       the raw bytes (u32 or u64 little-endian).
// Tables store fast64(key bytes) (64-bit): two different bands collide with probability 2^-64 per pair;
// callers that need certainty re-check candidates against the full signatures (dedup --verify).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "util/status.h"

namespace neardup {
namespace lsh {

enum class Profile : uint32_t { kFast = 0, kDatasketch = 1, kDoubri = 2 };

struct Params {
  Profile profile = Profile::kFast;
  uint32_t num_perm = 128;
  uint32_t b = 0, r = 0;
  uint32_t value_bytes = 8;
  size_t signature_bytes() const { return size_t(num_perm) * value_bytes; }
  bool operator==(const Params& o) const {
    return profile == o.profile && num_perm == o.num_perm && b == o.b && r == o.r && value_bytes == o.value_bytes;
  }
};

Status Validate(const Params& p);

// keys[j] for j < b of one signature.
void BandKeys(const Params& p, const uint8_t* sig, uint64_t* keys);
// The key of band j alone.
uint64_t BandKey(const Params& p, const uint8_t* sig, uint32_t j);
// keys[i*b + j] for n signatures, on the thread pool.
void BandKeysBatch(const Params& p, const uint8_t* sigs, size_t n, uint64_t* keys, size_t slots,
                   const std::atomic<bool>* stop);

// Fraction of equal values of two signatures (the MinHash estimate of Jaccard).
double EstimateJaccard(const Params& p, const uint8_t* a, const uint8_t* b);

}  // namespace lsh
}  // namespace neardup
