#include "filter/vertical.h"

#include <cstring>

#include "parallel/pool.h"

namespace neardup {
namespace filter {

namespace {
bool StartsWith(const uint8_t* p, size_t len, const std::string& a, const std::string& b) {
  if (len < a.size() + b.size()) return false;
  return std::memcmp(p, a.data(), a.size()) == 0 && std::memcmp(p + a.size(), b.data(), b.size()) == 0;
}
bool OpenTag(const uint8_t* p, size_t len, const std::string& name) {
  // "<name>" or "<name " (attributes)
  if (len < name.size() + 2 || p[0] != '<' || std::memcmp(p + 1, name.data(), name.size()) != 0) return false;
  const uint8_t c = p[name.size() + 1];
  return c == '>' || c == ' ';
}
}  // namespace

void VerticalFilter::Classify(const uint8_t* p, size_t len, Line* l, std::vector<uint64_t>* hashes) const {
  l->p = p;
  l->len = static_cast<uint32_t>(len);
  if (len > 0 && p[0] == '<') {
    if (OpenTag(p, len, tags_.doc))
      l->kind = LineKind::kDocOpen;
    else if (OpenTag(p, len, tags_.par))
      l->kind = LineKind::kParOpen;
    else if (StartsWith(p, len, "</", tags_.doc) && len >= tags_.doc.size() + 3 && p[tags_.doc.size() + 2] == '>')
      l->kind = LineKind::kDocClose;
    else if (StartsWith(p, len, "</", tags_.par) && len >= tags_.par.size() + 3 && p[tags_.par.size() + 2] == '>')
      l->kind = LineKind::kParClose;
    else
      l->kind = LineKind::kMarkup;
    return;
  }
  l->kind = LineKind::kToken;
  hashes->push_back(d_->HashToken(p, len));
}

void VerticalFilter::StartParagraph() { par_end_.push_back(static_cast<uint32_t>(toks_.size())); }

void VerticalFilter::FinishDocument(VerticalOutput* out) {
  if (lines_p_.empty()) return;
  const size_t npar = par_end_.size();
  dup_.assign(npar, 0);
  for (const Line& l : lines_p_) done_bytes_ += l.len + 1;
  if (expected_bytes_ > 0) d_->seen().SetProgress(done_bytes_, expected_bytes_);
  const bool removed = d_->Document(toks_.data(), toks_.size(), par_end_.data(), npar, dup_.data());
  for (size_t i = 0; i < lines_p_.size(); i++) {
    const Line& l = lines_p_[i];
    const bool doc_tag = l.kind == LineKind::kDocOpen || l.kind == LineKind::kDocClose;
    const uint8_t f = removed ? 1 : doc_tag ? 0 : dup_[line_par_[i]];
    out->flags.push_back(f);
    if (mode_ == OutputMode::kMark) {
      out->text.push_back(f ? '1' : '0');
      out->text.push_back('\t');
      out->text.append(reinterpret_cast<const char*>(l.p), l.len);
      out->text.push_back('\n');
    } else if (mode_ == OutputMode::kStrip && !f) {
      out->text.append(reinterpret_cast<const char*>(l.p), l.len);
      out->text.push_back('\n');
    }
  }
  ClearDocument();
}

void VerticalFilter::ClearDocument() {
  lines_p_.clear();
  line_par_.clear();
  toks_.clear();
  par_end_.clear();
  held_.clear();
  held_lines_ = 0;
}

Status VerticalFilter::Push(const uint8_t* data, size_t len, bool final, size_t slots,
                            const std::atomic<bool>* stop, VerticalOutput* out) {
  // 1. Split into lines and classify/hash them in parallel: part c covers the lines that start in its
  //    byte range.
  const size_t kPart = 1 << 16;  // 4 parts for a 256 KiB piece (streamVertical)
  const size_t nparts = len == 0 ? 0 : (len + kPart - 1) / kPart;
  if (parts_.size() < nparts) parts_.resize(nparts);
  std::atomic<uint64_t> long_line{UINT64_MAX};  // offset in `data` of the first line longer than 4 GiB
  parallel::ParallelFor(
      nparts, 1, slots,
      [&](size_t b, size_t e, size_t) {
        for (size_t c = b; c < e; c++) {
          std::vector<Line>& v = parts_[c].lines;
          std::vector<uint64_t>& h = parts_[c].hashes;
          v.clear();
          h.clear();
          size_t at = c * kPart;
          const size_t stop_at = std::min(len, (c + 1) * kPart);
          if (at > 0 && data[at - 1] != '\n') {  // skip to the first line starting in this range, if any
            // Search this range only: inside a long line every part would otherwise scan to its end.
            const void* nl = std::memchr(data + at, '\n', stop_at - at);
            if (!nl) continue;
            at = static_cast<const uint8_t*>(nl) - data + 1;
          }
          while (at < stop_at) {
            const void* nl = std::memchr(data + at, '\n', len - at);
            const size_t end = nl ? static_cast<const uint8_t*>(nl) - data : len;
            if (end - at > UINT32_MAX) {
              uint64_t cur = long_line.load();
              while (at < cur && !long_line.compare_exchange_weak(cur, at)) {
              }
              break;
            }
            Line l;
            Classify(data + at, end - at, &l, &h);
            v.push_back(l);
            at = end + 1;
          }
        }
      },
      stop);
  if (long_line.load() != UINT64_MAX)
    return Status(Code::kInvalidInput, "the line at byte offset " + std::to_string(input_bytes_ + long_line.load()) +
                                           " is longer than 4 GiB");
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  input_bytes_ += len;

  // 2. Structure and decisions, in order.
  for (size_t c = 0; c < nparts; c++) {
    const uint64_t* hash = parts_[c].hashes.data();
    for (const Line& l : parts_[c].lines) {
      lines_++;
      if (l.kind == LineKind::kDocOpen) FinishDocument(out);  // text before <doc> without </doc> is its own document
      if (lines_p_.empty() || new_par_ || l.kind == LineKind::kParOpen) {
        StartParagraph();
        new_par_ = false;
      }
      line_par_.push_back(static_cast<uint32_t>(par_end_.size() - 1));
      lines_p_.push_back(l);
      if (l.kind == LineKind::kToken) {
        toks_.push_back(*hash++);
        par_end_.back() = static_cast<uint32_t>(toks_.size());
      } else if (l.kind == LineKind::kParClose) {
        new_par_ = true;
      } else if (l.kind == LineKind::kDocClose) {
        FinishDocument(out);
      }
      if (toks_.size() >= UINT32_MAX - 1) {
        ClearDocument();  // its lines may point into `data`: nothing of it is kept
        return Status(Code::kInvalidInput,
                      "the document that reaches line " + std::to_string(lines_) + " has more than 4 G tokens");
      }
    }
  }
  if (final) FinishDocument(out);

  // 3. Keep the bytes of the unfinished document's lines read by this call: they point into `data`, which
  //    the caller reuses. Lines held by earlier calls stay where they are.
  if (held_lines_ < lines_p_.size()) {
    size_t total = 0;
    for (size_t i = held_lines_; i < lines_p_.size(); i++) total += lines_p_[i].len;
    std::unique_ptr<uint8_t[]> block(new uint8_t[total + 1]);
    uint8_t* at = block.get();
    for (size_t i = held_lines_; i < lines_p_.size(); i++) {
      Line& l = lines_p_[i];
      std::memcpy(at, l.p, l.len);
      l.p = at;
      at += l.len;
    }
    held_.push_back(std::move(block));
    held_lines_ = lines_p_.size();
  }
  return Status::Ok();
}

}  // namespace filter
}  // namespace neardup
