// An external sort of fixed-size records (passages, exact dedup): records are
// collected in memory up to a byte budget, sorted and written as runs into a spill folder beyond it, then
// read back in order by a k-way merge (merging groups of kFanIn runs first when more pile up). With no spill
// the records are sorted in memory; the order read back is the same either way (the comparison must be a
// total order on the records that differ). T must be trivially copyable.
#pragma once
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <queue>
#include <string>
#include <type_traits>
#include <vector>

#include "io/file.h"
#include "io/os.h"
#include "util/status.h"

namespace neardup {
namespace io {

// A file in a spill folder, written once then read sequentially; removed when destroyed.
class SpillFile {
 public:
  SpillFile() = default;
  ~SpillFile() {
    if (f_) std::fclose(f_);
    if (!path_.empty()) io::os::RemoveFile(path_);
  }
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  Status Create(const std::string& dir, const char* tag) {
    return io::os::CreateTempStream(dir, std::string("neardup-") + tag + "-", &path_, &f_);
  }
  Status Write(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_) != n) return Err("cannot write");
    size_ += n;
    return Status::Ok();
  }
  Status Flush() { return std::fflush(f_) == 0 ? Status::Ok() : Err("cannot write"); }
  // Ends the writing and opens the file for reading from its start (again).
  Status Rewind() {
    if (std::fflush(f_) != 0) return Err("cannot write");
    if (std::fseek(f_, 0, SEEK_SET) != 0) return Err("cannot read");
    return Status::Ok();
  }
  // Reads up to n bytes; *got is what was read (0 at the end).
  Status Read(void* p, size_t n, size_t* got) {
    *got = std::fread(p, 1, n, f_);
    if (*got < n && std::ferror(f_)) return Err("cannot read");
    return Status::Ok();
  }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  Status Err(const char* what) const {
    return Status(Code::kIo, std::string(what) + " the temporary file '" + path_ + "': " + std::strerror(errno));
  }
  std::FILE* f_ = nullptr;
  std::string path_;
  uint64_t size_ = 0;
};

// Records appended in order and then read in place: kept in memory up to `memory_records` (0: no cap),
// written to a file in the spill folder beyond (then memory-mapped by Seal). The memory grows to the cap,
// not past it.
template <typename T>
class RecordStore {
  static_assert(std::is_trivially_copyable<T>::value, "records are written as bytes");

 public:
  RecordStore(uint64_t memory_records, std::string dir, const char* tag) : cap_(memory_records), dir_(std::move(dir)), tag_(tag) {}
  Status Put(const T* p, size_t k) {
    n_ += k;
    if (file_) return file_->Write(p, k * sizeof(T));
    if (cap_ && mem_.size() + k > mem_.capacity())
      mem_.reserve(std::max<uint64_t>(mem_.size() + k, std::min<uint64_t>(cap_, 2 * mem_.capacity() + 1024)));
    mem_.insert(mem_.end(), p, p + k);
    if (!cap_ || mem_.size() < cap_) return Status::Ok();
    file_ = std::make_unique<SpillFile>();
    Status s = file_->Create(dir_, tag_);
    if (s.ok()) s = file_->Write(mem_.data(), mem_.size() * sizeof(T));
    std::vector<T>().swap(mem_);
    return s;
  }
  // After the last Put: data() then holds the records.
  Status Seal() {
    if (!file_) return Status::Ok();
    Status s = file_->Flush();
    if (s.ok()) s = map_.Open(file_->path());
    if (!s.ok()) return s;
    if (map_.size() != n_ * sizeof(T)) return Status(Code::kIo, "the temporary file '" + file_->path() + "' was cut short");
    return Status::Ok();
  }
  const T* data() const { return file_ ? reinterpret_cast<const T*>(map_.data()) : mem_.data(); }
  uint64_t size() const { return n_; }
  uint64_t file_bytes() const { return file_ ? file_->size() : 0; }
  uint64_t held_bytes() const { return mem_.capacity() * sizeof(T); }

 private:
  uint64_t cap_, n_ = 0;
  std::string dir_;
  const char* tag_;
  std::vector<T> mem_;
  std::unique_ptr<SpillFile> file_;
  io::MappedFile map_;
};

template <typename T, typename Less>
class SpillSorter {
  static_assert(std::is_trivially_copyable<T>::value, "records are written as bytes");

 public:
  static constexpr size_t kFanIn = 64;
  // memory_bytes = 0: never spill. dir: an existing folder for the run files.
  SpillSorter(uint64_t memory_bytes, std::string dir, const char* tag, Less less = Less())
      : budget_(memory_bytes ? std::max<uint64_t>(memory_bytes / sizeof(T), 1024) : 0), dir_(std::move(dir)), tag_(tag),
        less_(less) {}
  SpillSorter(const SpillSorter&) = delete;  // the merge heap points back to its sorter
  SpillSorter& operator=(const SpillSorter&) = delete;

