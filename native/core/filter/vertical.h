// Streaming Onion over vertical text (one token per line; docs/paragraphs.md, "Vertical text").
//
// Lines: a line starting with '<' is markup, any other line (even an empty one) is a token: its whole bytes,
// all TAB columns, without the '\n'. `<doc>`/`<doc ...` starts a document, `<p>`/`<p ...` a paragraph
// (tag names configurable); the line after `</doc>` / `</p>` starts a new one too, so text outside tags is
// its own document/paragraph. Other markup lines belong to the paragraph they are in.
//
// Push() takes chunks that end at a line boundary (the last chunk may end without '\n'); it classifies and
// hashes the lines on the thread pool, then walks them in order. Each finished document is decided by the
// Deduper and its lines are emitted (flags and/or formatted text); the lines of the unfinished document
// are copied and kept until it ends. Decisions are independent of the chunking and of the thread count.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "filter/onion.h"
#include "util/status.h"

namespace neardup {
namespace filter {

enum class LineKind : uint8_t { kToken = 0, kDocOpen, kDocClose, kParOpen, kParClose, kMarkup };

struct VerticalTags {
  std::string doc = "doc";
  std::string par = "p";
};

enum class OutputMode : uint8_t { kNone = 0, kMark, kStrip };

struct VerticalOutput {
  std::vector<uint8_t> flags;  // one per emitted line: 1 = removed
  std::string text;            // kMark: "F\t" + line + "\n"; kStrip: kept lines + "\n"
};

class VerticalFilter {
 public:
  VerticalFilter(Deduper* d, VerticalTags tags, OutputMode mode) : d_(d), tags_(std::move(tags)), mode_(mode) {}
  // final: no more input; the unfinished document is decided. Appends to *out.
  Status Push(const uint8_t* data, size_t len, bool final, size_t slots, const std::atomic<bool>* stop,
              VerticalOutput* out);
  uint64_t lines() const { return lines_; }
  // Expected total input bytes (0 = unknown): progress (bytes of decided documents / total) is then passed
  // to the seen-set as a sizing hint (SeenSet::SetProgress).
  void SetExpectedBytes(uint64_t total) { expected_bytes_ = total; }
  // Forgets the unfinished document and the line count (a second pass over the same input).
  void Restart() {
    ClearDocument();
    new_par_ = false;
    lines_ = done_bytes_ = input_bytes_ = 0;
  }
  size_t pending_lines() const { return lines_p_.size(); }

 private:
  // 16 bytes a line (held for the unfinished document and for each line of a Push); token hashes apart.
  struct Line {
    const uint8_t* p;
    uint32_t len;  // lines longer than 4 GiB are refused
    LineKind kind;
  };
  // The lines that start in one byte range of a Push, and the hashes of its token lines, in order.
  struct Part {
    std::vector<Line> lines;
    std::vector<uint64_t> hashes;
  };
  static_assert(sizeof(void*) != 8 || sizeof(Line) == 16, "a line record is 16 bytes on 64-bit hosts");
  void Classify(const uint8_t* p, size_t len, Line* l, std::vector<uint64_t>* hashes) const;
  void FinishDocument(VerticalOutput* out);
  void ClearDocument();
  void StartParagraph();

  Deduper* d_;
  VerticalTags tags_;
  OutputMode mode_;
  // current document (a new one starts with the next line when lines_p_ is empty)
  std::vector<Line> lines_p_;
  std::vector<uint32_t> line_par_;  // paragraph index of each line
  std::vector<uint64_t> toks_;
  std::vector<uint32_t> par_end_;
  std::vector<uint8_t> dup_;
  // Bytes of held lines: one block per Push the document spans; the first held_lines_ lines of lines_p_
  // point into them (copied once, at the end of the Push that read them).
  std::vector<std::unique_ptr<uint8_t[]>> held_;
  size_t held_lines_ = 0;
  bool new_par_ = false;  // the next line starts a paragraph (after </p>)
  uint64_t lines_ = 0;
  uint64_t expected_bytes_ = 0, done_bytes_ = 0;
  uint64_t input_bytes_ = 0;  // bytes of the Pushes before this one (error offsets)
  // scratch
  std::vector<Part> parts_;
};

}  // namespace filter
}  // namespace neardup
