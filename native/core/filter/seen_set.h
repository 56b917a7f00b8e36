// Seen-sets of 64-bit n-gram hashes for streaming paragraph dedup (filter/onion.h).
//
// ExactSeenSet: the hashes themselves in an open-addressing table (linear probing, load <= 3/4, doubling).
//   No false positives apart from 64-bit hash collisions.
// ApproxSeenSet: a short chain of blocked Bloom stages. Needs no size in advance. Each stage is an array of
//   512-bit blocks (one cache line): a key sets/tests k bits inside the single block its stage hash selects,
//   so a probe costs one cache miss per stage; the stages of keys a few positions ahead are prefetched, and
//   the newest (largest) stage is tested first. The k bit positions are 9-bit fields of the key itself
//   (one 64-bit word for k <= 7), the block comes from a per-stage remix of the key.
//   Sizing: stage 0 holds 32 Ki keys (design rate p/10). When the newest stage is full, the next one is
//   sized for the rest of the input when the caller reports progress (SetProgress: bytes done / total),
//   as 2/3 of the keys the input rate so far projects (the rate of new n-grams usually declines), at
//   least half the keys held so far; its design rate is 0.9 of the unspent budget. Without progress the
//   next stage holds 4x the previous one, at 0.75 of the unspent budget. The design rates sum to < p, so
//   the chain's false-positive rate stays below p (union bound) for any number of stages. Bits per key
//   and k come from the exact blocked-Bloom false-positive formula (a Poisson mixture over block loads).
//
// Keys must be well mixed 64-bit values (n-gram hashes are); 0 is allowed.
// Both are saved in the format of docs/FORMAT.md section 8 (kind "PSEN").
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace neardup {
namespace io {
class AtomicFile;
}
namespace filter {

// Streams a saved payload to a file as little-endian u64 words (through a small buffer), keeping its
// size and CRC-32C, so saving never holds a second copy of the set.
class PayloadWriter {
 public:
  explicit PayloadWriter(io::AtomicFile* f) : f_(f) {}
  void Put64(uint64_t v);
  // Writes what is buffered; returns the first write error.
  Status Finish();
  uint64_t size() const { return size_; }
  uint32_t crc() const { return crc_; }

 private:
  void Flush();
  io::AtomicFile* f_;
  Status st_;
  uint32_t crc_ = 0;
  uint64_t size_ = 0;
  size_t n_ = 0;
  uint8_t buf_[1 << 16];
};

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
  // Progress of the input (bytes decided so far of an expected total), a sizing hint for growth.
  virtual void SetProgress(uint64_t done, uint64_t total) {
    (void)done;
    (void)total;
  }
  // Keys inserted (approx: insertions counted, without the repeats the caller filtered).
  virtual uint64_t size() const = 0;
  // Bytes of memory held by the structure's tables.
  virtual uint64_t memory_bytes() const = 0;
  // Writes the payload of the saved form (without the common header).
  virtual void Serialize(PayloadWriter* out) const = 0;
};

class ExactSeenSet final : public SeenSet {
 public:
  ExactSeenSet();
  SeenKind kind() const override { return SeenKind::kExact; }
  void ContainsBatch(const uint64_t* keys, size_t n, uint8_t* out) const override;
  void InsertBatch(const uint64_t* keys, size_t n) override;
  uint64_t size() const override { return count_ + (has_zero_ ? 1 : 0); }
  uint64_t memory_bytes() const override { return slots_.size() * sizeof(uint64_t); }
  void Serialize(PayloadWriter* out) const override;
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
  explicit ApproxSeenSet(double fp_rate = 0.01, uint64_t initial_capacity = 1u << 15);
  // The largest initial capacity a file may store (loaders refuse more).
  static constexpr uint64_t kMaxInitialCapacity = uint64_t(1) << 20;
  SeenKind kind() const override { return SeenKind::kApprox; }
  void ContainsBatch(const uint64_t* keys, size_t n, uint8_t* out) const override;
  void InsertBatch(const uint64_t* keys, size_t n) override;
  uint64_t size() const override;
  uint64_t memory_bytes() const override;
  void Serialize(PayloadWriter* out) const override;
  // version: the PSEN file version (1: all stages use the v1 bit positions).
  Status Deserialize(const uint8_t* p, size_t n, const std::string& file, uint32_t version);
  void SetProgress(uint64_t done, uint64_t total) override {
    done_ = done;
    total_ = total;
  }
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
    uint32_t scheme = 2;  // bit positions: 1 = PSEN v1 (remixed fields), 2 = fields of the key (v2)
    double target = 0;
    uint64_t seed = 0;
    std::unique_ptr<uint64_t[], FreeDeleter> bits;
  };

 private:
  void AddStage();
  double fp_rate_;
  uint64_t initial_capacity_;
  uint64_t done_ = 0, total_ = 0;
  std::vector<Stage> stages_;
};

std::unique_ptr<SeenSet> MakeSeenSet(SeenKind kind, double fp_rate);

// Saves `set` (built for n-grams of length n) with the common header. Atomic (temp file + rename).
Status SaveSeenSet(const SeenSet& set, uint32_t n, const std::string& path);
// Loads a saved set. *n_out receives the n-gram length it was built for.
Status LoadSeenSet(const std::string& path, std::unique_ptr<SeenSet>* out, uint32_t* n_out);
// The same over a file image in memory (fuzzing); `name` names it in errors.
Status ParseSeenSet(const uint8_t* data, size_t size, const std::string& name, std::unique_ptr<SeenSet>* out,
                    uint32_t* n_out);

}  // namespace filter
}  // namespace neardup
