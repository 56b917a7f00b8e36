#include "io/line_reader.h"

#include <algorithm>
#include <cstring>

namespace neardup {
namespace io {

LineReader::~LineReader() { Close(); }

void LineReader::Close() {
  if (fd_ != os::kNoFd) os::CloseQuietly(fd_);
  fd_ = os::kNoFd;
}

Status LineReader::Open(const std::string& path) {
  Close();
  path_ = path;
  offset_ = 0;
  eof_ = false;
  Status s = os::OpenRead(path, &fd_);
  if (!s.ok()) return s;
  bool regular = false;
  s = os::FileSize(fd_, path, &size_, &regular);
  if (!s.ok()) return s;
  if (!regular) return Status(Code::kInvalidArgument, "'" + path + "' is not a regular file");
  return Status::Ok();
}

Status LineReader::Next(size_t want, size_t max_line, const uint8_t** data, size_t* size, bool* too_long, bool* eof) {
  *data = nullptr;
  *size = 0;
  *too_long = false;
  *eof = eof_;
  if (eof_) return Status::Ok();
  want = std::max<size_t>(want, 1);
  size_t have = 0, scanned = 0;
  for (;;) {
    // read up to `want` more bytes after what is there
    if (buf_.size() < have + want) buf_.resize(have + want);
    size_t got_total = 0;
    while (got_total < want) {
      size_t got = 0;
      const Status s = os::ReadAt(fd_, path_, offset_ + have + got_total, buf_.data() + have + got_total, want - got_total, &got);
      if (!s.ok()) return s;
      if (got == 0) break;
      got_total += got;
    }
    const bool end = got_total < want;
    have += got_total;
    size_t skip = 0;
    if (offset_ == 0 && have >= 3 && buf_[0] == 0xEF && buf_[1] == 0xBB && buf_[2] == 0xBF) skip = 3;
    // the last '\n' (only the new bytes need a look: the older ones had none)
    size_t last = SIZE_MAX;
    for (size_t i = have; i > scanned; i--) {
      if (buf_[i - 1] == '\n') {
        last = i - 1;
        break;
      }
    }
    if (last != SIZE_MAX) {
      // whole lines [skip, last]; the line over the limit check is the parser's (it knows line numbers)
      *data = buf_.data() + skip;
      *size = last + 1 - skip;
      offset_ += last + 1;  // what follows the '\n' is read again by the next call
      return Status::Ok();
    }
    if (have - skip > max_line) {
      *too_long = true;
      return Status::Ok();
    }
    if (end) {
      eof_ = true;
      *data = buf_.data() + skip;
      *size = have - skip;
      offset_ += have;
      *eof = *size == 0;
      return Status::Ok();
    }
    scanned = have;
    want = std::max(want, have);  // a long line: read on, doubling
  }
}

}  // namespace io
}  // namespace neardup
