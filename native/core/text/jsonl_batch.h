// Many JSONL lines -> packed documents, parsed in parallel on the process-wide pool.
//
// The input is one or more segments of whole lines ('\n'-separated; a segment's last line may lack its '\n':
// the final line of a file). Line i of the segments, in order, is document i of the result: its text
// field's UTF-8 (empty for a bad line), 1 in `bad` and a reason for a bad line (LineParser's rules), and,
// with an id path, its id. Pieces of at least 256 KiB are parsed on the pool (the calling thread helps), each
// into its own scratch, then copied into one packed buffer.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "text/json_line.h"
#include "util/raw_buffer.h"
#include "util/status.h"

namespace neardup {
namespace jsonl {

struct Segment {
  const uint8_t* data;
  size_t size;
};

struct ParsedBatch {
  size_t lines = 0;
  size_t too_long = SIZE_MAX;        // the first line longer than max_line (SIZE_MAX: none); nothing else is set then
  RawBuffer<uint8_t> text;           // the documents' UTF-8, back to back
  std::vector<uint32_t> offsets;     // lines + 1: document i is text[offsets[i] .. offsets[i + 1])
  std::vector<uint8_t> bad;          // lines: 1 for a bad line (empty when no line is bad)
  std::vector<std::pair<uint32_t, std::string>> reasons;  // (line, reason) of each bad line, ascending
  // with an id path:
  RawBuffer<uint8_t> ids;            // each line's id (a string's UTF-8, an integer's digits), back to back
  std::vector<uint32_t> id_offsets;  // lines + 1
  std::vector<uint8_t> id_kinds;     // lines: IdKind (kNone for a bad line)
  // with `want_lines`: where each line is in the segments taken back to back (its first byte, and its length without
  // the '\n'): the staged dedup finds a line of a plain file again by these (docs/FORMAT.md section 13)
  std::vector<uint64_t> line_at;
  std::vector<uint32_t> line_len;
};

// The segments must hold less than 4 GiB in all. A line longer than `max_line` bytes sets out->too_long (an
// error for the caller, not a bad line) and stops there. `id` may be null. `slots`: parallel::MaxSlots() (1 runs on
// the calling thread only). Cancelled when `stop` is raised between pieces.
Status ParseBatch(const Segment* segs, size_t nsegs, const FieldPath& text, const FieldPath* id, size_t max_line,
                  size_t slots, const std::atomic<bool>* stop, ParsedBatch* out, bool want_lines = false);

}  // namespace jsonl
}  // namespace neardup
