// io/os.h on Windows: UTF-8 paths converted to UTF-16 for the wide-character API, files as HANDLEs, read-only
// maps with CreateFileMapping + MapViewOfFile, replacing renames with MoveFileExW(MOVEFILE_REPLACE_EXISTING |
// MOVEFILE_WRITE_THROUGH). Compiled everywhere; empty elsewhere. CI cross-compiles it with mingw-w64
// (tools/cross-compile.sh); it is not run there.
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <fcntl.h>
#include <io.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "io/os.h"

namespace neardup {
namespace io {
namespace os {
namespace {

HANDLE H(Fd fd) { return reinterpret_cast<HANDLE>(fd); }
Fd F(HANDLE h) { return reinterpret_cast<Fd>(h); }

std::string SystemMessage(DWORD err) {
  char* msg = nullptr;
  const DWORD n = FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                                 nullptr, err, 0, reinterpret_cast<char*>(&msg), 0, nullptr);
  std::string s = n && msg ? std::string(msg, n) : "error " + std::to_string(err);
  if (msg) LocalFree(msg);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '.')) s.pop_back();
  return s;
}

Status LastError(const std::string& what, const std::string& path, DWORD err) {
  return Status(Code::kIo, what + " '" + path + "': " + SystemMessage(err));
}

Status LastError(const std::string& what, const std::string& path) { return LastError(what, path, GetLastError()); }

// UTF-8 -> UTF-16; false for a path that is not valid UTF-8.
bool Wide(const std::string& s, std::wstring* w) {
  w->clear();
  if (s.empty()) return true;
  const int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), nullptr, 0);
  if (n <= 0) return false;
  w->resize(static_cast<size_t>(n));
  return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), &(*w)[0], n) == n;
}

Status BadPath(const std::string& path) { return Status(Code::kIo, "path is not valid UTF-8: '" + path + "'"); }

Status Open(const std::string& path, DWORD access, DWORD disposition, DWORD share, const char* what, Fd* fd) {
  *fd = kNoFd;
  std::wstring w;
  if (!Wide(path, &w)) return BadPath(path);
  HANDLE h = CreateFileW(w.c_str(), access, share, nullptr, disposition, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return LastError(what, path);
  *fd = F(h);
  return Status::Ok();
}

constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
constexpr DWORD kChunk = 1u << 30;

}  // namespace

Status OpenRead(const std::string& path, Fd* fd) {
  return Open(path, GENERIC_READ, OPEN_EXISTING, kShareAll, "cannot open", fd);
}

Status OpenWrite(const std::string& path, Fd* fd) {
  return Open(path, GENERIC_WRITE, OPEN_EXISTING, kShareAll, "cannot open for writing", fd);
}

Status CreateExclusive(const std::string& path, unsigned /*mode*/, Fd* fd, bool* exists) {
  Status s = Open(path, GENERIC_READ | GENERIC_WRITE, CREATE_NEW, kShareAll, "cannot create", fd);
  if (exists) *exists = !s.ok() && GetLastError() == ERROR_FILE_EXISTS;
  return s;
}

bool WideFromUtf8(const std::string& s, std::wstring* w) { return Wide(s, w); }

Status LockFile(Fd, const std::string&) { return Status::Ok(); }

