// The files of a chunk index (docs/FORMAT.md section 12): the manifest (CKMF), the per-document directory
// (CKDI), record files holding chunk lists and top lists (CKRC), and the partial pair counts of one range of
// the chunk-id space (CKPR). Every file starts with the common header and is written with io::AtomicFile;
// files other than the manifest are never changed once written (a run writes new ones), so readers can map
// them while a writer works.
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chunks/chunker.h"
#include "io/file.h"
#include "util/status.h"

namespace neardup {
namespace chunks {

constexpr char kManifestKind[4] = {'C', 'K', 'M', 'F'};
constexpr char kDirectoryKind[4] = {'C', 'K', 'D', 'I'};
constexpr char kRecordKind[4] = {'C', 'K', 'R', 'C'};
constexpr char kPairsKind[4] = {'C', 'K', 'P', 'R'};
constexpr uint32_t kFormatVersion = 1;

constexpr uint32_t kMaxParts = 4096;
constexpr uint32_t kMaxTopK = 100000;
constexpr size_t kMaxExtIdBytes = 65535;

// What an index is built with (fixed when it is created).
struct IndexParams {
  ChunkOptions chunk;
  uint32_t parts = 1;          // ranges of the chunk-id space, each its own segments
  uint32_t top_k = 100;        // similar documents shown per document (the table)
  uint32_t min_shared = 1;     // floor on shared chunks
  double min_similarity = 0;   // floor on similarity(doc -> other)
  // Entries kept per document: K and some more, so that an update that removes entries from a list can
  // usually still give its exact top K without recounting the document.
  uint32_t keep() const { return top_k + (top_k / 4 > 8 ? top_k / 4 : 8); }
};
Status ValidateParams(const IndexParams& p);

// Key range of part p of P over a `bits`-bit chunk-id space: [lo, hi] (inclusive), lo = floor(p * 2^bits / P).
void PartRange(uint32_t bits, uint32_t parts, uint32_t p, uint64_t* lo, uint64_t* hi);
// The part holding a chunk id.
uint32_t PartOf(uint32_t bits, uint32_t parts, uint64_t key);

// ------------------------------------------------------------------------------------------------ manifest

struct SegmentRef {
  uint32_t part = 0;
  uint32_t file = 0;  // file number: seg-<part>-<file>.pst
  uint32_t gen = 0;   // generation whose postings it holds (tombstones kill ids in segments with gen <= theirs)
  uint64_t posts = 0;
};

struct Tombstone {
  uint32_t id = 0;
  uint32_t gen = 0;  // postings of id in segments with gen <= this are dead
};

enum ManifestState : uint32_t { kIndex = 0, kStaged = 1 };

struct Manifest {
  uint32_t generation = 0;
  uint32_t state = kIndex;
  uint64_t build_id = 0;   // random, per build: pair files carry it
  uint32_t next_file = 1;  // file numbers below it were given out
  uint32_t directory = 0;  // file number of the directory: dir-<n>.ckd
  IndexParams params;
  uint32_t next_id = 0;  // document ids below it were given out
  uint32_t live = 0;
  std::vector<uint32_t> doc_files;  // record files of chunk lists in use: docs-<n>.ckr
  std::vector<uint32_t> top_files;  // record files of top lists in use: tops-<n>.ckr
  std::vector<SegmentRef> segments;  // ascending (part, file)
  std::vector<Tombstone> tombstones;  // ascending id
};

Status WriteManifest(const std::string& path, const Manifest& m);
Status ReadManifest(const std::string& path, Manifest* m);

// File names inside the index folder.
std::string DirectoryName(uint32_t file);
std::string DocsName(uint32_t file);
std::string TopsName(uint32_t file);
std::string SegmentName(uint32_t part, uint32_t file);
constexpr const char* kManifestName = "MANIFEST";
constexpr const char* kPendingName = "PENDING";
constexpr const char* kStageName = "STAGE";
// True for a file name a chunk index writes (data files, manifests): what cleanup may remove.
bool IsIndexFileName(const std::string& name);

// ----------------------------------------------------------------------------------------------- directory

struct DocEntry {
  uint32_t flags = 0;   // bit 0: live; bit 1: its top list holds every document passing the floors
  uint32_t chunks = 0;  // distinct chunk ids
  uint32_t doc_file = 0;
  uint32_t top_file = 0;  // 0: no top list (empty)
  uint64_t doc_off = 0;
  uint64_t top_off = 0;
  uint32_t top_count = 0;    // entries of the top list
  uint32_t tail_other = 0;   // its last entry (the k-th when full)
  uint32_t tail_shared = 0;
  bool live() const { return flags & 1; }
  bool complete() const { return flags & 2; }
};
constexpr size_t kDocEntrySize = 48;

// Per-document table: entries by id, external ids (JSON text, as given), live ids in external-id order.
class Directory {
 public:
  size_t slots() const { return entries_.size(); }
  uint32_t live() const { return live_; }
  const DocEntry& entry(uint32_t id) const { return entries_[id]; }
  DocEntry& mutable_entry(uint32_t id) { return entries_[id]; }
  std::string_view ext(uint32_t id) const {
    return std::string_view(heap_.data() + ext_off_[id], ext_off_[id + 1] - ext_off_[id]);
  }
  // Live id with this external id, or -1.
  int64_t Find(std::string_view ext) const;
  // Live ids in external-id order.
  const std::vector<uint32_t>& order() const { return order_; }
  // Position of a live id when ordered by chunk count, then external id: within one list, entries with the
  // same shared count rank by it (the smaller document has the larger reverse similarity).
  uint32_t rank(uint32_t id) const { return rank_[id]; }
  // The live ids in rank order (by_rank()[rank(id)] == id).
  const std::vector<uint32_t>& by_rank() const { return by_rank_; }
  // Bytes it holds (what a run's memory budget must leave for it).
  uint64_t MemoryBytes() const {
    return entries_.capacity() * sizeof(DocEntry) + ext_off_.capacity() * 8 + heap_.capacity() +
           (order_.capacity() + rank_.capacity() + by_rank_.capacity()) * 4;
  }

