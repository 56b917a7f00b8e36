// Files: read-only memory maps and atomic writes (temporary name in the same folder, fsync, rename, fsync
// of the folder), so a crash or a full disk never leaves a half-written file under the final name.
// AtomicFile follows a symbolic link to the file it names (the link stays), keeps the mode (and, as root,
// the owner) of the file it replaces, creates its temporary file with O_EXCL and mode 0600 under a
// recognisable name (".NAME.neardup-tmp-PID-RANDOM", io/temp_names.h), and removes the temporary files of
// processes that died in the same folder. Only regular files are written (a device or FIFO is refused).
#pragma once
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <string>
#include <vector>

#include "io/os.h"
#include "util/status.h"

namespace neardup {
namespace io {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;

  Status Open(const std::string& path);
  void Close();
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();  // removes the temporary file unless Commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  Status Open(const std::string& path);
  Status Write(const void* data, size_t n);
  // Overwrites bytes already written (e.g. a header whose lengths are known at the end).
  Status WriteAt(uint64_t offset, const void* data, size_t n);
  Status Commit();  // flush, fsync, rename over `path`, fsync the folder
  void Abort();
  uint64_t written() const { return written_; }
  const std::string& path() const { return path_; }

 private:
  Status Flush();
  os::Fd fd_ = os::kNoFd;
  std::string path_, tmp_;
  std::string target_;              // path_ with symbolic links followed
  unsigned mode_ = 0;               // permission bits the committed file gets
  long uid_ = -1, gid_ = -1;        // owner of the file replaced (-1: a new file)
  std::string buf_;
  uint64_t written_ = 0;
};

// Reads a whole (small) file.
Status ReadFile(const std::string& path, std::string* out);

// Whole files read one after another into one buffer (ReadFilesInto).
struct FilesRead {
  size_t files = 0;            // files read: paths[0 .. files)
  std::vector<uint64_t> ends;  // file i ends at dst[ends[i]] (and starts where file i - 1 ends, or at 0)
  uint64_t need = 0;           // when no file was read: the size of paths[0], larger than the buffer
};

// Reads the files `paths` whole, in order, into dst[0..cap), and stops before the first one that does not fit
// in what is left (or when *stop is raised between files). Each file is read up to the size it has
// when opened (one growing meanwhile is cut there; one shrinking gives what it still holds). An error names
// the file.
Status ReadFilesInto(const std::vector<std::string>& paths, uint8_t* dst, size_t cap,
                     const std::atomic<bool>* stop, FilesRead* out);

// Appends the whole file `src` (up to the size it has when opened) at the current position of `dst` (a file
// open for writing; dst_path names it in errors); *copied: the bytes appended. On Linux the kernel copies
// (copy_file_range: no pass through user memory, a reflink where the file system offers one), else (and
// where that call is refused) through a 1 MiB buffer. Checks *stop between chunks.
Status AppendFile(os::Fd dst, const std::string& dst_path, const std::string& src, const std::atomic<bool>* stop,
                  uint64_t* copied);

}  // namespace io
}  // namespace neardup
