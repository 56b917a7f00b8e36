// Temporary files of atomic writes: where a write to a path really goes (symbolic links followed), the
// recognisable temporary name next to it (".NAME.neardup-tmp-PID-RANDOM"), and the cleanup of temporary
// files that a killed process left behind (its PID no longer runs).
// io/temp_names.cc implements it on POSIX, io/temp_names_win.cc on Windows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/os.h"
#include "util/status.h"

namespace neardup {
namespace io {

// The file a write to `path` changes: symbolic links are followed (up to 40, relative targets resolved
// against the link's folder); a missing last component is fine (the file will be created there).
Status ResolveWriteTarget(const std::string& path, std::string* target);

// The folder of a path ("." without a slash).
std::string DirName(const std::string& path);

// ".<base>.neardup-tmp-<pid>-<16 hex digits>" in the folder of `target` (base shortened to 100 bytes).
std::string TempNameFor(const std::string& target);

// True when `name` (no folder) is such a temporary name; *pid is the PID in it.
bool ParseTempName(const std::string& name, long* pid);

// True unless no process with this PID exists (a process of another user counts as alive).
bool ProcessAlive(long pid);

// Whether a temporary file or spill folder of another process is stale, from the PID in its name, its age
// (seconds since it was last modified) and its lock (the temporary file itself; a spill folder's LOCK file):
//   - younger than kMinStaleAge: never (its writer may not have locked it yet);
//   - locked: never, whatever the PID says (its writer runs, maybe in another PID namespace);
//   - unlocked: when no process has its PID here, or when older than kReusedPidAge (the PID was reused).
// Where locks cannot be probed (kUnknown: no lock file, no lock support), the PID alone decides.
constexpr double kMinStaleAge = 5;
constexpr double kReusedPidAge = 3600;
bool IsStale(long pid, double age_seconds, const std::string& lock_path);

// The lock file of a spill folder: held by its process for the folder's lifetime.
constexpr const char* kSpillLockName = "LOCK";

// 64 random bits for temporary names (per platform: temp_names.cc, temp_names_win.cc).
uint64_t TempRandomBits();

// Removes the stale temporary files in `dir` (IsStale; regular files owned by this user only).
// Returns how many were removed; errors are ignored (cleanup is best effort).
size_t CleanStaleTemps(const std::string& dir);

// The mode a new file gets: 0666 minus the process umask.
unsigned NewFileMode();

// A folder PARENT/neardup-spill-PID-XXXXXX for one run's temporary files, removed with its files (it holds
// no sub-folder) when destroyed; its LOCK file is locked for its lifetime. Create() first removes the stale
// such folders in PARENT.
class SpillDir {
 public:
  SpillDir() = default;
  ~SpillDir();
  SpillDir(const SpillDir&) = delete;
  SpillDir& operator=(const SpillDir&) = delete;
  Status Create(const std::string& parent);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  os::Fd lock_ = os::kNoFd;
};

// Removes the stale PARENT/neardup-spill-PID-* folders (IsStale, with their LOCK file) and their files,
// owned by this user.
size_t CleanStaleSpillDirs(const std::string& parent);

}  // namespace io
}  // namespace neardup
