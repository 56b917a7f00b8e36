// Seen-sets of 64-bit n-gram hashes for streaming paragraph dedup (filter/onion.h).
//
// ExactSeenSet: the hashes themselves, quotiented, in 256 shards (by the top 8 bits) of ordered linear probing
//   (Robin Hood with ties broken by the key: every cluster is sorted). A shard of 2^q home slots stores in
//   each slot only the key's low 56-q bits and its distance from its home slot (8 bits), in the fewest whole
//   bytes that hold them: (64 - 8 - q + 8) / 8 rounded up, i.e. 7 bytes for 2^16..2^23 home slots in all,
//   6 bytes for 2^24..2^31 (15 M..1.9 G keys), 5 above; plus up to 255 slots after each shard's last home
//   slot (no wrap-around). Load <= 0.9 (kExactMaxLoad): 6.7-13.3 bytes a key with 6-byte slots, against
//   10.7-21.3 for full 8-byte keys at load <= 3/4. A shard doubles on its own (old and new exist together for
//   one shard only, 1/256 of the set), when full. A key that would land more than 254 slots from its home
//   (254 once a shard has 1 Ki home slots; never seen with well-mixed keys) goes to a per-shard ordered stash.
//   Reserve() sizes it once when the key count is known (loading a saved set).
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
#include <set>
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
  uint64_t size() const override { return count_; }
  uint64_t memory_bytes() const override { return bytes_; }
  // Keys in ascending order (the table's order). Payload: count, then the keys.
  void Serialize(PayloadWriter* out) const override;
  Status Deserialize(const uint8_t* p, size_t n, const std::string& file);
  // Sizes every shard for `keys` keys in all (at most kExactMaxLoad full); never shrinks.
  void Reserve(uint64_t keys);
  // The largest distance of a key from its home slot (tests).
  uint32_t max_distance() const;
  // Keys held in the shards' stashes (tests).
  uint64_t stashed() const {
    uint64_t n = 0;
    for (const Shard& sh : shards_) n += sh.stash.size();
    return n;
  }

  static constexpr int kShardBits = 8;
  static constexpr size_t kShards = size_t(1) << kShardBits;

 private:
  // Zeroed bytes: from the heap when small, else pages from the system (io::os::AllocatePages), so the
  // blocks a growing set frees go back to the system instead of staying as holes in the heap.
  struct Block {
    Block() = default;
    explicit Block(size_t bytes);
    Block(Block&& o) noexcept : p(o.p), bytes(o.bytes), pages(o.pages) { o.p = nullptr; }
    Block& operator=(Block&& o) noexcept;
    ~Block();
    uint8_t* get() const { return p; }
    uint8_t* p = nullptr;
    size_t bytes = 0;
    bool pages = false;
  };
  struct Shard {
    Block mem;                       // (2^q + extra) slots of `width` bytes, then 8 bytes of padding
    uint32_t q = 0;                  // home-slot bits
    uint32_t width = 8;              // bytes a slot: 8 distance bits (distance + 1; 0 = empty), remainder above
    uint32_t extra = 0;              // slots after the last home slot (no wrap-around); max distance extra - 1
    uint64_t count = 0;
    uint64_t limit = 0;              // keys before the shard doubles
    // Keys that would land more than extra - 1 slots from home (never seen with well-mixed keys; crafted
    // keys crowding a few home slots end up here instead of growing the table without bound).
    std::set<uint64_t> stash;
  };
  static constexpr uint64_t kStashKeyBytes = 48;  // a std::set node, roughly
  static void InitShard(Shard* sh, uint32_t q);
  static uint64_t ShardBytes(const Shard& sh);
  static bool Find(const Shard& sh, uint64_t key);
  // Inserts a key known to be absent. False when a key would move past the maximum distance: *carried
  // is then the key left out (the table holds all the others; the caller stashes it).
  static bool Place(Shard* sh, uint64_t key, uint64_t* carried);
  void Add(uint64_t key);
  void Rebuild(size_t s, uint32_t q, const uint64_t* extra_key);
  std::vector<Shard> shards_;
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
};

// Largest load (keys / home slots) of an exact shard before it doubles.
constexpr double kExactMaxLoad = 0.9;

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
