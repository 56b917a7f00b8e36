#include "minhash/spill.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
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

PairRuns::~PairRuns() { Clear(); }

void PairRuns::Reset(uint64_t buffer, bool spill, std::function<Status(std::string*)> dir_fn) {
  Clear();
  buffer_ = std::max<uint64_t>(buffer, 2);
  limit_ = buffer_;
  spill_ = spill;
  dir_fn_ = std::move(dir_fn);
  runs_written_ = spilled_bytes_ = 0;
}

void PairRuns::Clear() {
  for (Reader& r : runs_) io::os::CloseQuietly(r.fd);
  runs_.clear();  // removes the files
  std::vector<uint64_t>().swap(buf_);
  heap_.clear();
  have_last_ = reading_ = false;
}

Status PairRuns::Flush() {
  std::sort(buf_.begin(), buf_.end());
  buf_.erase(std::unique(buf_.begin(), buf_.end()), buf_.end());
  if (!spill_) {
    limit_ = std::max<uint64_t>(limit_, uint64_t(buf_.size()) * 2);  // compacted: grows as it doubles
    return Status::Ok();
  }
  if (buf_.size() <= buffer_ / 2) return Status::Ok();  // many repeats: room again
  Status s = WriteRun(buf_);
  buf_.clear();
  return s;
}

Status PairRuns::WriteRun(const std::vector<uint64_t>& v) {
  std::string dir;
  Status s = dir_fn_(&dir);
  if (!s.ok()) return s;
  Reader r;
  r.file = std::make_unique<TempFile>();
  s = r.file->Create(dir, "pairs");
  if (s.ok()) s = r.file->Append(v.data(), v.size() * sizeof(uint64_t));
  if (s.ok()) s = r.file->Finish();
  if (!s.ok()) return s;
  r.count = v.size();
  spilled_bytes_ += r.count * sizeof(uint64_t);
  runs_written_++;
  runs_.push_back(std::move(r));
  return Status::Ok();
}

Status PairRuns::Open(Reader* r) {
  r->next = 0;
  r->pos = 0;
  r->buf.clear();
  return io::os::OpenRead(r->file->path(), &r->fd);
}

Status PairRuns::Refill(Reader* r) {
  const size_t want = static_cast<size_t>(std::min<uint64_t>(kReadValues, r->count - r->next));
  r->buf.resize(want);
  r->pos = 0;
  uint8_t* q = reinterpret_cast<uint8_t*>(r->buf.data());
  const size_t bytes = want * sizeof(uint64_t);
  for (size_t at = 0; at < bytes;) {
    size_t got = 0;
    Status s = io::os::ReadAt(r->fd, r->file->path(), r->next * sizeof(uint64_t) + at, q + at, bytes - at, &got);
    if (!s.ok()) return s;
    if (got == 0) return Status(Code::kIo, "cannot read the temporary file '" + r->file->path() + "': truncated");
    at += got;
  }
  r->next += want;
  return Status::Ok();
}

Status PairRuns::StartHeap(std::vector<Reader>* rs, size_t n) {
  heap_.clear();
  have_last_ = false;
  for (size_t i = 0; i < n; i++) {
    Reader& r = (*rs)[i];
    Status s = Open(&r);
    if (s.ok() && r.count) s = Refill(&r);
    if (!s.ok()) return s;
    if (r.count) heap_.push_back({r.buf[0], i});
  }
  std::make_heap(heap_.begin(), heap_.end(), std::greater<std::pair<uint64_t, size_t>>());
  return Status::Ok();
}

Status PairRuns::Pop(std::vector<Reader>* rs, uint64_t* v, bool* done) {
  const auto cmp = std::greater<std::pair<uint64_t, size_t>>();
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    const uint64_t value = heap_.back().first;
    Reader& r = (*rs)[heap_.back().second];
    if (++r.pos == r.buf.size() && r.next < r.count) {
      Status s = Refill(&r);
      if (!s.ok()) return s;
    }
    if (r.pos < r.buf.size()) {
      heap_.back().first = r.buf[r.pos];
      std::push_heap(heap_.begin(), heap_.end(), cmp);
    } else {
      heap_.pop_back();
      io::os::CloseQuietly(r.fd);
      r.fd = io::os::kNoFd;
    }
    if (have_last_ && value == last_) continue;  // the same pair from another run
    have_last_ = true;
    last_ = value;
    *v = value;
    *done = false;
    return Status::Ok();
  }
  *done = true;
  return Status::Ok();
}

Status PairRuns::MergeFirst(size_t count, const std::atomic<bool>* stop) {
  Status s = StartHeap(&runs_, count);
  if (!s.ok()) return s;
  std::string dir;
  s = dir_fn_(&dir);
  if (!s.ok()) return s;
  Reader out;
  out.file = std::make_unique<TempFile>();
  s = out.file->Create(dir, "pairs");
  std::vector<uint64_t>& chunk = buf_;  // empty here (spilled): its memory serves as the write buffer
  chunk.clear();
  for (bool done = false; s.ok();) {
    uint64_t v = 0;
    s = Pop(&runs_, &v, &done);
    if (!s.ok() || done) break;
    chunk.push_back(v);
    out.count++;
    if (chunk.size() == kReadValues * 4) {
      s = out.file->Append(chunk.data(), chunk.size() * sizeof(uint64_t));
      chunk.clear();
      if (stop && stop->load()) s = Status(Code::kCancelled, "cancelled");
    }
  }
  if (s.ok()) s = out.file->Append(chunk.data(), chunk.size() * sizeof(uint64_t));
  chunk.clear();
  if (s.ok()) s = out.file->Finish();
  for (size_t i = 0; i < count; i++) io::os::CloseQuietly(runs_[i].fd);
  if (!s.ok()) return s;
  spilled_bytes_ += out.count * sizeof(uint64_t);
  runs_.erase(runs_.begin(), runs_.begin() + count);  // removes their files
  runs_.push_back(std::move(out));
  return Status::Ok();
}

Status PairRuns::Seal(const std::atomic<bool>* stop) {
  std::sort(buf_.begin(), buf_.end());
  buf_.erase(std::unique(buf_.begin(), buf_.end()), buf_.end());
  if (!spilled()) return Status::Ok();  // it all fit: the buffer is the list
  Status s;
  if (!buf_.empty()) s = WriteRun(buf_);
  buf_.clear();
  while (s.ok() && runs_.size() > kFanIn) s = MergeFirst(kFanIn, stop);
  if (s.ok()) s = StartHeap(&runs_, runs_.size());
  reading_ = s.ok();
  return s;
}

Status PairRuns::Next(size_t max, std::vector<uint64_t>* out) {
  out->clear();
  if (!reading_) return Status::Ok();
  while (out->size() < max) {
    uint64_t v = 0;
    bool done = false;
    Status s = Pop(&runs_, &v, &done);
    if (!s.ok()) return s;
    if (done) {
      reading_ = false;
      break;
    }
    out->push_back(v);
  }
  return Status::Ok();
}

}  // namespace lsh
}  // namespace neardup