LockState ProbeLock(const std::string& path) {
  std::wstring w;
  if (!Wide(path, &w)) return LockState::kUnknown;
  // No sharing: fails while any process has the file open.
  HANDLE h = CreateFileW(w.c_str(), GENERIC_READ, 0, nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return GetLastError() == ERROR_SHARING_VIOLATION ? LockState::kHeld : LockState::kUnknown;
  CloseHandle(h);
  return LockState::kFree;
}

Status MakeDir(const std::string& path) {
  std::wstring w;
  if (!Wide(path, &w)) return BadPath(path);
  if (!CreateDirectoryW(w.c_str(), nullptr)) {
    const DWORD err = GetLastError();
    if (err != ERROR_ALREADY_EXISTS) return LastError("cannot create the folder", path, err);
  }
  return Status::Ok();
}

Status StatPath(const std::string& path, PathInfo* info) {
  *info = PathInfo();
  std::wstring w;
  if (!Wide(path, &w)) return BadPath(path);
  WIN32_FILE_ATTRIBUTE_DATA a;
  if (!GetFileAttributesExW(w.c_str(), GetFileExInfoStandard, &a)) {
    const DWORD err = GetLastError();
    if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND) return Status::Ok();
    return LastError("cannot stat", path, err);
  }
  info->exists = true;
  info->regular = (a.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
  info->mode = 0666;
  return Status::Ok();
}

Status SetModeAndOwner(Fd /*fd*/, const std::string& /*path*/, unsigned /*mode*/, long /*uid*/, long /*gid*/) {
  return Status::Ok();
}

Status CreateTempStream(const std::string& dir, const std::string& prefix, std::string* path, std::FILE** f) {
  static std::atomic<uint64_t> counter{0};
  static const char kDigits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  const std::string folder = dir.empty() ? std::string(".") : dir;
  for (int attempt = 0; attempt < 100; attempt++) {
    uint64_t x = (ProcessId() << 32) ^ GetTickCount64() ^ (counter.fetch_add(1) * 0x9E3779B97F4A7C15ull);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    std::string name = folder + "\\" + prefix;
    for (int i = 0; i < 6; i++, x /= 36) name += kDigits[x % 36];
    std::wstring w;
    if (!Wide(name, &w)) return BadPath(name);
    HANDLE h = CreateFileW(w.c_str(), GENERIC_READ | GENERIC_WRITE, kShareAll, nullptr, CREATE_NEW,
                           FILE_ATTRIBUTE_NORMAL | FILE_ATTRIBUTE_TEMPORARY, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
      const DWORD err = GetLastError();
      if (err == ERROR_FILE_EXISTS) continue;
      return LastError("cannot create a temporary file", name, err);
    }
    const Fd fd = F(h);
    const int crt = _open_osfhandle(fd, _O_BINARY | _O_RDWR);
    if (crt < 0) {
      CloseHandle(H(fd));
      RemoveFile(name);
      return Status(Code::kIo, "cannot open '" + name + "' as a stream");
    }
    *f = _fdopen(crt, "w+b");
    if (*f == nullptr) {
      _close(crt);
      RemoveFile(name);
      return Status(Code::kIo, "cannot open '" + name + "' as a stream");
    }
    *path = name;
    return Status::Ok();
  }
  return Status(Code::kIo, "cannot create a temporary file in '" + folder + "': every name tried exists");
}

Status OpenStreamRead(const std::string& path, std::FILE** f) {
  *f = nullptr;
  std::wstring w;
  if (!Wide(path, &w)) return BadPath(path);
  *f = _wfopen(w.c_str(), L"rb");
  if (*f == nullptr) return Status(Code::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  return Status::Ok();
}

bool SeekStream(std::FILE* f, uint64_t offset) {
  if (offset > static_cast<uint64_t>(INT64_MAX)) return false;
  return _fseeki64(f, static_cast<int64_t>(offset), SEEK_SET) == 0;
}

Status FileSize(Fd fd, const std::string& path, uint64_t* size, bool* regular) {
  BY_HANDLE_FILE_INFORMATION info;
  if (GetFileType(H(fd)) != FILE_TYPE_DISK || !GetFileInformationByHandle(H(fd), &info)) {
    *size = 0;
    *regular = false;
    return Status::Ok();
  }
  *regular = (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
  *size = (static_cast<uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow;
  return Status::Ok();
}

Status Read(Fd fd, const std::string& path, void* buf, size_t n, size_t* got) {
  DWORD k = 0;
  const DWORD want = n > kChunk ? kChunk : static_cast<DWORD>(n);
  if (!ReadFile(H(fd), buf, want, &k, nullptr)) {
    const DWORD err = GetLastError();
    if (err == ERROR_HANDLE_EOF || err == ERROR_BROKEN_PIPE) {
      *got = 0;
      return Status::Ok();
    }
    return LastError("cannot read", path, err);
  }
  *got = k;
  return Status::Ok();
}

Status ReadAt(Fd fd, const std::string& path, uint64_t offset, void* buf, size_t n, size_t* got) {
  OVERLAPPED ov = {};
  ov.Offset = static_cast<DWORD>(offset);
  ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD k = 0;
  const DWORD want = n > kChunk ? kChunk : static_cast<DWORD>(n);
  if (!ReadFile(H(fd), buf, want, &k, &ov)) {
    const DWORD err = GetLastError();
    if (err == ERROR_HANDLE_EOF) {
      *got = 0;
      return Status::Ok();
    }
    return LastError("cannot read", path, err);
  }
  *got = k;
  return Status::Ok();
}

Status WriteAll(Fd fd, const std::string& path, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    DWORD k = 0;
    const DWORD want = n > kChunk ? kChunk : static_cast<DWORD>(n);
    if (!WriteFile(H(fd), p, want, &k, nullptr)) return LastError("cannot write", path);
    p += k;
    n -= k;
  }
  return Status::Ok();
}

// A positioned write on a synchronous handle moves the file pointer (pwrite does not): save and restore it, so
// a later WriteAll still appends where it would have.
Status WriteAllAt(Fd fd, const std::string& path, uint64_t offset, const void* data, size_t n) {
  LARGE_INTEGER zero, here;
  zero.QuadPart = 0;
  if (!SetFilePointerEx(H(fd), zero, &here, FILE_CURRENT)) return LastError("cannot seek", path);
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    OVERLAPPED ov = {};
    ov.Offset = static_cast<DWORD>(offset);
    ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
    DWORD k = 0;
    const DWORD want = n > kChunk ? kChunk : static_cast<DWORD>(n);
    if (!WriteFile(H(fd), p, want, &k, &ov)) return LastError("cannot write", path);
    p += k;
    n -= k;
    offset += k;
  }
  if (!SetFilePointerEx(H(fd), here, nullptr, FILE_BEGIN)) return LastError("cannot seek", path);
  return Status::Ok();
}

Status Sync(Fd fd, const std::string& path) {
  if (!FlushFileBuffers(H(fd))) return LastError("cannot write", path);
  return Status::Ok();
}

Status Close(Fd fd, const std::string& path) {
  if (!CloseHandle(H(fd))) return LastError("cannot write", path);
  return Status::Ok();
}

void CloseQuietly(Fd fd) {
  if (fd != kNoFd) CloseHandle(H(fd));
}

Status MapReadOnly(Fd fd, const std::string& path, size_t size, const uint8_t** data) {
  HANDLE map = CreateFileMappingW(H(fd), nullptr, PAGE_READONLY, 0, 0, nullptr);
  if (map == nullptr) return LastError("cannot map", path);
  void* p = MapViewOfFile(map, FILE_MAP_READ, 0, 0, size);
  const DWORD err = GetLastError();
  CloseHandle(map);  // the view keeps the mapping alive
  if (p == nullptr) return LastError("cannot map", path, err);
  *data = static_cast<const uint8_t*>(p);
  return Status::Ok();
}

void Unmap(const uint8_t* data, size_t /*size*/) {
  if (data != nullptr) UnmapViewOfFile(data);
}

Status Rename(const std::string& from, const std::string& to) {
  std::wstring wf, wt;
  if (!Wide(from, &wf)) return BadPath(from);
  if (!Wide(to, &wt)) return BadPath(to);
  if (!MoveFileExW(wf.c_str(), wt.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
    return LastError("cannot rename to", to);
  return Status::Ok();
}

void SyncDir(const std::string& /*dir*/) {}

bool RemoveFile(const std::string& path) {
  std::wstring w;
  return Wide(path, &w) && DeleteFileW(w.c_str()) != 0;
}

void ReleaseFreeMemory() {}

void* AllocatePages(size_t size) { return VirtualAlloc(nullptr, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE); }

void FreePages(void* p, size_t size) {
  (void)size;
  if (p != nullptr) VirtualFree(p, 0, MEM_RELEASE);
}

uint64_t AnonymousMemoryBytes() { return 0; }

uint64_t ProcessId() { return static_cast<uint64_t>(GetCurrentProcessId()); }

bool PinLoadedModule(const void* addr) {
  HMODULE h = nullptr;
  return GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                            static_cast<LPCWSTR>(addr), &h) != 0;
}

Status LoadSharedLibrary(const char* const* names, size_t count, void** handle) {
  std::string tried;
  DWORD last = 0;
  for (size_t i = 0; i < count; i++) {
    std::wstring w;
    if (!WideFromUtf8(names[i], &w)) continue;
    HMODULE h = LoadLibraryW(w.c_str());
    if (h != nullptr) {
      *handle = reinterpret_cast<void*>(h);
      return Status::Ok();
    }
    last = GetLastError();
    tried += (tried.empty() ? "" : ", ") + std::string(names[i]);
  }
  return Status(Code::kUnsupported, "cannot load " + tried + ": error " + std::to_string(static_cast<unsigned long>(last)));
}

void* FindSymbol(void* handle, const char* symbol) {
  if (handle == nullptr) return nullptr;
  return reinterpret_cast<void*>(GetProcAddress(reinterpret_cast<HMODULE>(handle), symbol));
}

size_t BaseNameStart(const std::string& path) {
  const size_t sep = path.find_last_of("/\\:");
  return sep == std::string::npos ? 0 : sep + 1;
}

std::string DirName(const std::string& path) {
  const size_t start = BaseNameStart(path);
  if (start == 0) return ".";
  if (path[start - 1] == ':') return path.substr(0, start);               // "C:name" -> "C:"
  if (start >= 2 && path[start - 2] == ':') return path.substr(0, start);  // "C:\name" -> "C:\"
  if (start == 1) return path.substr(0, 1);
  return path.substr(0, start - 1);
}

}  // namespace os
}  // namespace io
}  // namespace neardup
#endif  // _WIN32
