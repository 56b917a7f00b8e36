// Shared passages over a posting index of blots (docs/passages.md): consecutive shared windows merged into
// passages, for extract (passages shared by many documents), query (the indexed documents sharing passages
// with a new one) and pairs (the pairwise summary). Document texts come through a callback (the passage
// index keeps them), and are blotted again to know each window's position and byte range.
//
// Definitions (window i of a document = words i .. i+S-1, its blot and byte range):
//  - extract: a passage is a maximal run of consecutive windows of a document that are all held by the same
//    set of documents (at least `threshold` of them); the same run (same set, same blots) found in several
//    documents is one passage, reported with each document's byte range (its first occurrence there).
//  - pairs and query: a passage of documents A and B is a maximal aligned run: windows i .. i+L-1 of A equal
//    windows j .. j+L-1 of B (same blots), not extendable on either side.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "postings/blot.h"
#include "postings/store.h"
#include "util/status.h"

namespace neardup {
namespace postings {

// The windows of one document: blot (32-bit blots widened) and byte range of each, in order.
struct Windows {
  std::vector<uint64_t> blots;
  std::vector<uint32_t> begin, end;
  size_t size() const { return blots.size(); }
};
void WindowsOf(Blotter* bl, const uint8_t* text, size_t n, Windows* out);

// A posting index of blots, 32-bit (PostingIndex: dupi's width, passage indexes written before 64-bit blots)
// or 64-bit (PostingIndex64), seen with 64-bit keys: what the passage searches read of it. Holds a reference.
class BlotIndex {
 public:
  BlotIndex(const PostingIndex& ix) : ix32_(&ix) {}    // NOLINT: implicit on purpose
  BlotIndex(const PostingIndex64& ix) : ix64_(&ix) {}  // NOLINT
  unsigned key_bits() const { return ix64_ ? 64 : 32; }
  uint32_t next_id() const { return ix64_ ? ix64_->next_id() : ix32_->next_id(); }
  bool IsLive(uint32_t d) const { return ix64_ ? ix64_->IsLive(d) : ix32_->IsLive(d); }
  // The live documents of key (none for a key beyond the index's width).
  Status Lookup(uint64_t key, std::vector<uint32_t>* out) const;
  // fn(key, count) for every live key, ascending (from the key blocks alone when the index is one segment
  // without tombstones).
  Status ForEachCount(const std::atomic<bool>* stop, const std::function<void(uint64_t, uint32_t)>& fn) const;
  // fn(key, list) for every live key with at least `min` documents, ascending (only those lists decoded when
  // the index is one segment without tombstones).
  Status ForEachFrequent(uint64_t min, const std::atomic<bool>* stop,
                         const std::function<Status(uint64_t, const std::vector<uint32_t>&)>& fn) const;

