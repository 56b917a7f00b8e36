// Reading doubri 1.0 `.hash` files and their `.f` flag files (format: docs/FORMAT.md section 6, "doubri files").
//
//   .hash: 7 bytes "MinHash", 1 byte = 4 (bytes per value), u64 LE N (records), u64 LE K (values per record,
//          800 for doubri 1.0), then N records of K u32 LE values. Size 24 + 4*K*N exactly.
//   .f:    N ASCII bytes, '1' = keep, '0' = duplicate; no newline.
//
// Every problem (short or long file, wrong magic, a flag byte other than '0'/'1', a flag count that does not
// match N) is a Status naming the file; nothing is read past the end.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/file.h"
#include "util/status.h"

namespace neardup {
namespace doubri {

constexpr size_t kHashHeaderSize = 24;
constexpr uint32_t kValuesPerRecord = 800;  // doubri 1.0: 800 values ...
constexpr uint32_t kValuesPerBand = 20;     // ... in bands of 20 values (80 bytes) ...
constexpr uint32_t kBands = 40;             // ... 40 bands
constexpr size_t kBandBytes = kValuesPerBand * 4;
constexpr size_t kRecordBytes = kValuesPerRecord * 4;

class HashFile {
 public:
  // Maps `path` and checks its header and size. Requires K = 800 (the only layout doubri 1.0 writes).
  Status Open(const std::string& path);
  // The same checks on an image in memory (kept by the caller while this is used); `path` names it in errors.
  Status Attach(const uint8_t* data, size_t size, const std::string& path);
  uint64_t size() const { return n_; }
  const uint8_t* record(uint64_t i) const { return data_ + kHashHeaderSize + i * kRecordBytes; }
  const uint8_t* band(uint64_t i, uint32_t j) const { return record(i) + j * kBandBytes; }
  const std::string& path() const { return path_; }

 private:
  io::MappedFile map_;
  const uint8_t* data_ = nullptr;
  std::string path_;
  uint64_t n_ = 0;
};

// The flag file of a hash file (`<hash path>.f`): read whole, updated in place (1 -> 0 only).
class FlagFile {
 public:
  Status Read(const std::string& path, uint64_t expected);
  // The same checks on the file's contents, already read.
  Status Parse(const uint8_t* data, size_t size, const std::string& path, uint64_t expected);
  // Rewrites the file in place (same size; doubri updates flags in place, so does this).
  Status Write() const;
  std::vector<uint8_t>& flags() { return flags_; }
  const std::vector<uint8_t>& flags() const { return flags_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<uint8_t> flags_;  // '0' / '1'
};

// The last path component (the `target` of a stats line).
std::string BaseName(const std::string& path);

}  // namespace doubri
}  // namespace neardup
