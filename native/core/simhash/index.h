// The online k-bit Hamming index over (id, fingerprint) entries.
//
// Storage: entries live in slots (fps[slot], ids[slot], an alive bit). Slots [0, main.hi) are indexed by
// the main run, [main.hi, delta.hi) by the delta run, and the newest slots [delta.hi, count) form a small
// buffer that queries scan directly. A run has, per table, a flat array of 32-bit entries sorted by the
// table's permuted fingerprint and a directory over its leading d bits (O(1) range lookup):
//   entry = (the 32-s permuted bits that follow the directory bits) << s | (slot - run.lo)
// where s is the number of bits needed for a slot of the run. Directories have at most count/8 + 1 words,
// so a table costs at most 4.5 bytes per key (4 for the entry, <= 0.5 for the directory), plus 8 bytes per
// key for the fingerprints and (unless the ids are dense, below) 8 for the ids.
//
// Inserts go to the buffer; when it outgrows kBufferMax it is merged into the delta run, and when the
// delta outgrows 1/8 of the main run everything is merged into the main run (each merge is an O(count)
// counting sort per table). Removes clear the alive bit (a tombstone) and are compacted away when
// tombstones exceed a quarter of the slots (or on Compact / Save).
//
// Thread safety: queries take a shared lock, mutations an exclusive one; any number of threads may query
// at once. While the ids are the slots (0..n-1 inserted in order, as simhashFindAll's default ids), the
// index keeps no id array and no id map (8 + ~24 bytes per key less); the first other id writes both.
// An index opened from a file answers from the memory map until the first mutation copies the
// fingerprint and id arrays (the mapped tables stay in use until the next merge).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "io/file.h"
#include "simhash/layout.h"
#include "util/raw_buffer.h"
#include "util/status.h"

namespace neardup {
namespace simhash {

class IdMap;

struct IndexStats {
  uint64_t size = 0;        // live entries
  uint64_t slots = 0;       // slots including tombstones
  uint64_t tombstones = 0;
  uint64_t buffered = 0;    // entries not yet in a run
  uint64_t table_bytes = 0; // directories + entries of every table
  uint64_t entry_bytes = 0; // fingerprint + id arrays
  uint32_t tables = 0;
  bool mapped = false;
};

class Index {
 public:
  static constexpr size_t kBufferMax = 256;

  ~Index();
  static Status Create(uint32_t blocks, uint32_t distance, std::unique_ptr<Index>* out);
  // Opens a file written by Save, memory-mapped. verify: check the payload CRC (reads the whole file).
  static Status Open(const std::string& path, bool verify, std::unique_ptr<Index>* out);
  // The same checks over a file image in memory (fuzzing): `data` must outlive the index.
  static Status OpenBytes(const uint8_t* data, size_t size, const std::string& name, bool verify,
                          std::unique_ptr<Index>* out);

  uint32_t blocks() const { return layout_.blocks(); }
  uint32_t distance() const { return layout_.distance(); }
  size_t tables() const { return layout_.tables(); }

  // Fails (changing nothing) when an id is already present or repeated in the batch.
  Status Insert(const uint64_t* ids, const uint64_t* fps, size_t n, size_t slots);
  // Removes the ids that are present; *removed = how many. Compaction, when due, uses `slots` pool slots.
  Status Remove(const uint64_t* ids, size_t n, size_t slots, size_t* removed);
  void Compact(size_t slots);
  bool Contains(uint64_t id);

  // The id of one entry within distance of q (the first found), or false.
  bool FindFirst(uint64_t q, uint64_t* id) const;
  // Every id within distance of q, ascending.
  void FindAll(uint64_t q, std::vector<uint64_t>* ids) const;
  // Batches on the pool. found[i] = 0/1, ids[i] valid when found.
  Status FindFirstBatch(const uint64_t* q, size_t n, size_t slots, const std::atomic<bool>* stop,
                        std::vector<uint64_t>* ids, std::vector<uint8_t>* found) const;
  // Query i's ids are ids[offsets[i] .. offsets[i+1]), ascending.
  Status FindAllBatch(const uint64_t* q, size_t n, size_t slots, const std::atomic<bool>* stop,
                      std::vector<uint32_t>* offsets, std::vector<uint64_t>* ids) const;

