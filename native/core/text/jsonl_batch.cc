#include "text/jsonl_batch.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

#include "parallel/pool.h"

namespace neardup {
namespace jsonl {

namespace {

constexpr size_t kMinPiece = 256 << 10;

// A piece's output. Kept in a process-wide pool between calls (cleared, capacity kept), so the scratch pages
// are touched once, not faulted in again for every batch: the pool holds about one batch of text.
struct PieceOut {
  std::string text, ids;
  std::vector<uint32_t> lens, id_lens, line_at, line_len;
  std::vector<uint8_t> bad, kinds;
  std::vector<std::pair<uint32_t, std::string>> reasons;
  void Clear() {
    text.clear();
    ids.clear();
    lens.clear();
    id_lens.clear();
    line_at.clear();
    line_len.clear();
    bad.clear();
    kinds.clear();
    reasons.clear();
  }
};

std::mutex pool_mu;
std::vector<std::unique_ptr<PieceOut>> pool;

std::unique_ptr<PieceOut> TakeScratch() {
  {
    std::lock_guard<std::mutex> lock(pool_mu);
    if (!pool.empty()) {
      std::unique_ptr<PieceOut> p = std::move(pool.back());
      pool.pop_back();
      p->Clear();
      return p;
    }
  }
  return std::make_unique<PieceOut>();
}

void ReturnScratch(std::unique_ptr<PieceOut> p) {
  if (p->text.capacity() > (size_t(64) << 20)) return;  // a batch with one huge line: not worth keeping
  std::lock_guard<std::mutex> lock(pool_mu);
  if (pool.size() < 256) pool.push_back(std::move(p));
}

struct Piece {
  const uint8_t* data;
  size_t size;
  std::unique_ptr<PieceOut> out;
  uint64_t base = 0;  // where the piece starts in the segments taken back to back
  size_t first_line = 0, text_at = 0, ids_at = 0;
  size_t too_long = SIZE_MAX;  // index (in this piece) of the first line over the limit
};

void ParsePiece(Piece* piece, const FieldPath& text, const FieldPath* id, size_t max_line, bool lines) {
  LineParser parser(&text, id);
  piece->out = TakeScratch();
  PieceOut* pc = piece->out.get();
  pc->text.reserve(piece->size);
  if (id != nullptr) pc->ids.reserve(std::min<size_t>(piece->size, 1 << 16));
  std::string reason;
  const uint8_t* p = piece->data;
  const uint8_t* end = p + piece->size;
  bool any_bad = false;
  while (p < end) {
    const uint8_t* nl = static_cast<const uint8_t*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const uint8_t* line_end = nl != nullptr ? nl : end;
    if (static_cast<size_t>(line_end - p) > max_line) {
      piece->too_long = pc->lens.size();
      return;
    }
    if (lines) {
      pc->line_at.push_back(static_cast<uint32_t>(p - piece->data));
      pc->line_len.push_back(static_cast<uint32_t>(line_end - p));
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
                  size_t slots, const std::atomic<bool>* stop, ParsedBatch* out, bool want_lines) {
  uint64_t total = 0;
  for (size_t s = 0; s < nsegs; s++) total += segs[s].size;
  if (total >= (uint64_t(1) << 32)) return Status(Code::kInvalidArgument, "a JSONL batch must hold less than 4 GiB");
  // Pieces: each segment cut after a '\n' near every `want` bytes.
  const size_t want = std::max<size_t>(kMinPiece, static_cast<size_t>(total / std::max<size_t>(1, slots * 4)) + 1);
  std::vector<Piece> pieces;
  uint64_t seg_base = 0;
  for (size_t s = 0; s < nsegs; s++) {
    const uint8_t* p = segs[s].data;
    const uint8_t* end = p + segs[s].size;
    while (p < end) {
      const uint8_t* cut = end;
      if (static_cast<size_t>(end - p) > want) {
        const uint8_t* nl = static_cast<const uint8_t*>(std::memchr(p + want, '\n', static_cast<size_t>(end - p - want)));
        if (nl != nullptr) cut = nl + 1;
      }
      pieces.push_back(Piece{p, static_cast<size_t>(cut - p), nullptr});
      pieces.back().base = seg_base + static_cast<uint64_t>(p - segs[s].data);
      p = cut;
    }
    seg_base += segs[s].size;
  }
  parallel::ParallelFor(
      pieces.size(), 1, slots, [&](size_t b, size_t e, size_t) {
        for (size_t k = b; k < e; k++) ParsePiece(&pieces[k], text, id, max_line, want_lines);
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
      break;
    }
    pc.first_line = lines;
    pc.text_at = text_bytes;
    pc.ids_at = id_bytes;
    lines += pc.out->lens.size();
    text_bytes += pc.out->text.size();
    id_bytes += pc.out->ids.size();
    any_bad = any_bad || !pc.out->reasons.empty();
  }
  if (out->too_long == SIZE_MAX) {
    out->lines = lines;
    out->text.Allocate(text_bytes);
    out->offsets.assign(lines + 1, 0);
    out->bad.assign(any_bad ? lines : 0, 0);
    out->reasons.clear();
    out->line_at.assign(want_lines ? lines : 0, 0);
    out->line_len.assign(want_lines ? lines : 0, 0);
    if (id != nullptr) {
      out->ids.Allocate(id_bytes);
      out->id_offsets.assign(lines + 1, 0);
      out->id_kinds.assign(lines, 0);
    }
    parallel::ParallelFor(pieces.size(), 1, slots, [&](size_t b, size_t e, size_t) {
      for (size_t k = b; k < e; k++) {
        const Piece& pc = pieces[k];
        const PieceOut& po = *pc.out;
        if (!po.text.empty()) std::memcpy(out->text.data() + pc.text_at, po.text.data(), po.text.size());
        uint32_t at = static_cast<uint32_t>(pc.text_at);
        for (size_t i = 0; i < po.lens.size(); i++) {
          at += po.lens[i];
          out->offsets[pc.first_line + i + 1] = at;
        }
        if (!po.bad.empty()) std::memcpy(out->bad.data() + pc.first_line, po.bad.data(), po.bad.size());
        for (size_t i = 0; i < po.line_at.size(); i++) {
          out->line_at[pc.first_line + i] = pc.base + po.line_at[i];
          out->line_len[pc.first_line + i] = po.line_len[i];
        }
        if (id != nullptr) {
          if (!po.ids.empty()) std::memcpy(out->ids.data() + pc.ids_at, po.ids.data(), po.ids.size());
          uint32_t ia = static_cast<uint32_t>(pc.ids_at);
          for (size_t i = 0; i < po.id_lens.size(); i++) {
            ia += po.id_lens[i];
            out->id_offsets[pc.first_line + i + 1] = ia;
          }
          if (!po.kinds.empty()) std::memcpy(out->id_kinds.data() + pc.first_line, po.kinds.data(), po.kinds.size());
        }
      }
    });
    for (Piece& pc : pieces)
      for (auto& r : pc.out->reasons) out->reasons.emplace_back(static_cast<uint32_t>(pc.first_line + r.first), std::move(r.second));
  }
  for (Piece& pc : pieces)
    if (pc.out) ReturnScratch(std::move(pc.out));
  return Status::Ok();
}

}  // namespace jsonl
}  // namespace neardup
