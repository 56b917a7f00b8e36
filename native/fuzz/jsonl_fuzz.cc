// Fuzz target: the JSONL line parser and the batch parser (text/json_line.h, text/jsonl_batch.h), and the
// zstd stream decoder on the same bytes. The first byte picks the fields (text or meta.content, with or
// without an id). Invariants: a line is accepted only if all of it is valid UTF-8 and the extracted text is
// valid UTF-8 no longer than the line; a bad line appends nothing and has a reason; the batch parser over
// the input (one or two segments, any line limit, with or without each line's place) gives exactly the per-line
// results and places; the zstd decoder (one,
// reset between inputs) never grows its output by more than the bound it was given (plus one step) and never
// crashes on garbage; the whole-buffer decoder never returns more than its max_out.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/zstd_stream.h"
#include "text/json_line.h"
#include "text/jsonl_batch.h"
#include "text/utf8.h"

using namespace neardup;

namespace {
jsonl::FieldPath MakePath(const char* s) {
  jsonl::FieldPath p;
  if (!jsonl::ParseFieldPath(s, &p).ok()) std::abort();
  return p;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const jsonl::FieldPath kText = MakePath("text"), kNested = MakePath("meta.content"), kId = MakePath("id");
  const uint8_t k = data[0];
  const jsonl::FieldPath& text = (k & 1) ? kNested : kText;
  const jsonl::FieldPath* id = (k & 2) ? &kId : nullptr;
  const uint8_t* p = data + 1;
  const size_t n = size - 1;

  jsonl::LineParser parser(&text, id);
  std::vector<std::string> texts, ids;
  std::vector<bool> ok;
  std::vector<uint64_t> starts, lens;
  size_t at = 0;
  while (at < n) {
    const uint8_t* nl = static_cast<const uint8_t*>(std::memchr(p + at, '\n', n - at));
    const size_t end = nl ? static_cast<size_t>(nl - p) : n;
    std::string t = "x", d = "y", reason;
    jsonl::IdKind kind = jsonl::IdKind::kNone;
    const bool good = parser.Parse(p + at, end - at, &t, &d, &kind, &reason);
    if (good) {
      if (!utf8::IsValid(p + at, end - at)) std::abort();
      if (!utf8::IsValid(reinterpret_cast<const uint8_t*>(t.data()) + 1, t.size() - 1)) std::abort();
      if (t.size() - 1 > end - at) std::abort();
      if (id != nullptr && kind == jsonl::IdKind::kNone) std::abort();
    } else if (t != "x" || d != "y" || reason.empty()) {
      std::abort();
    }
    texts.push_back(good ? t.substr(1) : std::string());
    ids.push_back(good && id ? d.substr(1) : std::string());
    ok.push_back(good);
    starts.push_back(at);
    lens.push_back(end - at);
    at = end + 1;
  }

  // the batch parser: the same lines, cut into two segments at a line boundary
  const size_t cut_at = (k >> 2) % (n + 1);
  const uint8_t* cut_nl = cut_at < n ? static_cast<const uint8_t*>(std::memchr(p + cut_at, '\n', n - cut_at)) : nullptr;
  const size_t cut = cut_nl ? static_cast<size_t>(cut_nl - p) + 1 : n;
  const jsonl::Segment segs[2] = {{p, cut}, {p + cut, n - cut}};
  jsonl::ParsedBatch b;
  const size_t limit = (k & 0x80) ? 16 : SIZE_MAX;
  // bit 5: with want_lines, each line's place (first byte, length without the '\n') in the segments back to back
  const bool want_lines = (k & 0x20) != 0;
  if (!jsonl::ParseBatch(segs, 2, text, id, limit, 1, nullptr, &b, want_lines).ok()) std::abort();  // 1 slot: no thread hand-offs per input
  if (b.too_long == SIZE_MAX) {
    if (b.lines != texts.size()) std::abort();
    if (want_lines && (b.line_at.size() != b.lines || b.line_len.size() != b.lines)) std::abort();
    for (size_t i = 0; want_lines && i < b.lines; i++)
      if (b.line_at[i] != starts[i] || b.line_len[i] != lens[i]) std::abort();
    size_t r = 0;
    for (size_t i = 0; i < b.lines; i++) {
      const std::string got(reinterpret_cast<const char*>(b.text.data()) + b.offsets[i], b.offsets[i + 1] - b.offsets[i]);
      if (got != texts[i]) std::abort();
      if (!b.bad.empty() && (b.bad[i] != 0) == ok[i]) std::abort();
      if (b.bad.empty() && !ok[i]) std::abort();
      if (!ok[i] && (r >= b.reasons.size() || b.reasons[r++].first != i)) std::abort();
      if (id && std::string(reinterpret_cast<const char*>(b.ids.data()) + b.id_offsets[i], b.id_offsets[i + 1] - b.id_offsets[i]) != ids[i]) std::abort();
    }
  } else if (limit == SIZE_MAX || b.too_long >= texts.size()) {
    std::abort();
  }

  // zstd: arbitrary bytes as a stream, in two pieces, with a small output bound; for half of the inputs (bit 6
  // of the first byte: each Feed allocates a 132 KB output buffer, which under ASan is a fresh mapping and
  // dominated the run time), on one decoder reset between inputs (Reset must forget the previous input).
  if ((k & 0x40) == 0) return 0;
  static io::ZstdStream z;
  z.Reset();
  RawBuffer<uint8_t> part;
  size_t total = 0;
  for (const auto& s : segs) {
    size_t used = 0;
    for (int rounds = 0; rounds < 64; rounds++) {
      if (!z.Feed(s.data, s.size, &used, 4096, &part, "fuzz").ok()) return 0;
      if (part.size() > 4096 + (128 << 10)) std::abort();
      total += part.size();
      if (total > (64 << 20) || (used >= s.size && part.size() < 4096)) break;
    }
  }
  (void)z.Finish("fuzz");
  // the whole-buffer decoder (Parquet pages) with an output bound taken from the first byte: what it accepts
  // never exceeds the bound
  std::vector<uint8_t> whole;
  const size_t max_out = size_t(1) << (8 + (k >> 4) % 12);
  if (io::ZstdDecompressAll(p, n, &whole, "fuzz", max_out).ok() && whole.size() > max_out) std::abort();
  return 0;
}