 private:
  const PostingIndex* ix32_ = nullptr;
  const PostingIndex64* ix64_ = nullptr;
};

// The text of a document by internal id (empty for a document without text).
using TextFn = std::function<Status(uint32_t doc, const uint8_t** text, size_t* len)>;

// An aligned run: windows [a, a + len) of one document equal windows [b, b + len) of another.
struct Run {
  uint32_t a, b, len;
  bool operator==(const Run& o) const { return a == o.a && b == o.b && len == o.len; }
};

// Every maximal aligned run between window sequences x and y, ordered by (a, b). A blot that occurs more
// than kMaxRepeat times in y starts runs only at its first kMaxRepeat positions there (runs still extend
// through any window), which bounds the work on documents made of one repeated line.
constexpr size_t kMaxRepeat = 16;
void AlignedRuns(const uint64_t* x, size_t nx, const uint64_t* y, size_t ny, std::vector<Run>* out);
// The same with y's (blot, position) pairs already sorted (`idx`, ny of them).
void AlignedRunsSorted(const uint64_t* x, size_t nx, const uint64_t* y, size_t ny,
                       const std::pair<uint64_t, uint32_t>* idx, std::vector<Run>* out);

// Bytes of the union of the ranges [begin[r.first], end[r.last]] of the runs' windows on one side.
uint64_t CoveredBytes(const std::vector<Run>& runs, bool side_a, const Windows& w);

// ------------------------------------------------------------------------------------------ extract

struct Occurrence {
  uint32_t doc, begin, end;  // byte range in the document
};
struct Passage {
  uint32_t windows = 0;      // consecutive windows
  uint64_t first_blot = 0;   // blot of the first window
  std::vector<Occurrence> docs;  // ascending doc ids
};

// Passages whose windows are each held by at least `threshold` live documents, most documents first
// (then most windows, then first blot, then first document and its first byte). `keys`: every such key
// (ascending). All of them in memory (PassageExtractor bounds the memory).
Status ExtractPassages(const BlotIndex& ix, const std::vector<uint64_t>& keys, const BlotOptions& bo,
                       const TextFn& text, size_t slots, const std::atomic<bool>* stop, std::vector<Passage>* out);

// dupi's cut-off over the counts of the live keys: mean and standard deviation (population) of the counts,
// threshold = max(min_docs, 1, round(mean + sigma * sd)) (the same operations, in the same order, as the
// TypeScript reference: sums in ascending key order).
struct CutOff {
  uint64_t keys = 0, posts = 0;
  double mean = 0, sd = 0;
  uint64_t threshold = 1;
};
Status ExtractCutOff(const BlotIndex& ix, double sigma, uint64_t min_docs, const std::atomic<bool>* stop, CutOff* out);

struct ExtractOptions {
  uint64_t memory = 0;   // cap on the records held (0: none); the passages do not depend on it
  std::string tmp_dir;   // where the spill folder goes when the records outgrow `memory`
  size_t slots = 1;      // blotting threads
};

struct ExtractCounters {
  uint64_t chosen_keys = 0, sets = 0, docs = 0, records = 0, passages = 0, occurrences = 0;
  uint64_t spilled_bytes = 0;  // written to run files (all sorts) and the occurrence file
  size_t partitions = 0;       // passes over the documents (the key -> set table split to fit the cap)
};

// The passages of ExtractPassages in bounded memory, read in order a chunk at a time. Start() works in
// passes, each keeping at most about `memory` bytes of records (plus a document bitmap and one batch of
// blotted documents): (1) the chosen keys' lists are hashed (128 bits) and sorted by hash, so keys with
// equal lists get one set (its smallest key); (2) a key -> set table (split by set into partitions when it
// would take more than half the cap: each partition is one more pass over the documents, a passage having
// one set) drives one pass over the documents holding chosen keys, in id order, which records each
// document's runs (set, windows, blot-sequence hash, first blot, doc, byte range); (3) the records sorted
// by run give the passages: their occurrences go to a store (a file past a quarter of the cap), their
// headers (count, windows, first blot, first doc and byte) to a sort in output order, read by Next().
// Spill files live in one folder under tmp_dir, removed with the extractor.
class PassageExtractor {
 public:
  PassageExtractor();
  ~PassageExtractor();
  // Passages of the live keys with at least `threshold` documents.
  Status Start(const BlotIndex& ix, uint64_t threshold, const BlotOptions& bo, const TextFn& text,
               const ExtractOptions& o, const std::atomic<bool>* stop);
  // Passages of the given keys (ascending).
  Status StartKeys(const BlotIndex& ix, const std::vector<uint64_t>& keys, const BlotOptions& bo,
                   const TextFn& text, const ExtractOptions& o, const std::atomic<bool>* stop);
  // Appends the next passages in order to out, until at least max_occurrences occurrences were appended
  // (at least one passage) or the end; *done when no passage is left.
  Status Next(size_t max_occurrences, std::vector<Passage>* out, bool* done);
  const ExtractCounters& counters() const;
  // The most bytes of records, tables and buffers held at once (not counting the blotting scratch).
  uint64_t peak_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// -------------------------------------------------------------------------------------------- query

// One passage shared with the query: its windows and its byte ranges in the query and in the document.
struct QuerySpan {
  uint32_t windows, q_begin, q_end, d_begin, d_end;
};
struct QueryMatch {
  uint32_t doc = 0;
  std::vector<QuerySpan> spans;  // the aligned runs, ordered by (query window, document window)
  uint32_t windows = 0;          // query windows inside the runs
};

// The windows of indexed documents (and their sorted index for AlignedRunsSorted), kept across the queries
// of one batch: a document nominated by several queries is blotted once. Thread-safe. Keeps at most
// `cap_bytes` of them (28 bytes per window); beyond that documents are blotted each time, not kept.
class WindowsCache {
 public:
  struct Entry {
    Windows w;
    std::vector<std::pair<uint64_t, uint32_t>> idx;
  };
  explicit WindowsCache(size_t cap_bytes) : cap_(cap_bytes) {}
  // Document d's entry (from the cache, or computed with `bl` and kept while under the cap).
  Status Get(uint32_t d, const TextFn& text, Blotter* bl, std::shared_ptr<const Entry>* out);

