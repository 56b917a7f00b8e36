// Chunk similarity in a growing archive (Kasprzak, Brandejs, Brandejsová; docs/similar.md): for every
// document A, the top K documents B by similarity(A -> B) = |chunks(A) ∩ chunks(B)| / |chunks(A)| over
// distinct chunk ids, with the reverse similarity and the shared count.
//
// An index is a folder (docs/FORMAT.md section 12): a manifest naming a directory (per document: external
// id, chunk count, where its chunk list and top list are), record files holding chunk lists and top lists,
// and the inverted index: posting segments (postings/store.h) per part, a part being one range of the
// chunk-id space. Files are never changed after they are written: a run writes new ones and a new manifest
// (PENDING), which the caller renames to MANIFEST after committing its copy of the results (SQLite), so a
// crash leaves the previous state usable.
//
// Full run (Builder): chunk every document (chunk lists to a record file), build each part's segment from
// them (bucketed, bounded memory), then count shared chunks per range of the chunk-id space: the lists of
// the chunk ids held by two documents or more are loaded (CSR), transposed (document -> its shared chunk
// ids) and every document counts its partners (document at a time, a dense counter per thread). One range
// gives the top lists directly; several (parts, or a memory budget too small for one) write partial pair
// counts per range that are summed per document (PairsReader), as the paper distributes the work.
//
// Incremental run (Updater): added, modified (same external id) and deleted documents; new postings go to
// a new segment per part, the old postings of changed ids are killed by tombstones, deleted ids are reused.
// Changed documents are counted through the index; unchanged partners get the reverse entries; a partner
// whose list lost an entry that cannot be refilled from what is known is recounted. The result equals a
// full run on the same final documents (tested on random edit sequences).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chunks/files.h"
#include "text/docs.h"
#include "util/status.h"

namespace neardup {
namespace chunks {

struct TopEntry {
  uint32_t other = 0;
  uint32_t shared = 0;
  bool operator==(const TopEntry& o) const { return other == o.other && shared == o.shared; }
};

// The live postings of all parts (tombstones applied).
class Postings {
 public:
  virtual ~Postings() = default;
  // Live documents holding `key` into *out (replaced): ascending within each segment, the segments one after
  // another (the counting needs no order; sorting them cost the incremental run seconds at 1M documents).
  virtual Status Lookup(uint64_t key, std::vector<uint32_t>* out) const = 0;
  virtual size_t num_segments() const = 0;
};

// One generation of an index, opened read-only.
class State {
 public:
  // Opens the manifest `which` (MANIFEST or PENDING) of `dir`.
  static Status Open(const std::string& dir, const std::string& which, bool verify, std::shared_ptr<State>* out);
  // Opens a manifest held in memory (a run's result before it is written); `directory` may be given to
  // skip reading it.
  static Status Open(const std::string& dir, const Manifest& m, std::unique_ptr<Directory> directory, bool verify,
                     std::shared_ptr<State>* out);

  const std::string& dir() const { return dir_; }
  const Manifest& manifest() const { return m_; }
  const IndexParams& params() const { return m_.params; }
  const Directory& directory() const { return *d_; }
  // For the run that opened a state from memory, before it is shared: its top-list references change.
  Directory* mutable_directory() { return d_.get(); }
  const Postings& postings() const { return *post_; }
  uint32_t item_bytes() const { return m_.params.chunk.wide() ? 8 : 4; }

  Status Chunks(uint32_t id, std::vector<uint64_t>* out) const;
  // The stored list: the first keep() entries of the ranking (the table shows the first K).
  Status Top(uint32_t id, std::vector<TopEntry>* out) const;
  // Names of every file this state uses (for cleanup of the others).
  std::vector<std::string> Files() const;

 private:
  std::string dir_;
  Manifest m_;
  std::unique_ptr<Directory> d_;
  std::unique_ptr<Postings> post_;
  std::unordered_map<uint32_t, std::unique_ptr<RecordFile>> docs_, tops_;
  std::vector<uint32_t> kill_;   // by id: postings in segments with gen <= kill_[id] are dead
  std::vector<uint8_t> live_;    // by id
};

// Ranking within one document's list: shared descending (= similarity), then reverse similarity
// descending, then external id ascending (bytes). Floors: shared >= min_shared and
// shared / chunks(owner) >= min_similarity.
struct RankKey {
  uint32_t shared;
  uint32_t chunks;  // of the other document
  std::string_view ext;
};
bool RankBefore(const RankKey& a, const RankKey& b);
bool PassesFloors(const IndexParams& p, uint32_t shared, uint32_t owner_chunks);

// Shared-chunk counts of one document against all others (a dense counter; one per thread).
class Counter {
 public:
  explicit Counter(size_t slots) : cnt_(slots, 0), touched_(slots) {}
  // Counts one more shared chunk with `id` (branch-free: the hot loop of every count).
  void Add(uint32_t id) {
    const uint32_t c = cnt_[id]++;
    touched_[n_] = id;
    n_ += c == 0;
  }
  // `w` more shared chunks with every id of [b, e), the counter's state in registers (the hot loop).
  void AddRange(const uint32_t* b, const uint32_t* e, uint32_t w = 1) {
    uint32_t* __restrict cnt = cnt_.data();
    uint32_t* __restrict touched = touched_.data();
    size_t n = n_;
    for (; b != e; b++) {
      const uint32_t id = *b;
      const uint32_t c = cnt[id];
      cnt[id] = c + w;
      touched[n] = id;
      n += c == 0;
    }
    n_ = n;
  }
  void Add(uint32_t id, uint32_t c) {
    if (cnt_[id] == 0) touched_[n_++] = id;
    cnt_[id] += c;
  }
  // Leaves `id` out of the counts until Clear (its own document).
  void Exclude(uint32_t id) { cnt_[id] = 1; excluded_ = id; }
  // Through the postings: every live document sharing a chunk of `chunks`, except `self` (-1: none).
  Status CountLookup(const Postings& p, const std::vector<uint64_t>& chunks, int64_t self);
  size_t size() const { return n_; }
  const uint32_t* touched() const { return touched_.data(); }
  uint32_t count(uint32_t id) const { return cnt_[id]; }
  void Clear() {
    for (size_t i = 0; i < n_; i++) cnt_[touched_[i]] = 0;
    n_ = 0;
    if (excluded_ != UINT32_MAX) cnt_[excluded_] = 0;
    excluded_ = UINT32_MAX;
  }

