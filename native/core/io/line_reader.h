// Whole lines of a regular file, read in large pieces into one reused buffer (no page faults after the first
// piece): the JSONL reader's path for plain files, where nothing but the native code touches the bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/os.h"
#include "util/status.h"

namespace neardup {
namespace io {

class LineReader {
 public:
  LineReader() = default;
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  Status Open(const std::string& path);
  // The next whole lines from where the last call stopped: about `want` bytes (at least one line; a line
  // longer than `want` is read whole), the final line of the file with or without its '\n'. A UTF-8 BOM at
  // the start of the file is skipped. *data/*size stay valid until the next call; *size == 0 with *eof at the
  // end. A line longer than `max_line` sets *too_long (the data before it is not returned then).
  Status Next(size_t want, size_t max_line, const uint8_t** data, size_t* size, bool* too_long, bool* eof);
  // Bytes of the file consumed so far (returned lines and the BOM).
  uint64_t offset() const { return offset_; }
  uint64_t file_size() const { return size_; }
  void Close();

 private:
  os::Fd fd_ = os::kNoFd;
  std::string path_;
  uint64_t offset_ = 0, size_ = 0;
  std::vector<uint8_t> buf_;
  bool eof_ = false;
};

}  // namespace io
}  // namespace neardup
