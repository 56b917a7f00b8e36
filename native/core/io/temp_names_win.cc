// io/temp_names.h on Windows (io/temp_names.cc is the POSIX one): the same names, with the Win32 API for
// folders, processes and randomness. Differences: a write target is the path as given (symbolic links, rare on
// Windows, are not followed: the link itself is replaced); files carry no owner check (ACLs decide who may
// remove them). Compiled everywhere; empty elsewhere. CI cross-compiles it with mingw-w64; it is not run there.
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include "io/os.h"
#include "io/temp_names.h"

namespace neardup {
namespace io {

uint64_t TempRandomBits() {
  static std::mutex mu;
  static std::mt19937_64 gen((static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}() ^
                             (os::ProcessId() << 20) ^ GetTickCount64());
  std::lock_guard<std::mutex> lock(mu);
  return gen();
}

namespace {

std::string Narrow(const wchar_t* w) {
  const int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, nullptr, 0, nullptr, nullptr);
  if (n <= 1) return std::string();
  std::string s(static_cast<size_t>(n - 1), '\0');
  WideCharToMultiByte(CP_UTF8, 0, w, -1, &s[0], n, nullptr, nullptr);
  return s;
}

uint64_t FileTime100ns(const FILETIME& t) { return (uint64_t{t.dwHighDateTime} << 32) | t.dwLowDateTime; }

// Calls fn(name, is_dir, age in seconds since the last write) for each entry of a folder except "." and "..".
template <typename Fn>
void ForEachEntry(const std::string& dir, Fn fn) {
  std::wstring w;
  if (!os::WideFromUtf8(dir + "\\*", &w)) return;
  FILETIME now;
  GetSystemTimeAsFileTime(&now);
  WIN32_FIND_DATAW e;
  HANDLE h = FindFirstFileW(w.c_str(), &e);
  if (h == INVALID_HANDLE_VALUE) return;
  do {
    if (std::wcscmp(e.cFileName, L".") == 0 || std::wcscmp(e.cFileName, L"..") == 0) continue;
    const bool is_dir = (e.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
    const bool is_link = (e.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0;
    const double age = (static_cast<double>(FileTime100ns(now)) - static_cast<double>(FileTime100ns(e.ftLastWriteTime))) / 1e7;
    if (!is_link) fn(Narrow(e.cFileName), is_dir, age);
  } while (FindNextFileW(h, &e));
  FindClose(h);
}

void RemoveFlatDir(const std::string& dir) {
  ForEachEntry(dir, [&](const std::string& name, bool is_dir, double) {
    if (!is_dir) os::RemoveFile(dir + "\\" + name);
  });
  std::wstring w;
  if (os::WideFromUtf8(dir, &w)) RemoveDirectoryW(w.c_str());
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

std::string DirName(const std::string& path) { return os::DirName(path); }

Status ResolveWriteTarget(const std::string& path, std::string* target) {
  *target = path;
  return Status::Ok();
}

bool ProcessAlive(long pid) {
  if (pid <= 0) return true;
  HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
  if (h == nullptr) return GetLastError() != ERROR_INVALID_PARAMETER;  // access denied: alive, not ours
  DWORD code = 0;
  const bool alive = GetExitCodeProcess(h, &code) && code == STILL_ACTIVE;
  CloseHandle(h);
  return alive;
}

size_t CleanStaleTemps(const std::string& dir) {
  const long self = static_cast<long>(os::ProcessId());
  std::vector<std::string> stale;
  ForEachEntry(dir, [&](const std::string& name, bool is_dir, double age) {
    long pid = 0;
    if (is_dir || !ParseTempName(name, &pid) || pid == self) return;
    if (IsStale(pid, age, dir + "\\" + name)) stale.push_back(dir + "\\" + name);
  });
  size_t removed = 0;
  for (const std::string& f : stale) removed += os::RemoveFile(f) ? 1 : 0;
  return removed;
}

size_t CleanStaleSpillDirs(const std::string& parent) {
  const long self = static_cast<long>(os::ProcessId());
  std::vector<std::string> stale;
  ForEachEntry(parent, [&](const std::string& name, bool is_dir, double age) {
    long pid = 0;
    if (!is_dir || !ParseSpillName(name.c_str(), &pid) || pid == self) return;
    const std::string full = parent + "\\" + name;
    if (IsStale(pid, age, full + "\\" + kSpillLockName)) stale.push_back(full);
  });
  for (const std::string& s : stale) RemoveFlatDir(s);
  return stale.size();
}

SpillDir::~SpillDir() {
  if (lock_ != os::kNoFd) os::CloseQuietly(lock_);  // first: an open file cannot be removed
  if (!path_.empty()) RemoveFlatDir(path_);
}

Status SpillDir::Create(const std::string& parent) {
  const std::string p = parent.empty() ? std::string(".") : parent;
  CleanStaleSpillDirs(p);
  static const char kDigits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int attempt = 0; attempt < 100; attempt++) {
    uint64_t x = TempRandomBits();
    std::string name = p + "\\neardup-spill-" + std::to_string(os::ProcessId()) + "-";
    for (int i = 0; i < 6; i++, x /= 36) name += kDigits[x % 36];
    std::wstring w;
    if (!os::WideFromUtf8(name, &w)) return Status(Code::kIo, "path is not valid UTF-8: '" + p + "'");
    if (CreateDirectoryW(w.c_str(), nullptr)) {
      path_ = name;
      // Held open for the folder's lifetime: sweepers see it in use (os::ProbeLock); best effort.
      if (!os::CreateExclusive(path_ + "\\" + kSpillLockName, 0600, &lock_).ok()) lock_ = os::kNoFd;
      return Status::Ok();
    }
    if (GetLastError() != ERROR_ALREADY_EXISTS)
      return Status(Code::kIo, "cannot create a spill folder in '" + p + "' (error " + std::to_string(GetLastError()) + ")");
  }
  return Status(Code::kIo, "cannot create a spill folder in '" + p + "': every name tried exists");
}

unsigned NewFileMode() { return 0666; }

}  // namespace io
}  // namespace neardup
#endif  // _WIN32