  Status Add(const T& x) {
    if (budget_ && mem_.size() == mem_.capacity())  // grows to the budget, not past it
      mem_.reserve(std::min<uint64_t>(budget_, std::max<uint64_t>(1024, 2 * mem_.capacity())));
    mem_.push_back(x);
    added_++;
    if (budget_ && mem_.size() >= budget_) return Spill();
    return Status::Ok();
  }
  // After the last Add: the records can then be read with Next.
  Status Seal(const std::atomic<bool>* stop) {
    if (runs_.empty()) {
      std::sort(mem_.begin(), mem_.end(), less_);
      return Status::Ok();
    }
    if (!mem_.empty()) {
      Status s = Spill();
      if (!s.ok()) return s;
    }
    std::vector<T>().swap(mem_);
    while (runs_.size() > kFanIn) {  // merge the oldest kFanIn runs into one
      if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
      std::vector<std::unique_ptr<SpillFile>> group;
      for (size_t i = 0; i < kFanIn; i++) group.push_back(std::move(runs_[i]));
      runs_.erase(runs_.begin(), runs_.begin() + kFanIn);
      Status s = StartMerge(std::move(group));
      auto out = std::make_unique<SpillFile>();
      if (s.ok()) s = out->Create(dir_, tag_);
      T x;
      bool more = true;
      while (s.ok()) {
        s = Next(&x, &more);
        if (!s.ok() || !more) break;
        s = out->Write(&x, sizeof(T));
      }
      if (!s.ok()) return s;
      merge_passes_++;
      runs_.push_back(std::move(out));
    }
    return StartMerge(std::move(runs_));
  }
  // The next record in order; *more is false at the end.
  Status Next(T* out, bool* more) {
    if (readers_.empty()) {
      if (pos_ >= mem_.size()) {
        *more = false;
        std::vector<T>().swap(mem_);
        return Status::Ok();
      }
      *out = mem_[pos_++];
      *more = true;
      return Status::Ok();
    }
    if (heap_.empty()) {
      *more = false;
      readers_.clear();
      return Status::Ok();
    }
    const size_t r = heap_.top();
    heap_.pop();
    Reader& rd = readers_[r];
    *out = rd.buf[rd.pos++];
    *more = true;
    if (rd.pos == rd.n) {
      Status s = Fill(&rd);
      if (!s.ok()) return s;
    }
    if (rd.pos < rd.n) heap_.push(r);
    return Status::Ok();
  }
  uint64_t added() const { return added_; }
  uint64_t spilled_bytes() const { return spilled_; }
  size_t runs_written() const { return runs_written_; }
  size_t merge_passes() const { return merge_passes_; }
  // Bytes held in memory now (the records collected, or the merge's read buffers).
  uint64_t held_bytes() const {
    uint64_t b = mem_.capacity() * sizeof(T);
    for (const Reader& r : readers_) b += r.buf.capacity() * sizeof(T);
    return b;
  }

 private:
  struct Reader {
    std::unique_ptr<SpillFile> file;
    std::vector<T> buf;
    size_t pos = 0, n = 0;
  };
  struct HeapLess {  // a min-heap on the readers' current records (ties: the older run first)
    const SpillSorter* s;
    bool operator()(size_t a, size_t b) const {
      const T& x = s->readers_[a].buf[s->readers_[a].pos];
      const T& y = s->readers_[b].buf[s->readers_[b].pos];
      if (s->less_(y, x)) return true;
      if (s->less_(x, y)) return false;
      return a > b;
    }
  };
  Status Spill() {
    std::sort(mem_.begin(), mem_.end(), less_);
    auto f = std::make_unique<SpillFile>();
    Status s = f->Create(dir_, tag_);
    if (s.ok()) s = f->Write(mem_.data(), mem_.size() * sizeof(T));
    if (!s.ok()) return s;
    spilled_ += mem_.size() * sizeof(T);
    runs_written_++;
    mem_.clear();
    runs_.push_back(std::move(f));
    return Status::Ok();
  }
  Status Fill(Reader* r) {
    size_t got = 0;
    Status s = r->file->Read(r->buf.data(), r->buf.size() * sizeof(T), &got);
    if (!s.ok()) return s;
    if (got % sizeof(T) != 0) return Status(Code::kIo, "the temporary file '" + r->file->path() + "' was cut short");
    r->n = got / sizeof(T);
    r->pos = 0;
    return Status::Ok();
  }
  Status StartMerge(std::vector<std::unique_ptr<SpillFile>> files) {
    readers_.clear();
    heap_ = decltype(heap_)(HeapLess{this});
    // Read buffers: the budget shared by the runs, at least 4096 records each.
    const size_t per = std::max<size_t>(4096, budget_ / std::max<size_t>(1, files.size()));
    readers_.resize(files.size());
    for (size_t i = 0; i < files.size(); i++) {
      Reader& r = readers_[i];
      r.file = std::move(files[i]);
      Status s = r.file->Rewind();
      if (!s.ok()) return s;
      r.buf.resize(std::min<uint64_t>(per, r.file->size() / sizeof(T) + 1));
      s = Fill(&r);
      if (!s.ok()) return s;
    }
    for (size_t i = 0; i < readers_.size(); i++)
      if (readers_[i].pos < readers_[i].n) heap_.push(i);
    return Status::Ok();
  }

  uint64_t budget_;  // records held before a spill (0: no cap)
  std::string dir_;
  const char* tag_;
  Less less_;
  std::vector<T> mem_;
  size_t pos_ = 0;
  std::vector<std::unique_ptr<SpillFile>> runs_;
  std::vector<Reader> readers_;
  std::priority_queue<size_t, std::vector<size_t>, HeapLess> heap_{HeapLess{this}};
  uint64_t added_ = 0, spilled_ = 0;
  size_t runs_written_ = 0, merge_passes_ = 0;
};

}  // namespace io
}  // namespace neardup
