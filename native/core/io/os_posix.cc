// io/os.h on POSIX systems (Linux, macOS, the BSDs). Compiled everywhere; empty on Windows.
#if !defined(_WIN32)
#include "io/os.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

namespace neardup {
namespace io {
namespace os {
namespace {

Status Errno(const std::string& what, const std::string& path, int err) {
  return Status(Code::kIo, what + " '" + path + "': " + std::strerror(err));
}

Status Errno(const std::string& what, const std::string& path) { return Errno(what, path, errno); }

int Int(Fd fd) { return static_cast<int>(fd); }

Status OpenWith(const std::string& path, int flags, unsigned mode, const char* what, Fd* fd) {
  int f;
  do {
    f = ::open(path.c_str(), flags | O_CLOEXEC, static_cast<mode_t>(mode));
  } while (f < 0 && errno == EINTR);
  if (f < 0) {
    const int err = errno;
    *fd = kNoFd;
    Status s = Errno(what, path, err);
    errno = err;  // callers may look at it (CreateExclusive)
    return s;
  }
  *fd = f;
  return Status::Ok();
}

}  // namespace

Status OpenRead(const std::string& path, Fd* fd) { return OpenWith(path, O_RDONLY, 0, "cannot open", fd); }

Status OpenWrite(const std::string& path, Fd* fd) {
  return OpenWith(path, O_WRONLY, 0, "cannot open for writing", fd);
}

Status CreateExclusive(const std::string& path, unsigned mode, Fd* fd, bool* exists) {
#ifdef O_NOFOLLOW
  Status s = OpenWith(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode, "cannot create", fd);
#else
  Status s = OpenWith(path, O_WRONLY | O_CREAT | O_EXCL, mode, "cannot create", fd);
#endif
  if (exists) *exists = !s.ok() && errno == EEXIST;
  return s;
}

Status LockFile(Fd fd, const std::string& path) {
  int r;
  do {
    r = ::flock(static_cast<int>(fd), LOCK_EX);
  } while (r != 0 && errno == EINTR);
  if (r != 0) return Status(Code::kIo, "cannot lock '" + path + "': " + std::strerror(errno));
  return Status::Ok();
}

LockState ProbeLock(const std::string& path) {
#ifdef O_NOFOLLOW
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
#else
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
#endif
  if (fd < 0) return LockState::kUnknown;
  LockState state = LockState::kFree;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) state = errno == EWOULDBLOCK ? LockState::kHeld : LockState::kUnknown;
  ::close(fd);  // releases the probe's lock
  return state;
}

Status StatPath(const std::string& path, PathInfo* info) {
  *info = PathInfo();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Errno("cannot stat", path);
  }
  info->exists = true;
  info->regular = S_ISREG(st.st_mode);
  info->mode = static_cast<unsigned>(st.st_mode & 07777);
  info->uid = static_cast<long>(st.st_uid);
  info->gid = static_cast<long>(st.st_gid);
  return Status::Ok();
}

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return Errno("cannot create the folder", path);
  return Status::Ok();
}

Status SetModeAndOwner(Fd fd, const std::string& path, unsigned mode, long uid, long gid) {
  if (uid >= 0 && ::geteuid() == 0 && ::fchown(Int(fd), static_cast<uid_t>(uid), static_cast<gid_t>(gid)) != 0)
    return Errno("cannot set the owner of", path);
  if (::fchmod(Int(fd), static_cast<mode_t>(mode)) != 0) return Errno("cannot set the mode of", path);
  return Status::Ok();
}

Status CreateTempStream(const std::string& dir, const std::string& prefix, std::string* path, std::FILE** f) {
  const std::string folder = dir.empty() ? std::string(".") : dir;
  std::string tmpl = folder + "/" + prefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  const int fd = ::mkstemp(buf.data());
  if (fd < 0) return Errno("cannot create a temporary file in", folder);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  *path = buf.data();
  *f = ::fdopen(fd, "w+b");
  if (*f == nullptr) {
    const int err = errno;
    ::close(fd);
    ::unlink(path->c_str());
    return Errno("cannot open", *path, err);
  }
  return Status::Ok();
}

Status OpenStreamRead(const std::string& path, std::FILE** f) {
  *f = std::fopen(path.c_str(), "rb");
  if (*f == nullptr) return Errno("cannot open", path);
  return Status::Ok();
}

bool SeekStream(std::FILE* f, uint64_t offset) {
  if (offset > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) return false;
  return ::fseeko(f, static_cast<off_t>(offset), SEEK_SET) == 0;
}

