// The substring index file (kind "SUBX", version 1; docs/FORMAT.md section 16): a corpus's text (documents,
// each followed by 0xFF) and its suffix array, written by `neardup substrings --index-out` and read, memory-
// mapped, by `neardup substrings count`: the occurrences of a string by binary search.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/file.h"
#include "util/status.h"

namespace neardup {
namespace substr {

// Writes the index atomically: text[0, n) (n < 2^31 with 4-byte entries `sa32`, else 8-byte `sa64`: exactly
// one of them given), the documents' starts.
Status WriteIndex(const std::string& path, const uint8_t* text, uint64_t n, const std::vector<uint64_t>& starts,
                  const int32_t* sa32, const int64_t* sa64, const std::atomic<bool>* stop);

class SubstringIndex {
 public:
  // Checks the header and the layout (verify: also the payload's CRC-32C, which reads all of it).
  Status Open(const std::string& path, bool verify);
  // The same checks over an image in memory (kept by the caller while this index is used; the fuzz target).
  Status Attach(const uint8_t* data, size_t size, const std::string& name, bool verify);
  uint64_t documents() const { return docs_; }
  uint64_t text_bytes() const { return n_ - docs_; }
  // Occurrences of pattern[0, m) (m >= 1); a pattern never matches across documents when it holds no 0xFF.
  Status Count(const uint8_t* pattern, size_t m, uint64_t* count) const;

 private:
  uint64_t Entry(uint64_t i) const;
  io::MappedFile file_;
  std::string name_;
  const uint8_t* text_ = nullptr;
  const uint8_t* sa_ = nullptr;
  uint64_t n_ = 0, docs_ = 0;
  bool wide_ = false;
};

}  // namespace substr
}  // namespace neardup
