// Repeated-substring removal (ExactSubstr, Lee et al. 2021): the byte spans of a corpus that lie in a window
// of L bytes whose content occurs elsewhere in the corpus. docs/substrings.md states the rules.
//
// The corpus is its documents back to back, each followed by kSeparator (0xFF, a byte UTF-8 never holds), so
// a window never crosses a document boundary. Its suffix array is built by libdivsufsort, loaded at run time
// (suffix_array.h). Equal L-windows are found without an LCP array: adjacent suffix-array entries are compared
// over at most L bytes (stopping at a separator); a maximal run of entries whose neighbours share >= L bytes
// is one group of equal windows, whose smallest position is the first occurrence. Every other member's window
// is removed (keep-first, the default), or every member's (drop-all, Lee et al.'s original rule); the removed
// windows are merged into spans and each span shrunk to whole code points.
//
// Memory while Find runs: the text (its bytes + one per document), the suffix array (4 bytes per byte below
// 2^31 bytes, else 8), two bitmaps of one bit per byte, and 8 bytes per document. Token mode builds the
// suffix array over one 3-byte code per token (4 beyond 2^24 - 1 distinct tokens) instead, with a table of
// the distinct tokens while the codes are made.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "text/docs.h"
#include "util/status.h"

namespace neardup {
namespace substr {

constexpr uint8_t kSeparator = 0xFF;
// The shortest window: a span may lose up to 3 bytes at its start when shrunk to whole code points, and its
// first occurrence is reported shifted by as many, which must stay inside the window.
constexpr uint32_t kMinLength = 4;
constexpr uint32_t kMaxLength = 1u << 30;

// What a window counts: bytes of UTF-8, or tokens (maximal runs of non-whitespace code points, Python's
// str.split(); text::IsSpace). In token mode a token is removed when it lies in a window of L tokens whose
// sequence occurs at an earlier token of the corpus; a span runs from the first byte of a run of removed
// tokens to the last byte of its last token (the whitespace inside it goes too, the whitespace around it stays).
enum class Unit { kByte, kToken };

struct FindOptions {
  uint32_t length = 100;   // L, in units (bytes: at least kMinLength; tokens: at least 1)
  Unit unit = Unit::kByte;
  bool drop_all = false;   // remove every copy, the first too
  // byte mode: also write the text and its suffix array to this index file (index_file.h), once it is built
  std::string index_path;
  uint32_t code_bytes = 0;  // token mode: bytes per token code; 0 = 3, or 4 beyond 2^24 - 1 distinct tokens (tests force 4)
  const std::atomic<bool>* stop = nullptr;
};

// One removed span: bytes [start, end) of document `doc` (offsets into its UTF-8). Its first L bytes (before
// shrinking) also occur at `first_offset` of document `first_doc` (the earliest such place other than the
// span itself), shifted by what shrinking removed from the start. Token mode: its first L tokens occur
// from the token starting at byte `first_offset` of `first_doc`.
struct Span {
  uint64_t doc = 0, start = 0, end = 0;
  uint64_t first_doc = 0, first_offset = 0;
};

struct FindStats {
  uint64_t documents = 0;
  uint64_t bytes = 0;          // text bytes (separators not counted)
  uint64_t removed_bytes = 0;  // in the spans
  uint64_t documents_changed = 0;
  uint64_t groups = 0;         // groups of equal L-windows (two or more members)
  uint64_t tokens = 0, distinct_tokens = 0;  // token mode
  bool wide_suffix_array = false;  // 8-byte entries (corpus of 2^31 bytes or more)
  double build_seconds = 0;    // suffix array construction (wall)
  double build_cpu_seconds = 0;  // the same, CPU time of the process (std::clock: the one sorting thread)
  double scan_seconds = 0;     // the scan, spans and their sources
};

class Corpus {
 public:
  // Appends documents (UTF-8; an invalid sequence is kInvalidInput naming the document of this batch and the
  // byte offset: *bad_doc receives that document's index in `docs`).
  Status Add(const Docs& docs, size_t* bad_doc);
  uint64_t documents() const { return starts_.size(); }
  uint64_t text_bytes() const { return text_.size() - starts_.size(); }
  // Finds the spans (sorted by document, then start). The corpus stays as it was and may be searched again.
  Status Find(const FindOptions& o, std::vector<Span>* spans, FindStats* stats) const;

  const std::vector<uint8_t>& text() const { return text_; }
  const std::vector<uint64_t>& starts() const { return starts_; }

 private:
  std::vector<uint8_t> text_;      // documents, each followed by kSeparator
  std::vector<uint64_t> starts_;   // where each document starts in text_
};

// Whether libdivsufsort can be loaded (tests skip without it); *why receives the error otherwise.
bool SuffixSortAvailable(Status* why);

}  // namespace substr
}  // namespace neardup
