// Seen-sets of 64-bit n-gram hashes for streaming paragraph dedup (filter/onion.h).
//
// ExactSeenSet: the hashes themselves in an open-addressing table (linear probing, load <= 3/4, doubling).
//   No false positives apart from 64-bit hash collisions.
// ApproxSeenSet: a chain of blocked Bloom stages. Needs no size in advance: when the newest stage holds its
//   capacity, a stage twice as large is added. Each stage is a register of 512-bit blocks (one cache line):
//   a key sets/tests k bits inside the single block its hash selects, so a probe costs one cache miss per
//   stage (and the stages are prefetched together). Stage i is sized for a false-positive rate
//   p * (1 - r) * r^i at its capacity (r = 0.8), so the chain's false-positive rate stays below p for any
//   number of stages (union bound: sum_i p (1-r) r^i < p). Bits per key and k are chosen per stage from the
//   exact blocked-Bloom false-positive formula (a Poisson mixture over block loads).
//
// Keys must be well mixed 64-bit values (n-gram hashes are); 0 is allowed.
// Both are saved in the format of docs/FORMAT-filter.md (kind "PSEN").
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace neardup {
namespace filter {

enum class SeenKind : uint32_t { kExact = 0, kApprox = 1 };

class SeenSet {
 public:
  virtual ~SeenSet() = default;
  virtual SeenKind kind() const = 0;
  // out[i] = 1 if keys[i] is (probably, for approx) in the set, else 0. Prefetches ahead.
  virtual void ContainsBatch(const uint64_t* keys, size_t n, uint8_t* out) const = 0;
  // Adds keys (callers pass keys not found by ContainsBatch; the exact set ignores repeats anyway).
  virtual void InsertBatch(const uint64_t* keys, size_t n) = 0;
  bool Contains(uint64_t key) const {
    uint8_t r;
    ContainsBatch(&key, 1, &r);
    return r != 0;
  }
  void Insert(uint64_t key) { InsertBatch(&key, 1); }
  // Keys inserted (approx: insertions counted, without the repeats the caller filtered).
  virtual uint64_t size() const = 0;
  // Bytes of memory held by the structure's tables.
  virtual uint64_t memory_bytes() const = 0;
  // Payload of the saved form (without the common header) and the header's flags/params.
  virtual void Serialize(std::string* payload) const = 0;
};

class ExactSeenSet final : public SeenSet {
 public:
  ExactSeenSet();
  SeenKind kind() const override { return SeenKind::kExact; }
  void ContainsBatch(const uint64_t* keys, size_t n, uint8_t* out) const override;
  void InsertBatch(const uint64_t* keys, size_t n) override;
  uint64_t size() const override { return count_ + (has_zero_ ? 1 : 0); }
  uint64_t memory_bytes() const override { return slots_.size() * sizeof(uint64_t); }
  void Serialize(std::string* payload) const override;
  Status Deserialize(const uint8_t* p, size_t n, const std::string& file);

 private:
  void Grow();
  void InsertOne(uint64_t key);
  std::vector<uint64_t> slots_;  // 0 = empty; the key 0 is kept in has_zero_
  uint64_t mask_ = 0;
  int shift_ = 0;
  uint64_t count_ = 0;
  bool has_zero_ = false;
};

struct FreeDeleter {
  void operator()(uint64_t* p) const;
};

class ApproxSeenSet final : public SeenSet {
 public:
  // fp_rate in (0, 0.5]; initial_capacity: keys of the first stage (>= 1024).
  explicit ApproxSeenSet(double fp_rate = 0.01, uint64_t initial_capacity = 1u << 16);
  SeenKind kind() const override { return SeenKind::kApprox; }
  void ContainsBatch(const uint64_t* keys, size_t n, uint8_t* out) const override;
  void InsertBatch(const uint64_t* keys, size_t n) override;
  uint64_t size() const override;
  uint64_t memory_bytes() const override;
  void Serialize(std::string* payload) const override;
  Status Deserialize(const uint8_t* p, size_t n, const std::string& file);
  double fp_rate() const { return fp_rate_; }
  size_t stages() const { return stages_.size(); }
  // The false-positive bound of the chain as built so far (sum of the stages' design rates).
  double fp_bound() const;

  // Design of one stage: the smallest bits/key (and its k) whose blocked-Bloom FP rate is <= target.
  static void Design(double target, double* bits_per_key, uint32_t* k);
  // The blocked Bloom (512-bit blocks) false-positive rate at bits_per_key with k bits per key.
  static double BlockedFpRate(double bits_per_key, uint32_t k);

  struct Stage {
    uint64_t capacity = 0;
    uint64_t count = 0;
    uint64_t blocks = 0;  // 64-byte blocks
    uint32_t k = 0;
    double target = 0;
    uint64_t seed = 0;
    std::unique_ptr<uint64_t[], FreeDeleter> bits;
  };

 private:
  void AddStage();
  double fp_rate_;
  uint64_t initial_capacity_;
  std::vector<Stage> stages_;
};

std::unique_ptr<SeenSet> MakeSeenSet(SeenKind kind, double fp_rate);

// Saves `set` (built for n-grams of length n) with the common header. Atomic (temp file + rename).
Status SaveSeenSet(const SeenSet& set, uint32_t n, const std::string& path);
// Loads a saved set. *n_out receives the n-gram length it was built for.
Status LoadSeenSet(const std::string& path, std::unique_ptr<SeenSet>* out, uint32_t* n_out);

}  // namespace filter
}  // namespace neardup
