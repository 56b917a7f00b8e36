// The operating-system layer: every raw file call of the core goes through here, so the rest of native/core is
// plain C++17. os_posix.cc implements it with open/pread/mmap/rename (Linux, macOS, BSDs); os_win.cc with
// CreateFileW/CreateFileMapping/MoveFileExW (Windows, paths are UTF-8 and converted to UTF-16). Errors come back
// as Status with the path and the system's message; nothing here throws or asserts.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "util/status.h"

namespace neardup {
namespace io {
namespace os {

// An open file: a file descriptor on POSIX, a HANDLE on Windows (both fit; -1 is "none" on both).
using Fd = intptr_t;
constexpr Fd kNoFd = -1;

// Opens an existing file for reading.
Status OpenRead(const std::string& path, Fd* fd);
// Opens an existing file for writing in place (no truncation).
Status OpenWrite(const std::string& path, Fd* fd);
// Creates a new file for writing; fails if `path` exists (or is a symbolic link), and then sets *exists when
// given. mode: POSIX permission bits (ignored on Windows).
Status CreateExclusive(const std::string& path, unsigned mode, Fd* fd, bool* exists = nullptr);

// Advisory locks that mark a temporary file or spill folder as in use, across processes and PID namespaces
// (containers sharing a volume see each other's locks, not each other's PIDs).
// LockFile: the whole file, exclusively, through `fd`, until it is closed. POSIX: flock (waits while a
// sweeper's ProbeLock holds it for an instant). Windows: nothing to do: the open handle is what ProbeLock sees.
Status LockFile(Fd fd, const std::string& path);
// Whether a process holds `path` under LockFile (POSIX: a non-blocking flock on a new descriptor fails;
// Windows: it cannot be opened without sharing). kUnknown: no such file, or locks are not supported there.
enum class LockState { kFree, kHeld, kUnknown };
LockState ProbeLock(const std::string& path);

// What a path names, links followed. A missing path is Ok with exists = false.
struct PathInfo {
  bool exists = false;
  bool regular = false;
  unsigned mode = 0;  // permission bits (POSIX; 0666 on Windows)
  long uid = -1, gid = -1;  // owner (POSIX; -1 on Windows)
};
Status StatPath(const std::string& path, PathInfo* info);
#if defined(_WIN32)
// UTF-8 -> UTF-16 for the wide Windows calls; false for a string that is not valid UTF-8.
bool WideFromUtf8(const std::string& s, std::wstring* w);
#endif
// Creates a folder (mode 0755 on POSIX); one that already exists is Ok.
Status MakeDir(const std::string& path);
// Gives an open file the permission bits `mode` and, when uid >= 0 and the process runs as root, the owner
// uid:gid. Windows: nothing (files there carry ACLs, inherited from the folder).
Status SetModeAndOwner(Fd fd, const std::string& path, unsigned mode, long uid, long gid);
// Creates a uniquely named file "<dir>/<prefix>XXXXXX" (dir "" = ".") opened for read and write as a stdio
// stream; *path receives its name. The caller closes it with std::fclose and removes it with RemoveFile.
Status CreateTempStream(const std::string& dir, const std::string& prefix, std::string* path, std::FILE** f);
// Opens an existing file as a binary stdio stream for reading (UTF-8 path on every system).
Status OpenStreamRead(const std::string& path, std::FILE** f);
// Moves a stdio stream to a 64-bit offset (fseeko / _fseeki64); false on error.
bool SeekStream(std::FILE* f, uint64_t offset);

// Size of an open file, and whether it is a regular file.
Status FileSize(Fd fd, const std::string& path, uint64_t* size, bool* regular);
// Reads up to n bytes (0 at the end of the file).
Status Read(Fd fd, const std::string& path, void* buf, size_t n, size_t* got);
// Writes all n bytes at the current position, or at `offset`.
Status WriteAll(Fd fd, const std::string& path, const void* data, size_t n);
// Reads up to n bytes at `offset` without moving a shared position (pread): safe from several threads at once.
Status ReadAt(Fd fd, const std::string& path, uint64_t offset, void* buf, size_t n, size_t* got);
Status WriteAllAt(Fd fd, const std::string& path, uint64_t offset, const void* data, size_t n);
// Flushes the file's data to stable storage ("cannot write" when it fails: the data may be lost).
Status Sync(Fd fd, const std::string& path);
// Closes; an error here may mean lost writes ("cannot write").
Status Close(Fd fd, const std::string& path);
// Closes where an error cannot be acted on (cleanup paths).
void CloseQuietly(Fd fd);

// Maps `size` (> 0) bytes of an open file read-only; the mapping stays valid after the file is closed.
Status MapReadOnly(Fd fd, const std::string& path, size_t size, const uint8_t** data);
void Unmap(const uint8_t* data, size_t size);

// Renames `from` to `to`, replacing `to` if it exists, as one step where the file system allows it.
Status Rename(const std::string& from, const std::string& to);
// Makes a rename or create in folder `dir` durable (fsync of the folder on POSIX; a no-op on Windows, where
// Rename already writes through). Best effort: errors are ignored.
void SyncDir(const std::string& dir);
// Removes a file; false when it could not be removed (e.g. it does not exist).
bool RemoveFile(const std::string& path);

// Gives the allocator's free memory back to the system (glibc keeps freed small blocks in the process, so a
// phase that freed a large budget in small pieces would still count against the next phase's). Best effort;
// a no-op where the allocator has no such call.
void ReleaseFreeMemory();

// Zeroed memory of `size` (> 0) bytes straight from the system (mmap / VirtualAlloc), page-granular: pages
// count as resident only once touched, and FreePages gives them back at once (a large table that grows
// by reallocation leaves no holes in the allocator's heap). Null when the system refuses.
void* AllocatePages(size_t size);
void FreePages(void* p, size_t size);

// The process's resident anonymous memory in bytes (heap and stacks, not mapped files: what a --memory
// budget bounds), or 0 where the system does not tell (then callers fall back to an estimate). Linux only.
uint64_t AnonymousMemoryBytes();

// The id of this process (used to name temporary files).
uint64_t ProcessId();

// Keeps the shared library (DLL) that contains `addr` mapped until the process exits, whatever unloads it
// later (dlopen RTLD_NOLOAD|RTLD_NODELETE; GetModuleHandleEx PIN on Windows). The addon calls it at load:
// its process-wide thread pool outlives any one environment, so the code must outlive them too. False
// when the system refused (or `addr` is not in a shared library).
bool PinLoadedModule(const void* addr);
// Opens a shared library at run time (an optional dependency the addon does not link against): the first
// of `names` that loads (dlopen RTLD_NOW|RTLD_LOCAL; LoadLibraryW on Windows), never closed. *handle
// receives it; on failure the status says which names were tried and the system's last message.
Status LoadSharedLibrary(const char* const* names, size_t count, void** handle);
// The address of `symbol` in a library from LoadSharedLibrary (dlsym / GetProcAddress), or nullptr.
void* FindSymbol(void* handle, const char* symbol);
// The folder part of a path ("." when there is none); '/' on every system, '\\' too on Windows.
std::string DirName(const std::string& path);
// Position just after the last path separator, or 0.
size_t BaseNameStart(const std::string& path);

}  // namespace os
}  // namespace io
}  // namespace neardup