  // Building: Reset, then Append ids 0, 1, ... in order (free slots with a dead entry and an empty id), then
  // Seal (orders the live ids; fails on a repeated external id, naming it).
  void Reset(size_t reserve_slots);
  void Append(const DocEntry& e, std::string_view ext);
  Status Seal();

  Status Save(const std::string& path) const;
  // Checks the structure (entries, heap, order); record-file numbers are checked by the caller.
  Status Load(const std::string& path, bool verify);

 private:
  std::vector<DocEntry> entries_;
  std::vector<uint64_t> ext_off_{0};
  std::string heap_;
  std::vector<uint32_t> order_, rank_, by_rank_;
  uint32_t live_ = 0;
  void Rank();
};

// Ext-id order: bytewise (memcmp), a prefix first.
inline bool ExtLess(std::string_view a, std::string_view b) { return a < b; }

// ------------------------------------------------------------------------------------------------- records

enum RecordKind : uint32_t { kDocRecords = 0, kTopRecords = 1 };

class RecordWriter {
 public:
  // item_bytes: 4 or 8 (chunk ids), 8 (top entries).
  Status Open(const std::string& path, RecordKind kind, uint32_t item_bytes);
  // Appends one record; *offset = its file offset.
  Status Add(uint32_t id, const uint8_t* items, uint32_t count, uint64_t* offset);
  Status Commit();
  void Abort() { out_.Abort(); }
  uint64_t records() const { return records_; }

 private:
  io::AtomicFile out_;
  RecordKind kind_ = kDocRecords;
  uint32_t item_bytes_ = 0;
  uint64_t records_ = 0;
  uint32_t crc_ = 0;
  std::vector<uint8_t> buf_;
};

class RecordFile {
 public:
  Status Open(const std::string& path, RecordKind kind, uint32_t item_bytes, bool verify);
  // The items of the record at `offset`, which must be document `id`'s (bounds, id and checksum checked).
  Status Read(uint64_t offset, uint32_t id, const uint8_t** items, uint32_t* count) const;
  uint64_t size() const { return file_.size(); }
  const std::string& path() const { return file_.path(); }

 private:
  io::MappedFile file_;
  uint32_t item_bytes_ = 0;
};

// Chunk ids of a document record (4- or 8-byte items), checked strictly ascending.
Status DecodeChunks(const uint8_t* items, uint32_t count, uint32_t item_bytes, const std::string& file,
                    uint64_t offset, std::vector<uint64_t>* out);

// --------------------------------------------------------------------------------------------------- pairs

// Partial shared-chunk counts of one range of the chunk-id space: for each document a (ascending) the other
// documents b (ascending) sharing chunks of the range with it, and how many.
struct PairsInfo {
  uint64_t build_id = 0;
  uint32_t part = 0, parts = 1;
  uint32_t slots = 0;
  uint64_t lo = 0, hi = 0;
};

class PairsWriter {
 public:
  Status Open(const std::string& path, const PairsInfo& info);
  // (b, count): b ascending, count >= 1, at least one; a ascending across calls.
  Status Add(uint32_t a, const std::vector<std::pair<uint32_t, uint32_t>>& entries);
  Status Commit();
  void Abort() { out_.Abort(); }

 private:
  io::AtomicFile out_;
  uint32_t crc_ = 0;
  uint64_t records_ = 0, entries_ = 0;
  int64_t last_a_ = -1;
  std::vector<uint8_t> buf_;
};

// Streams a pairs file (its checksum is checked when the last record has been read).
class PairsReader {
 public:
  ~PairsReader();
  Status Open(const std::string& path);
  const PairsInfo& info() const { return info_; }
  // The next record: false at the end (after the checksum check; *s holds any error).
  bool Next(uint32_t* a, std::vector<std::pair<uint32_t, uint32_t>>* entries, Status* s);
  const std::string& path() const { return path_; }

 private:
  bool Fill(size_t n, Status* s);
  std::string path_;
  std::FILE* f_ = nullptr;
  PairsInfo info_;
  uint64_t payload_ = 0, read_ = 0, records_ = 0, entries_ = 0, seen_records_ = 0, seen_entries_ = 0;
  uint32_t crc_ = 0, expect_crc_ = 0;
  int64_t last_a_ = -1;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
};

// "'<file>' is corrupt at offset N (0x..): what".
Status CorruptAt(const std::string& file, uint64_t offset, const std::string& what);

}  // namespace chunks
}  // namespace neardup
