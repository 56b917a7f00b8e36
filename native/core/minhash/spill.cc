#include "minhash/spill.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <queue>

#include "io/os.h"
#include "parallel/pool.h"

namespace neardup {
namespace lsh {

TempFile::~TempFile() {
  if (f_) std::fclose(f_);
  if (!path_.empty()) io::os::RemoveFile(path_);
}

Status TempFile::Create(const std::string& dir, const char* tag) {
  return io::os::CreateTempStream(dir, std::string("neardup-") + tag + "-", &path_, &f_);
}

Status TempFile::Append(const void* data, size_t n) {
  if (n && std::fwrite(data, 1, n, f_) != n)
    return Status(Code::kIo, "cannot write the temporary file '" + path_ + "': " + std::strerror(errno));
  size_ += n;
  return Status::Ok();
}

Status TempFile::Finish() {
  if (!f_) return Status::Ok();
  const bool ok = std::fflush(f_) == 0;
  const int err = errno;
  std::fclose(f_);
  f_ = nullptr;
  if (!ok) return Status(Code::kIo, "cannot write '" + path_ + "': " + std::strerror(err));
  return Status::Ok();
}

BandRuns::BandRuns(uint32_t bands, uint64_t memory_bytes, std::string tmp_dir)
    : bands_(bands), budget_entries_(memory_bytes ? std::max<uint64_t>(memory_bytes / sizeof(KeyDoc), bands) : 0),
      tmp_(std::move(tmp_dir)), mem_(bands) {}

Status BandRuns::Add(const uint64_t* keys, size_t n, uint64_t first_doc, const uint8_t* valid, size_t slots,
                     const std::atomic<bool>* stop) {
  for (size_t i = 0; i < n; i++) {
    if (valid && !valid[i]) continue;
    for (uint32_t j = 0; j < bands_; j++) mem_[j].push_back(KeyDoc{keys[i * bands_ + j], first_doc + i});
    mem_entries_ += bands_;
    if (budget_entries_ && mem_entries_ >= budget_entries_) {
      Status s = Spill(slots, stop);
      if (!s.ok()) return s;
    }
  }
  return Status::Ok();
}

Status BandRuns::Spill(size_t slots, const std::atomic<bool>* stop) {
  parallel::ParallelFor(bands_, 1, slots, [&](size_t b, size_t e, size_t) {
    for (size_t j = b; j < e; j++) std::sort(mem_[j].begin(), mem_[j].end());
  }, stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  Run run;
  run.file = std::make_unique<TempFile>();
  Status s = run.file->Create(tmp_, "lsh-run");
  if (!s.ok()) return s;
  uint64_t at = 0;
  for (uint32_t j = 0; j < bands_; j++) {
    run.band_offset.push_back(at);
    s = run.file->Append(mem_[j].data(), mem_[j].size() * sizeof(KeyDoc));
    if (!s.ok()) return s;
    at += mem_[j].size();
    spilled_ += mem_[j].size() * sizeof(KeyDoc);
    std::vector<KeyDoc>().swap(mem_[j]);
  }
  run.band_offset.push_back(at);
  s = run.file->Finish();
  if (!s.ok()) return s;
  runs_.push_back(std::move(run));
  mem_entries_ = 0;
  if (runs_.size() >= 2 * fan_in_) return MergeSmallest(fan_in_, stop);
  return Status::Ok();
}

Status BandRuns::Seal(size_t slots, const std::atomic<bool>* stop) {
  if (sealed_) return Status::Ok();
  sealed_ = true;
  parallel::ParallelFor(bands_, 1, slots, [&](size_t b, size_t e, size_t) {
    for (size_t j = b; j < e; j++) std::sort(mem_[j].begin(), mem_[j].end());
  }, stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  while (runs_.size() > fan_in_) {
    Status s = MergeSmallest(std::min(fan_in_, runs_.size() - fan_in_ + 1), stop);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

void BandRuns::Clear() {
  cleared_runs_ += runs_.size();
  runs_.clear();
  for (auto& m : mem_) std::vector<KeyDoc>().swap(m);
  mem_entries_ = 0;
}

namespace {

// Buffered sequential reader over one band section of a run file.
class SectionReader {
 public:
  Status Open(const std::string& path, uint64_t begin, uint64_t end, size_t buffer_entries) {
    Status s = io::os::OpenStreamRead(path, &f_);
    if (!s.ok()) return s;
    if (!io::os::SeekStream(f_, begin * sizeof(KeyDoc)))
      return Status(Code::kIo, "cannot seek in '" + path + "'");
    left_ = end - begin;
    buf_.resize(std::max<size_t>(buffer_entries, 1));
    path_ = path;
    return Refill();
  }
  ~SectionReader() {
    if (f_) std::fclose(f_);
  }
  bool done() const { return pos_ >= len_; }
  const KeyDoc& head() const { return buf_[pos_]; }
  Status Next() {
    if (++pos_ >= len_) return Refill();
    return Status::Ok();
  }

 private:
  Status Refill() {
    pos_ = 0;
    len_ = static_cast<size_t>(std::min<uint64_t>(left_, buf_.size()));
    if (len_ == 0) return Status::Ok();
    if (std::fread(buf_.data(), sizeof(KeyDoc), len_, f_) != len_)
      return Status(Code::kIo, "short read from the temporary file '" + path_ + "'");
    left_ -= len_;
    return Status::Ok();
  }
  std::FILE* f_ = nullptr;
  std::string path_;
  std::vector<KeyDoc> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t left_ = 0;
};

// Per-reader buffer of a merge of `readers` runs: a quarter of the budget shared, at least 64 KiB each.
size_t ReaderBuffer(uint64_t budget_entries, size_t readers) {
  return std::max<size_t>(4096, static_cast<size_t>((budget_entries / 4) / (readers + 1)));
}

}  // namespace

Status BandRuns::MergeSmallest(size_t count, const std::atomic<bool>* stop) {
  if (count < 2 || runs_.size() < 2) return Status::Ok();
  count = std::min(count, runs_.size());
  // The smallest runs first (Huffman-like: big runs are re-read as few times as possible).
  std::vector<size_t> order(runs_.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return runs_[a].band_offset.back() < runs_[b].band_offset.back();
  });
  order.resize(count);
  std::sort(order.begin(), order.end());
  Run out;
  out.file = std::make_unique<TempFile>();
  Status s = out.file->Create(tmp_, "lsh-run");
  if (!s.ok()) return s;
  const size_t per = ReaderBuffer(budget_entries_, count);
  std::vector<KeyDoc> wbuf;
  wbuf.reserve(per);
  uint64_t at = 0;
  for (uint32_t j = 0; j < bands_; j++) {
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
    out.band_offset.push_back(at);
    std::vector<std::unique_ptr<SectionReader>> readers;
    for (size_t i : order) {
      auto rd = std::make_unique<SectionReader>();
      s = rd->Open(runs_[i].file->path(), runs_[i].band_offset[j], runs_[i].band_offset[j + 1], per);
      if (!s.ok()) return s;
      readers.push_back(std::move(rd));
    }
    using Item = std::pair<KeyDoc, size_t>;
    auto cmp = [](const Item& a, const Item& b) { return b.first < a.first; };
    std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
    for (size_t i = 0; i < readers.size(); i++)
      if (!readers[i]->done()) heap.push({readers[i]->head(), i});
    while (!heap.empty()) {
      const Item it = heap.top();
      heap.pop();
      wbuf.push_back(it.first);
      if (wbuf.size() == per) {
        s = out.file->Append(wbuf.data(), wbuf.size() * sizeof(KeyDoc));
        if (!s.ok()) return s;
        at += wbuf.size();
        wbuf.clear();
      }
      SectionReader& rd = *readers[it.second];
      s = rd.Next();
      if (!s.ok()) return s;
      if (!rd.done()) heap.push({rd.head(), it.second});
    }
    s = out.file->Append(wbuf.data(), wbuf.size() * sizeof(KeyDoc));
    if (!s.ok()) return s;
    at += wbuf.size();
    wbuf.clear();
  }
  out.band_offset.push_back(at);
  s = out.file->Finish();
  if (!s.ok()) return s;
  // Drop the merged runs (their files are removed), keep the others in order, then the new one.
  std::vector<Run> keep;
  keep.reserve(runs_.size() - count + 1);
  size_t k = 0;
  for (size_t i = 0; i < runs_.size(); i++) {
    if (k < order.size() && order[k] == i) {
      k++;
      continue;
    }
    keep.push_back(std::move(runs_[i]));
  }
  keep.push_back(std::move(out));
  runs_ = std::move(keep);
  merges_++;
  return Status::Ok();
}

Status BandRuns::ForEachBucket(uint32_t band, size_t slots,
                               const std::function<void(const uint64_t*, size_t)>& fn) {
  Status s = Seal(slots, nullptr);
  if (!s.ok()) return s;
  std::vector<uint64_t> docs;
  auto emit = [&](uint64_t) {
    if (docs.size() >= 2) fn(docs.data(), docs.size());
    docs.clear();
  };
  const std::vector<KeyDoc>& mem = mem_[band];
  if (runs_.empty()) {
    for (size_t i = 0; i < mem.size(); i++) {
      if (i > 0 && mem[i].key != mem[i - 1].key) emit(0);
      docs.push_back(mem[i].doc);
    }
    emit(0);
    return Status::Ok();
  }
  // k-way merge: the runs plus the sorted in-memory tail.
  std::vector<std::unique_ptr<SectionReader>> readers;
  const size_t per = ReaderBuffer(budget_entries_, runs_.size());
  for (const Run& r : runs_) {
    auto rd = std::make_unique<SectionReader>();
    s = rd->Open(r.file->path(), r.band_offset[band], r.band_offset[band + 1], per);
    if (!s.ok()) return s;
    readers.push_back(std::move(rd));
  }
  size_t mem_pos = 0;
  using Item = std::pair<KeyDoc, size_t>;  // (entry, source); source == readers.size() is memory
  auto cmp = [](const Item& a, const Item& b) { return b.first < a.first; };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
  for (size_t i = 0; i < readers.size(); i++)
    if (!readers[i]->done()) heap.push({readers[i]->head(), i});
  if (mem_pos < mem.size()) heap.push({mem[mem_pos], readers.size()});
  bool have_prev = false;
  uint64_t prev = 0;
  while (!heap.empty()) {
    const Item it = heap.top();
    heap.pop();
    if (have_prev && it.first.key != prev) emit(0);
    prev = it.first.key;
    have_prev = true;
    docs.push_back(it.first.doc);
    if (it.second == readers.size()) {
      if (++mem_pos < mem.size()) heap.push({mem[mem_pos], it.second});
    } else {
      SectionReader& rd = *readers[it.second];
      s = rd.Next();
      if (!s.ok()) return s;
      if (!rd.done()) heap.push({rd.head(), it.second});
    }
  }
  emit(0);
  return Status::Ok();
}

}  // namespace lsh
}  // namespace neardup