Status FileSize(Fd fd, const std::string& path, uint64_t* size, bool* regular) {
  struct stat st;
  if (::fstat(Int(fd), &st) != 0) return Errno("cannot stat", path);
  *size = static_cast<uint64_t>(st.st_size);
  *regular = S_ISREG(st.st_mode);
  return Status::Ok();
}

Status Read(Fd fd, const std::string& path, void* buf, size_t n, size_t* got) {
  for (;;) {
    const ssize_t k = ::read(Int(fd), buf, n);
    if (k >= 0) {
      *got = static_cast<size_t>(k);
      return Status::Ok();
    }
    if (errno != EINTR) return Errno("cannot read", path);
  }
}

Status ReadAt(Fd fd, const std::string& path, uint64_t offset, void* buf, size_t n, size_t* got) {
  for (;;) {
    const ssize_t k = ::pread(Int(fd), buf, n, static_cast<off_t>(offset));
    if (k >= 0) {
      *got = static_cast<size_t>(k);
      return Status::Ok();
    }
    if (errno != EINTR) return Errno("cannot read", path);
  }
}

Status WriteAll(Fd fd, const std::string& path, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::write(Int(fd), p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return Status::Ok();
}

Status WriteAllAt(Fd fd, const std::string& path, uint64_t offset, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::pwrite(Int(fd), p, n, static_cast<off_t>(offset));
    if (k < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    p += k;
    n -= static_cast<size_t>(k);
    offset += static_cast<uint64_t>(k);
  }
  return Status::Ok();
}

Status Sync(Fd fd, const std::string& path) {
  if (::fsync(Int(fd)) != 0) return Errno("cannot write", path);  // the data did not reach the disk
  return Status::Ok();
}

Status Close(Fd fd, const std::string& path) {
  if (::close(Int(fd)) != 0 && errno != EINTR) return Errno("cannot write", path);  // e.g. NFS: lost writes
  return Status::Ok();
}

void CloseQuietly(Fd fd) {
  if (fd != kNoFd) ::close(Int(fd));
}

Status MapReadOnly(Fd fd, const std::string& path, size_t size, const uint8_t** data) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, Int(fd), 0);
  if (p == MAP_FAILED) return Errno("cannot map", path);
  *data = static_cast<const uint8_t*>(p);
  return Status::Ok();
}

void Unmap(const uint8_t* data, size_t size) {
  if (data != nullptr) ::munmap(const_cast<uint8_t*>(data), size);
}

Status Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return Errno("cannot rename to", to);
  return Status::Ok();
}

void SyncDir(const std::string& dir) {
#ifdef O_DIRECTORY
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#else
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_CLOEXEC);
#endif
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

bool RemoveFile(const std::string& path) { return ::unlink(path.c_str()) == 0; }

void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

void* AllocatePages(size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void FreePages(void* p, size_t size) {
  if (p != nullptr) ::munmap(p, size);
}

uint64_t AnonymousMemoryBytes() {
#if defined(__linux__)
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (!f) return 0;
  char line[256];
  unsigned long long kb = 0;
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "RssAnon: %llu kB", &kb) == 1;
  std::fclose(f);
  return found ? uint64_t(kb) << 10 : 0;
#else
  return 0;
#endif
}

uint64_t ProcessId() { return static_cast<uint64_t>(::getpid()); }

bool PinLoadedModule(const void* addr) {
  Dl_info info;
  if (::dladdr(addr, &info) == 0 || info.dli_fname == nullptr) return false;
  // NOLOAD: only the copy already mapped (never a second one); NODELETE: dlclose no longer unmaps it. The
  // handle adds one reference that is never dropped, which is the point.
  return ::dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
}

Status LoadSharedLibrary(const char* const* names, size_t count, void** handle) {
  std::string tried, last;
  for (size_t i = 0; i < count; i++) {
    void* h = ::dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      *handle = h;
      return Status::Ok();
    }
    const char* e = ::dlerror();
    last = e == nullptr ? "not found" : e;
    tried += (tried.empty() ? "" : ", ") + std::string(names[i]);
  }
  return Status(Code::kUnsupported, "cannot load " + tried + ": " + last);
}

void* FindSymbol(void* handle, const char* symbol) { return handle == nullptr ? nullptr : ::dlsym(handle, symbol); }

size_t BaseNameStart(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? 0 : slash + 1;
}

std::string DirName(const std::string& path) {
  const size_t start = BaseNameStart(path);
  if (start == 0) return ".";
  if (start == 1) return "/";
  return path.substr(0, start - 1);
}

}  // namespace os
}  // namespace io
}  // namespace neardup
#endif  // !_WIN32