 private:
  std::vector<uint32_t> cnt_, touched_, list_;
  size_t n_ = 0;
  uint32_t excluded_ = UINT32_MAX;
};

struct RunOptions {
  uint64_t memory = 0;  // bytes for the posting build and the counting (0: no cap)
  std::string tmp;      // spill files ("" = the index folder)
  const std::atomic<bool>* stop = nullptr;
};

// A full run. Create, Add documents in order (ids 0, 1, ...), then Finish (or FinishDocs for a staged run:
// the parts are then built and counted by StagePart, one call per part, anywhere, and merged by
// StageFinish). Finish/StageFinish write PENDING; the caller commits its results and renames it (Commit).
class Builder {
 public:
  // dir must hold no index (no MANIFEST); it is created when missing.
  Status Create(const std::string& dir, const IndexParams& p, const RunOptions& o);
  // Documents: external ids (JSON text) and texts. On a repeated id, *bad = its index in this batch.
  Status Add(const std::vector<std::string_view>& ext, const Docs& texts, size_t* bad);
  Status FinishDocs();
  Status Finish(std::shared_ptr<State>* pending);
  uint32_t documents() const { return uint32_t(dir_.slots()); }

 private:
  std::string path_;
  IndexParams p_;
  RunOptions o_;
  Manifest m_;
  Directory dir_;
  std::unordered_multimap<uint64_t, uint32_t> seen_;  // hash of an external id -> id
  RecordWriter docs_;
  bool finished_docs_ = false;
};

// The staged steps (a full run split over processes or machines).
// parts: the number of parts the caller expects (0: any); refused when the staged build has another.
Status StagePart(const std::string& dir, uint32_t part, uint32_t parts, const std::string& pairs_path,
                 const RunOptions& o);
Status StageFinish(const std::string& dir, const std::vector<std::string>& pairs_paths, const RunOptions& o,
                   std::shared_ptr<State>* pending);

// A change of the table (the first K entries of each list) of an unchanged document: shared 0 removes the
// row (doc, other), anything else sets it.
struct RowChange {
  uint32_t doc, other, shared;
};

struct UpdateSummary {
  uint32_t added = 0, modified = 0, deleted = 0;
  uint32_t affected = 0;    // unchanged documents whose list changed
  uint32_t recounted = 0;   // of those, recounted through the index (a lost entry could not be refilled)
  bool merged = false;      // segments or record files were rewritten (compaction)
  std::vector<uint32_t> removed;   // ids deleted and not reused: their rows go
  std::vector<uint32_t> upserted;  // ids added or modified: their rows are replaced by their new list
  std::vector<RowChange> rows;     // row changes of the other documents, by doc
};

// An incremental run against an open state. Add changes (a null text deletes; the last change of an
// external id wins), then Prepare writes the new files and PENDING.
class Updater {
 public:
  Updater(std::shared_ptr<const State> base, const RunOptions& o) : base_(std::move(base)), o_(o) {}
  // texts.ptr[i] == nullptr: delete. On an unknown id to delete, *bad = its index in this batch.
  Status Add(const std::vector<std::string_view>& ext, const Docs& texts, size_t* bad);
  // compact: rewrite every part as one segment and the record files (else done when they grow).
  // With nothing to change (and no compaction) *pending is left empty.
  Status Prepare(bool compact, UpdateSummary* summary, std::shared_ptr<State>* pending);
  size_t changes() const { return changes_.size(); }

 private:
  struct Change {
    std::string ext;
    bool del = false;
    bool gone = false;  // an addition deleted again in the same run
    std::vector<uint64_t> chunks;
  };
  std::shared_ptr<const State> base_;
  RunOptions o_;
  std::vector<Change> changes_;
  std::unordered_map<std::string, size_t> by_ext_;
};

// Renames PENDING to MANIFEST (after the caller committed its copy of the results) and removes STAGE.
Status CommitPending(const std::string& dir);

// Top lists (the first K entries) of new texts against a state (not added): per text, its chunk count and list.
Status QueryTexts(const State& s, const Docs& texts, const std::atomic<bool>* stop,
                  std::vector<uint32_t>* chunk_counts, std::vector<std::vector<TopEntry>>* lists);

}  // namespace chunks
}  // namespace neardup
