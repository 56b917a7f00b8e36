#include "io/file.h"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "io/os.h"
#include "io/temp_names.h"

namespace neardup {
namespace io {
namespace {

constexpr size_t kBufSize = 1 << 20;

// The system's reason in an io/os.h error ("what 'path': reason").
std::string Reason(const Status& s) {
  const size_t at = s.message().rfind("': ");
  return at == std::string::npos ? s.message() : s.message().substr(at + 3);
}

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

namespace {

// Opens a file for reading and gives its size (and whether it is a regular file); closed again on an error.
Status OpenSized(const std::string& path, os::Fd* fd, uint64_t* size, bool* regular) {
  Status s = os::OpenRead(path, fd);
  if (!s.ok()) return s;
  s = os::FileSize(*fd, path, size, regular);
  if (!s.ok()) os::CloseQuietly(*fd);
  return s;
}

}  // namespace

Status MappedFile::Open(const std::string& path) {
  Close();
  path_ = path;
  os::Fd fd;
  uint64_t size = 0;
  bool regular = false;
  Status s = OpenSized(path, &fd, &size, &regular);
  if (!s.ok()) return s;
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
  path_ = path;
  // stat() the path itself first: the kernel follows every link, /proc's "magic" ones (/dev/stdout) too.
  os::PathInfo st;
  Status s = os::StatPath(path, &st);
  if (!s.ok()) return s;
  const bool exists = st.exists;
  if (exists && !st.regular) return Status(Code::kIo, "cannot write '" + path + "': not a regular file");
  s = ResolveWriteTarget(path, &target_);
  if (!s.ok()) return s;
  if (exists) {
    mode_ = st.mode;
    uid_ = st.uid;
    gid_ = st.gid;
  } else {
    mode_ = NewFileMode();
    uid_ = gid_ = -1;
  }
  CleanStaleTemps(DirName(target_));
  for (int attempt = 0; attempt < 8; attempt++) {
    tmp_ = TempNameFor(target_);
    bool taken = false;
    s = os::CreateExclusive(tmp_, 0600, &fd_, &taken);
    if (s.ok() || !taken) break;
  }
  if (!s.ok()) {
    s = Status(Code::kIo, "cannot create a temporary file for '" + path_ + "': " + Reason(s));
    tmp_.clear();  // not ours: never removed
    return s;
  }
  os::LockFile(fd_, tmp_);  // marks it in use for sweepers in any PID namespace (io::IsStale); best effort
  buf_.clear();
  buf_.reserve(kBufSize);
  written_ = 0;
  return Status::Ok();
}

Status AtomicFile::Flush() {
  Status s = os::WriteAll(fd_, path_, buf_.data(), buf_.size());
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
  return os::WriteAllAt(fd_, path_, offset, data, n);
}

Status AtomicFile::Commit() {
  if (fd_ == os::kNoFd) return Status(Code::kInternal, "commit of a file that is not open");
  Status s = Flush();
  if (!s.ok()) return s;
  s = os::SetModeAndOwner(fd_, tmp_, mode_, uid_, gid_);
  if (!s.ok()) return s;
  s = os::Sync(fd_, path_);
  if (!s.ok()) return s;
  s = os::Close(fd_, path_);
  fd_ = os::kNoFd;
  if (!s.ok()) return s;
  s = os::Rename(tmp_, target_);
  if (!s.ok()) return s;
  tmp_.clear();
  os::SyncDir(DirName(target_));
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

Status ReadFilesInto(const std::vector<std::string>& paths, uint8_t* dst, size_t cap,
                     const std::atomic<bool>* stop, FilesRead* out) {
  out->files = 0;
  out->ends.clear();
  out->need = 0;
  uint64_t used = 0;
  for (size_t i = 0; i < paths.size(); i++) {
    if (stop && stop->load(std::memory_order_relaxed)) break;
    const std::string& path = paths[i];
    os::Fd fd;
    uint64_t size = 0;
    bool regular = false;
    Status s = OpenSized(path, &fd, &size, &regular);
    if (!s.ok()) return s;
    if (size > cap - used) {
      os::CloseQuietly(fd);
      if (out->files == 0) out->need = size;
      return Status::Ok();
    }
    uint64_t got = 0;
    while (s.ok() && got < size) {
      size_t k = 0;
      s = os::Read(fd, path, dst + used + got, static_cast<size_t>(size - got), &k);
      if (k == 0) break;
      got += k;
    }
    os::CloseQuietly(fd);
    if (!s.ok()) return s;
    used += got;
    out->ends.push_back(used);
    out->files++;
  }
  return Status::Ok();
}

Status AppendFile(os::Fd dst, const std::string& dst_path, const std::string& src, const std::atomic<bool>* stop,
                  uint64_t* copied) {
  *copied = 0;
  os::Fd fd;
  uint64_t size = 0;
  bool regular = false;
  Status s = OpenSized(src, &fd, &size, &regular);
  if (!s.ok()) return s;
  uint64_t done = 0;
#if defined(__linux__) && defined(SYS_copy_file_range)
  // the kernel's copy (the system call itself: glibc's wrapper is newer than the oldest glibc supported), in
  // chunks (stop is checked between them); refused (another file system on an old kernel, a special file):
  // the buffered loop below from where it stopped
  constexpr uint64_t kChunk = uint64_t(1) << 30;
  while (done < size) {
    if (stop && stop->load(std::memory_order_relaxed)) break;
    const long k = ::syscall(SYS_copy_file_range, int(fd), nullptr, int(dst), nullptr, size_t(std::min<uint64_t>(kChunk, size - done)), 0u);
    if (k <= 0) break;
    done += uint64_t(k);
  }
#endif
  std::vector<uint8_t> buf;
  while (s.ok() && done < size) {
    if (stop && stop->load(std::memory_order_relaxed)) break;
    if (buf.empty()) buf.resize(size_t(1) << 20);
    size_t k = 0;
    s = os::Read(fd, src, buf.data(), size_t(std::min<uint64_t>(buf.size(), size - done)), &k);
    if (!s.ok() || k == 0) break;
    s = os::WriteAll(dst, dst_path, buf.data(), k);
    done += k;
  }
  os::CloseQuietly(fd);
  *copied = done;
  if (s.ok() && stop && stop->load(std::memory_order_relaxed)) return Status(Code::kCancelled, "cancelled");
  return s;
}

}  // namespace io
}  // namespace neardup
