// Exact and key dedup: each document is reduced to a 128-bit hash of its (optionally normalised) text, and a
// document is a duplicate of the first earlier document with the same hash.
//
// The hash is MurmurHash3_x64_128 (seed 0) of the text as is, or of the normalised text the shingle stream
// builds (text::Shingler: lower-casing, punctuation stripping, whitespace folding; the word unit re-joins
// the words with single spaces), so the normalisation names are dedup's. Two different texts share a hash
// with probability about 2^-128 per pair (for 10^12 documents, about 10^-15 in all).
//
// Memory: documents are looked up in an open-addressing table of (hash, first document) as they arrive, in
// input order, so each one's representative is known when its batch is added (`dedup --exact-first` needs
// that). With a memory budget, once the table would outgrow it, the table's entries and every later
// document go as (hash, document) records to an external sort (io/spill_sort.h: sorted runs in the spill
// folder, merged), and the representatives of the documents added since are resolved in Finish(); the
// result is the same either way.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/spill_sort.h"
#include "io/temp_names.h"
#include "text/docs.h"
#include "text/shingle.h"
#include "util/status.h"

namespace neardup {
namespace exact {

class ExactIndex;
struct IndexWrite;

struct Hash128 {
  uint64_t hi = 0, lo = 0;
  bool operator==(const Hash128& o) const { return hi == o.hi && lo == o.lo; }
  bool operator!=(const Hash128& o) const { return !(*this == o); }
};

// A document of this run and its hash (an entry of an index being written).
struct NewEntry {
  uint64_t hi, lo;
  uint32_t doc, pad;
};

struct ExactOptions {
  // false: the bytes as they are. true: the normalised text of text::Shingler with `text` (its n, short
  // and, in char mode, split are irrelevant).
  bool normalize = false;
  TextOptions text;
  uint64_t memory_bytes = 0;  // 0: the table in memory, never spilled
  std::string tmp_dir;        // parent of the spill folder
};

// The 128-bit hash of one text under the options (the table's key). Thread-safe; `shingler` is scratch for
// the normalised form (used only when options.normalize).
Hash128 HashText(const ExactOptions& o, const uint8_t* data, size_t len, Shingler* shingler);

// out[i] = HashText of document i, for every document, on the pool. shinglers: per-slot scratch for the
// normalised form, grown on first use and kept by the caller (its size is set here).
Status HashDocuments(const ExactOptions& o, const Docs& docs, Hash128* out, std::vector<std::unique_ptr<Shingler>>* shinglers,
                     const std::atomic<bool>* stop);

struct ExactStats {
  uint64_t documents = 0, duplicates = 0, distinct = 0;
  uint64_t spilled_bytes = 0, runs = 0;
  uint64_t table_bytes = 0;  // the table's memory at its largest
  uint64_t index_matched = 0;  // documents found in the index (counted in duplicates too)
};

class ExactDedup {
 public:
  explicit ExactDedup(const ExactOptions& o);
  ~ExactDedup();
  ExactDedup(const ExactDedup&) = delete;
  ExactDedup& operator=(const ExactDedup&) = delete;

  // Adds the next docs.n documents (numbered on from the documents added before), hashed on the pool.
  // valid: nullptr, or one byte per document; a document with valid[i] == 0 (a bad line) is its own
  // representative and matches nothing. rep_out (nullable, docs.n entries): each document's representative
  // (the number of the first document with its hash; its own number when it is the first), or kPending once
  // the table has spilled (resolved by Finish).
  Status Add(const Docs& docs, const uint8_t* valid, const std::atomic<bool>* stop, uint32_t* rep_out);
  // Adds documents already hashed (a caller that hashed them itself, e.g. another engine's read).
  Status AddHashes(const Hash128* h, size_t n, const uint8_t* valid, uint32_t* rep_out);
  // After the last Add: rep[d] for every document d added.
  Status Finish(std::vector<uint32_t>* rep, const std::atomic<bool>* stop);

  const ExactStats& stats() const { return stats_; }
  bool spilled() const { return spill_ != nullptr; }
  static constexpr uint32_t kPending = 0xfffffffeu;
  static constexpr uint32_t kIndexMatch = 0xffffffffu;   // the representative of a document found in the index
  static constexpr uint64_t kMaxDocuments = 0xfffffffdu;  // document numbers are 32-bit

  // Against an index of earlier runs (set before the first Add; it must outlive this object): a document
  // whose hash it holds gets kIndexMatch, is counted a duplicate and is not added to the table.
  void SetIndex(const ExactIndex* index) { index_ = index; }
  // Keep what SaveIndex needs (the hashes of the documents kept), also when spilled. Before the first Add.
  void KeepForIndex() { keep_for_index_ = true; }
  // (document, index entry) of every document found in the index, in document order.
  const std::vector<std::pair<uint32_t, uint64_t>>& index_matches() const { return matches_; }
  // After Finish: writes the index of the kept documents (w.prior's and this run's) to `path`.
  Status SaveIndex(const std::string& path, const IndexWrite& w);

 private:
  struct Table;
  struct Spill;
  Status StartSpill();
  Status Insert(const Hash128& h, uint32_t doc, uint32_t* rep);

  ExactOptions o_;
  const ExactIndex* index_ = nullptr;
  bool keep_for_index_ = false;
  std::vector<std::pair<uint32_t, uint64_t>> matches_;
  std::unique_ptr<Table> table_;
  std::unique_ptr<Spill> spill_;
  // spilled, with KeepForIndex: the first document of each group, in hash order (in memory up to the budget;
  // its file is in spill_'s folder, so it is destroyed first)
  std::unique_ptr<io::RecordStore<NewEntry>> kept_;
  std::vector<uint32_t> rep_;  // every document's representative, kPending for those sent to the spill
  std::vector<Hash128> scratch_;
  std::vector<std::unique_ptr<Shingler>> shinglers_;  // HashDocuments' per-slot scratch
  ExactStats stats_;
};

}  // namespace exact
}  // namespace neardup