  // Compacts and merges, then writes the file atomically.
  Status Save(const std::string& path, size_t slots);
  IndexStats Stats() const;

 private:
  struct RunTable {
    uint32_t d = 0;
    const uint32_t* dir = nullptr;  // 2^d + 1 words
    const uint32_t* ent = nullptr;  // hi - lo words
  };
  struct Run {
    uint32_t lo = 0, hi = 0, s = 0;
    std::vector<RunTable> t;
    // Empty when the tables point into the file map. Not zero-filled (each table's directory is cleared
    // before its counts); large runs ask for transparent huge pages: a lookup's reads land anywhere in
    // ~5 bytes x tables x keys, and with 4 KiB pages nearly every one of them also missed the TLB.
    RawBuffer<uint32_t> storage;
    uint64_t bytes = 0;
  };

  explicit Index(uint32_t blocks, uint32_t distance);
  const uint64_t* Fps() const { return mapped_ ? map_fps_ : fps_.data(); }
  const uint64_t* Ids() const { return mapped_ ? map_ids_ : ids_.data(); }
  // The id of a slot. While dense_ (every id so far equal to its slot: ids 0..n-1 inserted in order, none
  // compacted away) no id array or id map is kept: the slot is the id.
  uint64_t IdAt(size_t slot) const { return dense_ ? slot : Ids()[slot]; }
  // Leaves the dense state: writes the id array (0..count-1) the other paths read.
  void Undense();
  bool Alive(size_t slot) const { return (alive_[slot >> 6] >> (slot & 63)) & 1; }
  void Materialize();
  void EnsureIdMap();
  void BuildRun(uint32_t lo, uint32_t hi, size_t slots, Run* run) const;
  void CompactLocked(size_t slots);
  // Merges every slot into the main run (after Materialize) and releases the file map.
  void RebuildMain(size_t slots);
  void MergePolicy(size_t slots);

  // One table's lookup of one query: the permuted query and its bucket's entry range [beg, end) (beg holds
  // the bucket between ProbeStart and ProbeRanges).
  struct Probe {
    uint64_t perm;
    uint32_t beg, end;
  };
  static constexpr size_t kPipelineDistance = 8;  // queries between the stages of the batch pipeline
  void ProbeStart(const Run& run, uint64_t q, Probe* p) const;
  void ProbeRanges(const Run& run, Probe* p) const;
  template <typename Fn>
  void Pipelined(const uint64_t* q, size_t b, size_t e, std::vector<Probe>* ring, Fn&& fn) const;
  template <bool kAll>
  bool ScanTable(const Run& run, size_t t, uint64_t q, uint64_t perm, size_t beg, size_t end, uint64_t* first,
                 std::vector<uint32_t>* all) const;
  // pre: the main run's probes of q with their ranges read (the batch pipeline), or null.
  template <bool kAll, bool kFast>
  bool Query(uint64_t q, const Probe* pre, uint64_t* first, std::vector<uint32_t>* all) const;
  bool QueryDispatch(bool all, uint64_t q, const Probe* pre, uint64_t* first, std::vector<uint32_t>* out) const;
  bool QueryFast(bool all, uint64_t q, const Probe* pre, uint64_t* first, std::vector<uint32_t>* out) const;

  Layout layout_;
  mutable std::shared_mutex mu_;
  size_t count_ = 0, dead_ = 0;
  std::vector<uint64_t, HugePageAllocator<uint64_t>> fps_;  // read at random by every lookup
  std::vector<uint64_t> ids_, alive_;
  const uint64_t* map_fps_ = nullptr;
  const uint64_t* map_ids_ = nullptr;
  bool mapped_ = false;
  bool dense_ = true;
  std::unique_ptr<io::MappedFile> map_;
  Run main_, delta_;
  std::unique_ptr<IdMap> idmap_;
};

}  // namespace simhash
}  // namespace neardup