 private:
  std::mutex mu_;
  std::unordered_map<uint32_t, std::shared_ptr<const Entry>> map_;
  size_t cap_, bytes_ = 0;
};

// The indexed documents sharing at least min_passages aligned runs with the query's windows q, most
// shared windows first (then most passages, then doc id). Documents are nominated by the query's windows
// held by at most max_docs documents; their runs are then computed on all windows.
// cache: shared by the queries of a batch (nullptr: none). bl: a Blotter of `bo` to blot the documents with
// (the caller's, e.g. the one that made q: its buffers are reused, not held twice; nullptr: one of its own).
Status QueryPassages(const BlotIndex& ix, const Windows& q, const BlotOptions& bo, const TextFn& text,
                     uint32_t min_passages, uint32_t max_docs, std::vector<QueryMatch>* out,
                     WindowsCache* cache = nullptr, Blotter* bl = nullptr);

// -------------------------------------------------------------------------------------------- pairs

struct PairSummary {
  uint32_t a = 0, b = 0;  // a < b
  uint32_t passages = 0, windows = 0;
  uint64_t bytes_a = 0, bytes_b = 0;  // covered by the passages
};

struct PairsOptions {
  uint64_t memory = 0;   // cap on the occurrences, tables and records held (0: none); the pairs do not depend on it
  std::string tmp_dir;   // where the spill folder goes when they outgrow `memory`
  size_t slots = 1;      // threads
};

struct PairsCounters {
  uint64_t eligible_keys = 0, occurrences = 0, matches = 0, pairs = 0;
  uint64_t spilled_bytes = 0;  // written to the occurrence files and the output sort's runs
  size_t partitions = 0;       // passes over the documents (the eligible key set split to fit the cap)
  size_t blocks = 0;           // document blocks joined with the documents after them
};

// Every pair of live documents with at least min_passages passages, where a passage is a maximal run of
// consecutive places on one diagonal of windows each held by 2 .. max_docs live documents, taking each
// window's first occurrence in each document. Ordered by passages, then windows (descending), then (a, b).
// In bounded memory (docs/passages.md): (1) the eligible keys (from the key blocks' counts) in a sorted
// table, split by key range into partitions when it would take more than half the cap (one pass over the
// documents each); (2) one pass over the live documents blotting them in parallel, which stores each
// document's first occurrence of each eligible key (key, window, byte range: 24 bytes) in document order
// (in memory up to an eighth of the cap, else in a spill file, then memory-mapped); (3) a blockwise join:
// the documents are cut into consecutive blocks whose occurrences fit half the cap; each block's
// occurrences are sorted by key, and every document b after the block's first is matched against it on
// the pool (its matches with the block's documents a < b sorted by (a, diagonal, window): each pair's
// passages come out of one scan; a document whose matches outgrow its share of the cap is matched
// against halves of the block); (4) the pairs go through an external sort in output order, read by Next().
class PassagePairFinder {
 public:
  PassagePairFinder();
  ~PassagePairFinder();
  Status Start(const BlotIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t min_passages, uint32_t max_docs,
               const PairsOptions& o, const std::atomic<bool>* stop);
  // Appends up to max_pairs next pairs in order to out; *done when none is left.
  Status Next(size_t max_pairs, std::vector<PairSummary>* out, bool* done);
  const PairsCounters& counters() const;
  // The most bytes of tables, occurrences and records held at once (not counting the blotting scratch).
  uint64_t peak_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// All of PassagePairFinder's pairs, in memory.
Status PassagePairs(const BlotIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t min_passages,
                    uint32_t max_docs, size_t slots, const std::atomic<bool>* stop, std::vector<PairSummary>* out);

}  // namespace postings
}  // namespace neardup
