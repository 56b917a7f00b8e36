#include "io/file.h"

#include <atomic>
#include <cstring>

#include "io/os.h"

namespace neardup {
namespace io {
namespace {

constexpr size_t kBufSize = 1 << 20;

}  // namespace

MappedFile::~MappedFile() { Close(); }

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_), path_(std::move(o.path_)) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    Close();
    data_ = o.data_;
    size_ = o.size_;
    path_ = std::move(o.path_);
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Status MappedFile::Open(const std::string& path) {
  Close();
  path_ = path;
  os::Fd fd;
  Status s = os::OpenRead(path, &fd);
  if (!s.ok()) return s;
  uint64_t size = 0;
  bool regular = false;
  s = os::FileSize(fd, path, &size, &regular);
  if (!s.ok()) {
    os::CloseQuietly(fd);
    return s;
  }
  if (!regular) {
    os::CloseQuietly(fd);
    return Status(Code::kIo, "not a regular file: '" + path + "'");
  }
  if (static_cast<uint64_t>(static_cast<size_t>(size)) != size) {
    os::CloseQuietly(fd);
    return Status(Code::kIo, "too large to map: '" + path + "'");
  }
  if (size == 0) {
    os::CloseQuietly(fd);
    data_ = nullptr;
    return Status::Ok();
  }
  s = os::MapReadOnly(fd, path, static_cast<size_t>(size), &data_);
  os::CloseQuietly(fd);
  if (!s.ok()) {
    data_ = nullptr;
    return s;
  }
  size_ = static_cast<size_t>(size);
  return Status::Ok();
}

void MappedFile::Close() {
  os::Unmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

AtomicFile::~AtomicFile() { Abort(); }

Status AtomicFile::Open(const std::string& path) {
  Abort();
  static std::atomic<uint64_t> counter{0};
  path_ = path;
  const size_t start = os::BaseNameStart(path);
  tmp_ = path.substr(0, start) + "." + path.substr(start) + ".tmp-" + std::to_string(os::ProcessId()) + "-" +
         std::to_string(counter.fetch_add(1));
  Status s = os::CreateExclusive(tmp_, 0644, &fd_);
  if (!s.ok()) {
    tmp_.clear();
    return s;
  }
  buf_.clear();
  buf_.reserve(kBufSize);
  written_ = 0;
  return Status::Ok();
}

Status AtomicFile::Flush() {
  Status s = os::WriteAll(fd_, tmp_, buf_.data(), buf_.size());
  if (!s.ok()) return s;
  buf_.clear();
  return Status::Ok();
}

Status AtomicFile::Write(const void* data, size_t n) {
  if (fd_ == os::kNoFd) return Status(Code::kInternal, "write to a file that is not open");
  const char* p = static_cast<const char*>(data);
  if (buf_.size() + n > kBufSize) {
    Status s = Flush();
    if (!s.ok()) return s;
  }
  if (n >= kBufSize) {
    buf_.assign(p, n);
    Status s = Flush();
    if (!s.ok()) return s;
  } else {
    buf_.append(p, n);
  }
  written_ += n;
  return Status::Ok();
}

Status AtomicFile::WriteAt(uint64_t offset, const void* data, size_t n) {
  if (fd_ == os::kNoFd) return Status(Code::kInternal, "write to a file that is not open");
  Status s = Flush();
  if (!s.ok()) return s;
  return os::WriteAllAt(fd_, tmp_, offset, data, n);
}

Status AtomicFile::Commit() {
  if (fd_ == os::kNoFd) return Status(Code::kInternal, "commit of a file that is not open");
  Status s = Flush();
  if (!s.ok()) return s;
  s = os::Sync(fd_, tmp_);
  if (!s.ok()) return s;
  s = os::Close(fd_, tmp_);
  fd_ = os::kNoFd;
  if (!s.ok()) return s;
  s = os::Rename(tmp_, path_);
  if (!s.ok()) return s;
  tmp_.clear();
  os::SyncDir(os::DirName(path_));
  return Status::Ok();
}

void AtomicFile::Abort() {
  os::CloseQuietly(fd_);
  fd_ = os::kNoFd;
  if (!tmp_.empty()) os::RemoveFile(tmp_);
  tmp_.clear();
  buf_.clear();
}

Status ReadFile(const std::string& path, std::string* out) {
  os::Fd fd;
  Status s = os::OpenRead(path, &fd);
  if (!s.ok()) return s;
  out->clear();
  char tmp[65536];
  for (;;) {
    size_t k = 0;
    s = os::Read(fd, path, tmp, sizeof tmp, &k);
    if (!s.ok()) {
      os::CloseQuietly(fd);
      return s;
    }
    if (k == 0) break;
    out->append(tmp, k);
  }
  os::CloseQuietly(fd);
  return Status::Ok();
}

}  // namespace io
}  // namespace neardup
