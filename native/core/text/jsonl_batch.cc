#include "text/jsonl_batch.h"

#include <algorithm>
#include <cstring>

#include "parallel/pool.h"

namespace neardup {
namespace jsonl {

namespace {

constexpr size_t kMinPiece = 256 << 10;

struct Piece {
  const uint8_t* data;
  size_t size;
  // output
  std::string text, ids;
  std::vector<uint32_t> lens, id_lens;
  std::vector<uint8_t> bad, kinds;
  std::vector<std::pair<uint32_t, std::string>> reasons;
  size_t first_line = 0, text_at = 0, ids_at = 0;
  size_t too_long = SIZE_MAX;  // index (in this piece) of the first line over the limit
};

void ParsePiece(Piece* pc, const FieldPath& text, const FieldPath* id, size_t max_line) {
  LineParser parser(&text, id);
  pc->text.reserve(pc->size);
  if (id != nullptr) pc->ids.reserve(std::min<size_t>(pc->size, 1 << 16));
  std::string reason;
  const uint8_t* p = pc->data;
  const uint8_t* end = p + pc->size;
  bool any_bad = false;
  while (p < end) {
    const uint8_t* nl = static_cast<const uint8_t*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const uint8_t* line_end = nl != nullptr ? nl : end;
    if (static_cast<size_t>(line_end - p) > max_line) {
      pc->too_long = pc->lens.size();
      return;
    }
    const size_t before = pc->text.size(), id_before = pc->ids.size();
    IdKind kind = IdKind::kNone;
    const bool ok = parser.Parse(p, static_cast<size_t>(line_end - p), &pc->text, &pc->ids, &kind, &reason);
    if (!ok) {
      if (!any_bad) pc->bad.assign(pc->lens.size(), 0);
      any_bad = true;
      pc->reasons.emplace_back(static_cast<uint32_t>(pc->lens.size()), reason);
    }
    if (any_bad) pc->bad.push_back(ok ? 0 : 1);
    pc->lens.push_back(static_cast<uint32_t>(pc->text.size() - before));
    if (id != nullptr) {
      pc->id_lens.push_back(static_cast<uint32_t>(pc->ids.size() - id_before));
      pc->kinds.push_back(static_cast<uint8_t>(kind));
    }
    p = nl != nullptr ? nl + 1 : end;
  }
}

}  // namespace

Status ParseBatch(const Segment* segs, size_t nsegs, const FieldPath& text, const FieldPath* id, size_t max_line,
                  size_t slots, const std::atomic<bool>* stop, ParsedBatch* out) {
  uint64_t total = 0;
  for (size_t s = 0; s < nsegs; s++) total += segs[s].size;
  if (total >= (uint64_t(1) << 32)) return Status(Code::kInvalidArgument, "a JSONL batch must hold less than 4 GiB");
  // Pieces: each segment cut after a '\n' near every `want` bytes.
  const size_t want = std::max<size_t>(kMinPiece, static_cast<size_t>(total / std::max<size_t>(1, slots * 4)) + 1);
  std::vector<Piece> pieces;
  for (size_t s = 0; s < nsegs; s++) {
    const uint8_t* p = segs[s].data;
    const uint8_t* end = p + segs[s].size;
    while (p < end) {
      const uint8_t* cut = end;
      if (static_cast<size_t>(end - p) > want) {
        const uint8_t* nl = static_cast<const uint8_t*>(std::memchr(p + want, '\n', static_cast<size_t>(end - p - want)));
        if (nl != nullptr) cut = nl + 1;
      }
      pieces.push_back(Piece{p, static_cast<size_t>(cut - p), {}, {}, {}, {}, {}, {}, {}});
      p = cut;
    }
  }
  parallel::ParallelFor(
      pieces.size(), 1, slots, [&](size_t b, size_t e, size_t) {
        for (size_t k = b; k < e; k++) ParsePiece(&pieces[k], text, id, max_line);
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "the JSONL batch was cancelled");

  size_t lines = 0, text_bytes = 0, id_bytes = 0;
  bool any_bad = false;
  out->too_long = SIZE_MAX;
  for (Piece& pc : pieces) {
    if (pc.too_long != SIZE_MAX) {
      out->too_long = lines + pc.too_long;
      out->lines = 0;
      return Status::Ok();
    }
    pc.first_line = lines;
    pc.text_at = text_bytes;
    pc.ids_at = id_bytes;
    lines += pc.lens.size();
    text_bytes += pc.text.size();
    id_bytes += pc.ids.size();
    any_bad = any_bad || !pc.reasons.empty();
  }
  out->lines = lines;
  out->text.Allocate(text_bytes);
  out->offsets.assign(lines + 1, 0);
  out->bad.assign(any_bad ? lines : 0, 0);
  out->reasons.clear();
  if (id != nullptr) {
    out->ids.Allocate(id_bytes);
    out->id_offsets.assign(lines + 1, 0);
    out->id_kinds.assign(lines, 0);
  }
  parallel::ParallelFor(pieces.size(), 1, slots, [&](size_t b, size_t e, size_t) {
    for (size_t k = b; k < e; k++) {
      const Piece& pc = pieces[k];
      if (!pc.text.empty()) std::memcpy(out->text.data() + pc.text_at, pc.text.data(), pc.text.size());
      uint32_t at = static_cast<uint32_t>(pc.text_at);
      for (size_t i = 0; i < pc.lens.size(); i++) {
        at += pc.lens[i];
        out->offsets[pc.first_line + i + 1] = at;
      }
      if (!pc.bad.empty()) std::memcpy(out->bad.data() + pc.first_line, pc.bad.data(), pc.bad.size());
      if (id != nullptr) {
        if (!pc.ids.empty()) std::memcpy(out->ids.data() + pc.ids_at, pc.ids.data(), pc.ids.size());
        uint32_t ia = static_cast<uint32_t>(pc.ids_at);
        for (size_t i = 0; i < pc.id_lens.size(); i++) {
          ia += pc.id_lens[i];
          out->id_offsets[pc.first_line + i + 1] = ia;
        }
        if (!pc.kinds.empty()) std::memcpy(out->id_kinds.data() + pc.first_line, pc.kinds.data(), pc.kinds.size());
      }
    }
  });
  for (Piece& pc : pieces)
    for (auto& r : pc.reasons) out->reasons.emplace_back(static_cast<uint32_t>(pc.first_line + r.first), std::move(r.second));
  return Status::Ok();
}

}  // namespace jsonl
}  // namespace neardup
