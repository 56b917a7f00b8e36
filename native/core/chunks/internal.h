// Pieces shared by the chunk-index sources (not a public interface).
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "chunks/index.h"
#include "postings/store.h"

namespace neardup {
namespace chunks {

// The postings of all parts for Key-bit keys: each part's segments, newest last.
template <typename Key>
class PostingsT : public Postings {
 public:
  struct Seg {
    uint32_t gen = 0;
    std::unique_ptr<postings::BasicSegment<Key>> seg;
    const uint64_t* accept = nullptr;  // bit per id: live and not killed for this gen (accept_)
  };
  Status Open(const std::string& dir, const Manifest& m, const std::vector<uint32_t>* kill,
              const std::vector<uint8_t>* live, bool verify);
  Status Lookup(uint64_t key, std::vector<uint32_t>* out) const override;
  size_t num_segments() const override { return count_; }
  const std::vector<Seg>& part(uint32_t p) const { return parts_[p]; }
  const std::vector<uint32_t>& kill() const { return *kill_; }

 private:
  uint32_t bits_ = 32, parts_n_ = 1;
  const std::vector<uint32_t>* kill_ = nullptr;
  const std::vector<uint8_t>* live_ = nullptr;
  std::vector<std::vector<Seg>> parts_;
  // By segment generation: the ids whose postings count there, a bit each (1M documents: 128 KB, which
  // the caches hold, where the kill and live arrays they come from take 5 MB).
  std::map<uint32_t, std::vector<uint64_t>> accept_;
  size_t count_ = 0;
};

// NEARDUP_CHUNKS_TIMING=1: each step of a run prints its wall and process CPU seconds on stderr (bench/).
class StepTimer {
 public:
  StepTimer() : on_(std::getenv("NEARDUP_CHUNKS_TIMING") != nullptr) { Reset(); }
  void Step(const char* what) {
    if (!on_) return;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count();
    const double cpu = double(std::clock() - cpu_) / CLOCKS_PER_SEC;
    std::fprintf(stderr, "chunks: %-28s %8.2f s wall %8.2f s cpu\n", what, wall, cpu);
    Reset();
  }

 private:
  void Reset() {
    wall_ = std::chrono::steady_clock::now();
    cpu_ = std::clock();
  }
  bool on_;
  std::chrono::steady_clock::time_point wall_;
  std::clock_t cpu_;
};

// The first error of a parallel loop.
class FirstError {
 public:
  void Set(const Status& s) {
    std::lock_guard<std::mutex> g(mu_);
    if (s_.ok()) s_ = s;
  }
  bool ok() {
    std::lock_guard<std::mutex> g(mu_);
    return s_.ok();
  }
  Status get() {
    std::lock_guard<std::mutex> g(mu_);
    return s_;
  }

 private:
  std::mutex mu_;
  Status s_;
};

RankKey KeyOf(const Directory& d, const TopEntry& t);
// a before b in one document's list (the others' values from d).
bool EntryBefore(const Directory& d, const TopEntry& a, const TopEntry& b);
// The top list from a counter (candidates built from its touched ids).
// Only the candidates that can make the list are collected: a histogram of the shared counts gives the lowest
// count that can. Returns whether every document passing the floors was kept (the list is complete).
bool TopOfCounter(const IndexParams& p, const Directory& d, uint32_t owner_chunks, const Counter& c,
                  std::vector<TopEntry>* out);
// Filters candidates by the floors and keeps the first keep() in rank order; returns whether all were kept.
bool SelectTop(const IndexParams& p, const Directory& d, uint32_t owner_chunks, std::vector<TopEntry>* cand);

// Encodes chunk ids as record items (4 or 8 bytes each, little-endian).
void EncodeChunks(const std::vector<uint64_t>& chunks, uint32_t item_bytes, std::vector<uint8_t>* out);
void EncodeTop(const std::vector<TopEntry>& top, std::vector<uint8_t>* out);

// Merges segments of one part into `path`, dropping dead postings (*posts: postings written).
Status MergeSegments(const State& st, uint32_t part, const std::vector<uint32_t>& files, const std::string& path,
                     const RunOptions& o, uint64_t* posts);

// Writes a top list to a record file and points the document's entry at it (none for an empty list).
Status SetTop(DocEntry* e, uint32_t id, const std::vector<TopEntry>& v, bool complete, RecordWriter* w, uint32_t file,
              std::vector<uint8_t>* buf);

// Writes a directory and a manifest (as `which`), then opens the state they describe.
Status WriteRun(const std::string& dir, const std::string& which, Manifest* m, std::unique_ptr<Directory> d,
                std::shared_ptr<State>* out);

}  // namespace chunks
}  // namespace neardup
