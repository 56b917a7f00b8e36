#include "io/file.h"

#include "io/temp_names.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace neardup {
namespace io {
namespace {

Status Errno(const std::string& what, const std::string& path) {
  return Status(Code::kIo, what + " '" + path + "': " + std::strerror(errno));
}

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
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = Errno("cannot stat", path);
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(Code::kIo, "not a regular file: '" + path + "'");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) {
    ::close(fd);
    data_ = nullptr;
    return Status::Ok();
  }
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    size_ = 0;
    return Errno("cannot map", path);
  }
  data_ = static_cast<const uint8_t*>(p);
  return Status::Ok();
}

void MappedFile::Close() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

AtomicFile::~AtomicFile() { Abort(); }

Status AtomicFile::Open(const std::string& path) {
  Abort();
  path_ = path;
  // stat() the path itself first: the kernel follows every link, /proc's "magic" ones (/dev/stdout) too.
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return Errno("cannot stat", path);
  if (exists && !S_ISREG(st.st_mode)) return Status(Code::kIo, "cannot write '" + path + "': not a regular file");
  Status s = ResolveWriteTarget(path, &target_);
  if (!s.ok()) return s;
  if (exists) {
    mode_ = st.st_mode & 07777;
    uid_ = static_cast<long>(st.st_uid);
    gid_ = static_cast<long>(st.st_gid);
  } else {
    mode_ = NewFileMode();
    uid_ = gid_ = -1;
  }
  CleanStaleTemps(DirName(target_));
  for (int attempt = 0; attempt < 8; attempt++) {
    tmp_ = TempNameFor(target_);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ >= 0 || errno != EEXIST) break;
  }
  if (fd_ < 0) {
    s = Errno("cannot create a temporary file for", path_);
    tmp_.clear();  // not ours: never removed
    return s;
  }
  buf_.clear();
  buf_.reserve(kBufSize);
  written_ = 0;
  return Status::Ok();
}

Status AtomicFile::Flush() {
  size_t off = 0;
  while (off < buf_.size()) {
    const ssize_t k = ::write(fd_, buf_.data() + off, buf_.size() - off);
    if (k < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path_);
    }
    off += static_cast<size_t>(k);
  }
  buf_.clear();
  return Status::Ok();
}

Status AtomicFile::Write(const void* data, size_t n) {
  if (fd_ < 0) return Status(Code::kInternal, "write to a file that is not open");
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
  if (fd_ < 0) return Status(Code::kInternal, "write to a file that is not open");
  Status s = Flush();
  if (!s.ok()) return s;
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (k < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path_);
    }
    p += k;
    n -= static_cast<size_t>(k);
    offset += static_cast<uint64_t>(k);
  }
  return Status::Ok();
}

Status AtomicFile::Commit() {
  if (fd_ < 0) return Status(Code::kInternal, "commit of a file that is not open");
  Status s = Flush();
  if (!s.ok()) return s;
  if (uid_ >= 0 && ::geteuid() == 0 && (::fchown(fd_, static_cast<uid_t>(uid_), static_cast<gid_t>(gid_)) != 0))
    return Errno("cannot set the owner of", tmp_);
  if (::fchmod(fd_, static_cast<mode_t>(mode_)) != 0) return Errno("cannot set the mode of", tmp_);
  if (::fsync(fd_) != 0) return Errno("cannot write", path_);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Errno("cannot write", path_);
  }
  fd_ = -1;
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) return Errno("cannot rename to", path_);
  tmp_.clear();
  const int dfd = ::open(DirName(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

void AtomicFile::Abort() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  buf_.clear();
}

Status ReadFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", path);
  out->clear();
  char tmp[65536];
  for (;;) {
    const ssize_t k = ::read(fd, tmp, sizeof tmp);
    if (k < 0) {
      if (errno == EINTR) continue;
      Status s = Errno("cannot read", path);
      ::close(fd);
      return s;
    }
    if (k == 0) break;
    out->append(tmp, static_cast<size_t>(k));
  }
  ::close(fd);
  return Status::Ok();
}

}  // namespace io
}  // namespace neardup
