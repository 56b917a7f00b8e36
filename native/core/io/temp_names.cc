// io/temp_names.h on POSIX systems; io/temp_names_win.cc on Windows.
#if !defined(_WIN32)
#include "io/os.h"
#include "io/temp_names.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

namespace neardup {
namespace io {

uint64_t TempRandomBits() {
  uint64_t v = 0;
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t k = ::read(fd, &v, sizeof v);
    ::close(fd);
    if (k == static_cast<ssize_t>(sizeof v)) return v;
  }
  static std::mutex mu;
  static std::mt19937_64 gen(std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 32));
  std::lock_guard<std::mutex> lock(mu);
  return gen();
}

std::string DirName(const std::string& path) { return os::DirName(path); }

Status ResolveWriteTarget(const std::string& path, std::string* target) {
  std::string p = path;
  for (int hops = 0; hops <= 40; hops++) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) {
        *target = p;
        return Status::Ok();
      }
      return Status(Code::kIo, "cannot stat '" + p + "': " + std::strerror(errno));
    }
    if (!S_ISLNK(st.st_mode)) {
      *target = p;
      return Status::Ok();
    }
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    const ssize_t k = ::readlink(p.c_str(), &link[0], link.size());
    if (k < 0) return Status(Code::kIo, "cannot read the link '" + p + "': " + std::strerror(errno));
    if (static_cast<size_t>(k) >= link.size()) return Status(Code::kIo, "the link '" + p + "' changed while read");
    link.resize(static_cast<size_t>(k));
    if (link.empty() || link[0] != '/') {
      const size_t slash = p.rfind('/');
      link = (slash == std::string::npos ? std::string() : p.substr(0, slash + 1)) + link;
    }
    p = link;
  }
  return Status(Code::kIo, "too many levels of symbolic links at '" + path + "'");
}

bool ProcessAlive(long pid) {
  if (pid <= 0) return true;
  if (::kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno != ESRCH;
}

size_t CleanStaleTemps(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  size_t removed = 0;
  const long self = static_cast<long>(::getpid());
  const uid_t uid = ::geteuid();
  const time_t now = ::time(nullptr);
  while (struct dirent* e = ::readdir(d)) {
    long pid = 0;
    const std::string name = e->d_name;
    if (!ParseTempName(name, &pid) || pid == self) continue;
    const std::string full = (dir == "/" ? std::string() : dir) + "/" + name;
    struct stat st;
    if (::lstat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid) continue;
    if (!IsStale(pid, std::difftime(now, st.st_mtime), full)) continue;
    if (::unlink(full.c_str()) == 0) removed++;
  }
  ::closedir(d);
  return removed;
}

namespace {

// Removes the files of a flat folder, then the folder.
void RemoveFlatDir(const std::string& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      ::unlink((dir + "/" + e->d_name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

bool ParseSpillName(const char* name, long* pid) {
  static const char kPrefix[] = "neardup-spill-";
  if (std::strncmp(name, kPrefix, sizeof kPrefix - 1) != 0) return false;
  const char* p = name + sizeof kPrefix - 1;
  long v = 0;
  int digits = 0;
  for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++) v = v * 10 + (*p - '0');
  if (digits == 0 || *p != '-' || p[1] == '\0') return false;
  *pid = v;
  return true;
}

}  // namespace

size_t CleanStaleSpillDirs(const std::string& parent) {
  DIR* d = ::opendir(parent.c_str());
  if (!d) return 0;
  size_t removed = 0;
  const long self = static_cast<long>(::getpid());
  const uid_t uid = ::geteuid();
  std::vector<std::string> stale;
  const time_t now = ::time(nullptr);
  while (struct dirent* e = ::readdir(d)) {
    long pid = 0;
    if (!ParseSpillName(e->d_name, &pid) || pid == self) continue;
    const std::string full = parent + "/" + e->d_name;
    struct stat st;
    if (::lstat(full.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid) continue;
    if (!IsStale(pid, std::difftime(now, st.st_mtime), full + "/" + kSpillLockName)) continue;
    stale.push_back(full);
  }
  ::closedir(d);
  for (const std::string& s : stale) {
    RemoveFlatDir(s);
    removed++;
  }
  return removed;
}

SpillDir::~SpillDir() {
  if (lock_ != os::kNoFd) os::CloseQuietly(lock_);
  if (!path_.empty()) RemoveFlatDir(path_);
}

Status SpillDir::Create(const std::string& parent) {
  const std::string p = parent.empty() ? std::string(".") : parent;
  CleanStaleSpillDirs(p);
  std::string tmpl = p + "/neardup-spill-" + std::to_string(static_cast<long>(::getpid())) + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    return Status(Code::kIo, "cannot create a spill folder in '" + p + "': " + std::strerror(errno));
  path_ = buf.data();
  // The lock that tells sweepers (in any PID namespace) that this folder is in use; best effort.
  if (os::CreateExclusive(path_ + "/" + kSpillLockName, 0600, &lock_).ok() && !os::LockFile(lock_, path_).ok()) {
    os::CloseQuietly(lock_);
    lock_ = os::kNoFd;
  }
  return Status::Ok();
}

unsigned NewFileMode() {
  // Read at each call: the umask may change while the process runs.
  return [] {
    // Linux reports the umask in /proc (no change of the process-wide value, which other threads see).
    if (std::FILE* f = std::fopen("/proc/self/status", "re")) {
      char line[256];
      unsigned m = 0;
      bool found = false;
      while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "Umask: %o", &m) == 1) {
          found = true;
          break;
        }
      std::fclose(f);
      if (found) return 0666u & ~m;
    }
    const mode_t m = ::umask(022);
    ::umask(m);
    return 0666u & ~static_cast<unsigned>(m);
  }();
}

}  // namespace io
}  // namespace neardup
#endif  // !_WIN32
