// MinHash LSH: band keys per profile, datasketch's choice of (b, r), a mutable in-memory index and a
// read-only memory-mapped one (file format: docs/FORMAT.md section 6).
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
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/file.h"
#include "minhash/banding.h"  // OptimalParam, FalsePositiveArea, FalseNegativeArea
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
};

Status Validate(const Params& p);

// keys[j] for j < b of one signature.
void BandKeys(const Params& p, const uint8_t* sig, uint64_t* keys);
// keys[i*b + j] for n signatures, on the thread pool.
void BandKeysBatch(const Params& p, const uint8_t* sigs, size_t n, uint64_t* keys, size_t slots,
                   const std::atomic<bool>* stop);

// Fraction of equal values of two signatures (the MinHash estimate of Jaccard).
double EstimateJaccard(const Params& p, const uint8_t* a, const uint8_t* b);

using Pair = std::pair<uint64_t, uint64_t>;

// A mutable index. Not synchronised: const methods may run concurrently with each other only.
class Index {
 public:
  explicit Index(const Params& p);
  const Params& params() const { return p_; }
  // All-or-nothing: an id already present (or repeated in `ids`) is an error and nothing is inserted.
  Status Insert(const uint64_t* ids, const uint8_t* sigs, size_t n, size_t slots, const std::atomic<bool>* stop);
  // Sorted distinct ids sharing at least one band with `sig`.
  void Query(const uint8_t* sig, std::vector<uint64_t>* out) const;
  bool Remove(uint64_t id);
  bool Contains(uint64_t id) const { return entries_.count(id) != 0; }
  size_t size() const { return entries_.size(); }
  // Every pair (a < b) sharing a band, sorted, distinct; kTooManyResults beyond max_pairs (checked as they
  // are produced: memory stays about max_pairs pairs).
  Status CandidatePairs(std::vector<Pair>* out, uint64_t max_pairs = UINT64_MAX) const;
  // Raised by every Insert and Remove (a PairStream refuses to go on over a changed index).
  uint64_t version() const { return version_; }
  // ids in insertion order and, for each, the id of its cluster's first inserted member.
  void Clusters(std::vector<uint64_t>* ids, std::vector<uint64_t>* reps) const;
  Status Save(const std::string& path) const;

 private:
  struct Entry {
    uint64_t seq;
    std::vector<uint64_t> keys;
  };
  void IdsInInsertionOrder(std::vector<uint64_t>* ids) const;
  Params p_;
  std::vector<std::unordered_map<uint64_t, std::vector<uint64_t>>> tables_;
  std::unordered_map<uint64_t, Entry> entries_;
  uint64_t next_seq_ = 0;
  uint64_t version_ = 0;
  friend class PairStream;
};

// A saved index, memory-mapped: band tables are sorted arrays of (key, id) searched in place. Read-only;
// every method is safe to call concurrently.
class FrozenIndex {
 public:
  Status Load(const std::string& path, bool verify_checksum);
  // The same checks over a file image already in memory (fuzzing): `data` must outlive the index; `name`
  // names it in errors.
  Status LoadBytes(const uint8_t* data, size_t size, const std::string& name, bool verify_checksum);
  const Params& params() const { return p_; }
  size_t size() const { return n_; }
  void Query(const uint8_t* sig, std::vector<uint64_t>* out) const;
  Status CandidatePairs(std::vector<Pair>* out, uint64_t max_pairs = UINT64_MAX) const;
  void Clusters(std::vector<uint64_t>* ids, std::vector<uint64_t>* reps) const;

 private:
  friend class PairStream;
  struct Slot {
    uint64_t key, id;
  };
  const Slot* table(uint32_t j) const { return tables_ + size_t(j) * n_; }
  io::MappedFile map_;
  Params p_;
  uint64_t n_ = 0;
  const uint64_t* ids_ = nullptr;  // insertion order
  const Slot* tables_ = nullptr;
};

// Candidate pairs (a < b sharing a band) in the order CandidatePairs returns them (a, then b ascending), a
// chunk at a time. It holds the sorted ids, one id's partners and, for a FrozenIndex, the band keys of every
// id (8 * b bytes per id); never the pairs. The index must outlive it; a mutable index must not change
// while it runs (Next then fails).
class PairStream {
 public:
  explicit PairStream(const Index& index);
  explicit PairStream(const FrozenIndex& frozen);
  // Appends up to max_pairs pairs to *out; *done is set once every pair has been produced.
  Status Next(size_t max_pairs, std::vector<Pair>* out, bool* done);

 private:
  void Partners(size_t i);
  const Index* index_ = nullptr;
  const FrozenIndex* frozen_ = nullptr;
  uint64_t version_ = 0;
  std::vector<uint64_t> ids_;   // sorted
  std::vector<uint64_t> keys_;  // frozen: keys_[i * b + j] is band j's key of ids_[i]
  size_t next_ = 0;             // the next id whose partners are to be listed
  std::vector<uint64_t> partners_;
  size_t partner_pos_ = 0;      // partners_ of ids_[next_ - 1] already handed out
};

// Candidate pairs of sorted (key, id) runs: helper shared by both indexes and by dedup.
template <typename Fn>
void ForEachBucket(const uint64_t* keys, size_t n, size_t stride, Fn&& fn) {
  size_t i = 0;
  while (i < n) {
    size_t j = i + 1;
    while (j < n && keys[j * stride] == keys[i * stride]) j++;
    if (j - i >= 2) fn(i, j);
    i = j;
  }
}

}  // namespace lsh
}  // namespace neardup
