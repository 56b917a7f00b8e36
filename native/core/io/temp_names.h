// Temporary files of atomic writes: where a write to a path really goes (symbolic links followed), the
// recognisable temporary name next to it (".NAME.neardup-tmp-PID-RANDOM"), and the cleanup of temporary
// files that a killed process left behind (its PID no longer runs).
// io/temp_names.cc implements it on POSIX, io/temp_names_win.cc on Windows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

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

// 64 random bits for temporary names (per platform: temp_names.cc, temp_names_win.cc).
uint64_t TempRandomBits();

// Removes the temporary files in `dir` whose process is gone (regular files owned by this user only).
// Returns how many were removed; errors are ignored (cleanup is best effort).
size_t CleanStaleTemps(const std::string& dir);

// The mode a new file gets: 0666 minus the process umask.
unsigned NewFileMode();

// A folder PARENT/neardup-spill-PID-XXXXXX for one run's temporary files, removed with its files (it holds
// no sub-folder) when destroyed. Create() first removes such folders of dead processes in PARENT.
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
};

// Removes PARENT/neardup-spill-PID-* folders (and their files) of dead processes, owned by this user.
size_t CleanStaleSpillDirs(const std::string& parent);

}  // namespace io
}  // namespace neardup
