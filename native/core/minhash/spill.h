// (band key, doc) entries per band, kept in memory or spilled to sorted run files when they outgrow a
// memory budget, then read back per band in (key, doc) order (one k-way merge over the runs). The order is
// the same whether or not anything was spilled, so results built on it are identical in both modes.
// Merges have a bounded fan-in: when 2 x fan_in runs pile up (a tiny budget spills often), the fan_in
// smallest are merged into one run, and before reading, runs are merged down to at most fan_in; a run file
// is open only while it is written or merged, so the number of open files stays bounded.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/os.h"
#include "util/status.h"

namespace neardup {
namespace lsh {

struct KeyDoc {
  uint64_t key;
  uint64_t doc;
  bool operator<(const KeyDoc& o) const { return key != o.key ? key < o.key : doc < o.doc; }
};

// A temporary file in a folder, removed when destroyed.
class TempFile {
 public:
  TempFile() = default;
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  Status Create(const std::string& dir, const char* tag);
  Status Append(const void* data, size_t n);
  Status Finish();  // flushes and closes; the file can then be read by path
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

 private:
  std::FILE* f_ = nullptr;
  std::string path_;
  uint64_t size_ = 0;
};

class BandRuns {
 public:
  // memory_bytes = 0: never spill.
  BandRuns(uint32_t bands, uint64_t memory_bytes, std::string tmp_dir);
  // keys[i*bands + j] for docs first_doc + i; docs with valid[i] == 0 are left out.
  Status Add(const uint64_t* keys, size_t n, uint64_t first_doc, const uint8_t* valid, size_t slots,
             const std::atomic<bool>* stop);
  // Calls fn(docs, m) for every group of m >= 2 docs (ascending) sharing a key in band j; bands in order.
  Status ForEachBucket(uint32_t band, size_t slots, const std::function<void(const uint64_t*, size_t)>& fn);
  // Sorts what is still in memory (once, before the first ForEachBucket), on the pool.
  Status Seal(size_t slots, const std::atomic<bool>* stop);
  // Frees the entries and removes the run files once the buckets have been read; runs() and spilled_bytes()
  // keep their values.
  void Clear();
  size_t runs() const { return runs_.size() + cleared_runs_; }
  uint64_t spilled_bytes() const { return spilled_; }
  size_t merges() const { return merges_; }
  static constexpr size_t kDefaultFanIn = 64;
  void set_fan_in(size_t f) { fan_in_ = f < 2 ? 2 : f; }  // tests
  void set_tmp_dir(std::string dir) { tmp_ = std::move(dir); }  // before the first Add

 private:
  Status Spill(size_t slots, const std::atomic<bool>* stop);
  Status MergeSmallest(size_t count, const std::atomic<bool>* stop);
  struct Run {
    std::unique_ptr<TempFile> file;
    std::vector<uint64_t> band_offset;  // entry offset of each band's section; size bands + 1
  };
  uint32_t bands_;
  uint64_t budget_entries_;
  std::string tmp_;
  std::vector<std::vector<KeyDoc>> mem_;
  uint64_t mem_entries_ = 0;
  std::vector<Run> runs_;
  uint64_t spilled_ = 0;
  size_t fan_in_ = kDefaultFanIn;
  size_t merges_ = 0;
  size_t cleared_runs_ = 0;
  bool sealed_ = false;
};

// Candidate pairs (a << 32 | b) gathered in a buffer of at most `buffer` values: when it is full it is sorted
// and made distinct, and when that leaves it more than half full it is written to a sorted run file in the
// spill folder. Then Next() gives every distinct pair once, ascending, in chunks (a k-way merge of the runs and
// the buffer; with nothing spilled, the buffer itself in one chunk). Runs are merged down to kFanIn before
// reading (each run open only while it is read), so the files open and the read buffers stay bounded:
// kFanIn x kReadValues x 8 bytes.
class PairRuns {
 public:
  PairRuns() = default;
  ~PairRuns();
  PairRuns(const PairRuns&) = delete;
  PairRuns& operator=(const PairRuns&) = delete;
  // buffer: pairs held at once (at least 2); spill = false: never spilled (the buffer grows, compacted as it
  // doubles). dir: where runs go (called before the first spill, created on demand by `dir_fn`).
  void Reset(uint64_t buffer, bool spill, std::function<Status(std::string*)> dir_fn);
  Status Add(uint64_t pair) {
    buf_.push_back(pair);
    return buf_.size() >= limit_ ? Flush() : Status::Ok();
  }
  // After the last Add: sorts what is in memory; with runs, spills it too and merges the runs down to kFanIn.
  Status Seal(const std::atomic<bool>* stop);
  bool spilled() const { return runs_written_ > 0; }
  // Sealed, nothing spilled: the distinct pairs, sorted (they may be moved out).
  std::vector<uint64_t>& memory() { return buf_; }
  // Sealed, spilled: up to max distinct pairs, ascending, into *out (cleared first); empty at the end.
  Status Next(size_t max, std::vector<uint64_t>* out);
  uint64_t runs() const { return runs_written_; }
  uint64_t spilled_bytes() const { return spilled_bytes_; }
  void Clear();  // frees the buffer and removes the run files
  static constexpr size_t kFanIn = 32;
  static constexpr size_t kReadValues = 8192;

 private:
  struct Reader {
    std::unique_ptr<TempFile> file;
    uint64_t count = 0, next = 0;  // values in the run, values read
    io::os::Fd fd = io::os::kNoFd;
    std::vector<uint64_t> buf;
    size_t pos = 0;
  };
  Status Flush();
  Status WriteRun(const std::vector<uint64_t>& v);
  Status MergeFirst(size_t count, const std::atomic<bool>* stop);  // the first `count` runs into one, at the end
  Status Open(Reader* r);
  Status Refill(Reader* r);
  // The heap over readers [0, n): smallest value first; Pop gives the next distinct value.
  Status StartHeap(std::vector<Reader>* rs, size_t n);
  Status Pop(std::vector<Reader>* rs, uint64_t* v, bool* done);
  std::vector<uint64_t> buf_;
  uint64_t buffer_ = 0, limit_ = UINT64_MAX;
  bool spill_ = false;
  std::function<Status(std::string*)> dir_fn_;
  std::vector<Reader> runs_;
  uint64_t runs_written_ = 0, spilled_bytes_ = 0;
  bool have_last_ = false, reading_ = false;
  uint64_t last_ = 0;
  std::vector<std::pair<uint64_t, size_t>> heap_;  // (value, reader), a min-heap
};

}  // namespace lsh
}  // namespace neardup
