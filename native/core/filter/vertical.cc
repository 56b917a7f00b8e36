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

void VerticalFilter::Classify(const uint8_t* p, size_t len, Line* l) const {
  l->p = p;
  l->len = static_cast<uint32_t>(len);
  l->hash = 0;
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
  l->hash = TokenHash(p, len);
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
  lines_p_.clear();
  line_par_.clear();
  toks_.clear();
  par_end_.clear();
  in_doc_ = false;
}

Status VerticalFilter::Push(const uint8_t* data, size_t len, bool final, size_t slots,
                            const std::atomic<bool>* stop, VerticalOutput* out) {
  // 1. Split into lines and classify/hash them in parallel: part c covers the lines that start in its
  //    byte range.
  const size_t kPart = 1 << 18;
  const size_t nparts = len == 0 ? 0 : (len + kPart - 1) / kPart;
  if (parts_.size() < nparts) parts_.resize(nparts);
  bool too_long = false;
  parallel::ParallelFor(
      nparts, 1, slots,
      [&](size_t b, size_t e, size_t) {
        for (size_t c = b; c < e; c++) {
          std::vector<Line>& v = parts_[c];
          v.clear();
          size_t at = c * kPart;
          const size_t stop_at = std::min(len, (c + 1) * kPart);
          if (at > 0) {  // skip to the first line starting in this range
            if (data[at - 1] != '\n') {
              const void* nl = std::memchr(data + at, '\n', len - at);
              if (!nl) continue;
              at = static_cast<const uint8_t*>(nl) - data + 1;
            }
          }
          while (at < stop_at) {
            const void* nl = std::memchr(data + at, '\n', len - at);
            const size_t end = nl ? static_cast<const uint8_t*>(nl) - data : len;
            if (end - at > UINT32_MAX) {
              too_long = true;
              break;
            }
            Line l;
            Classify(data + at, end - at, &l);
            v.push_back(l);
            at = end + 1;
          }
        }
      },
      stop);
  if (too_long) return Status(Code::kInvalidInput, "a line longer than 4 GiB");
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");

  // 2. Structure and decisions, in order.
  for (size_t c = 0; c < nparts; c++) {
    for (const Line& l : parts_[c]) {
      lines_++;
      if (l.kind == LineKind::kDocOpen) {
        FinishDocument(out);  // text before <doc> without </doc> is its own document
        new_doc_ = true;
      }
      if (l.kind == LineKind::kParOpen) new_par_ = true;
      if (new_doc_ || !in_doc_) {
        if (!lines_p_.empty()) FinishDocument(out);
        in_doc_ = true;
        new_doc_ = false;
        new_par_ = true;
      }
      if (new_par_) {
        StartParagraph();
        new_par_ = false;
      }
      line_par_.push_back(static_cast<uint32_t>(par_end_.size() - 1));
      lines_p_.push_back(l);
      if (l.kind == LineKind::kToken) {
        toks_.push_back(l.hash);
        par_end_.back() = static_cast<uint32_t>(toks_.size());
      } else if (l.kind == LineKind::kParClose) {
        new_par_ = true;
      } else if (l.kind == LineKind::kDocClose) {
        FinishDocument(out);
        new_doc_ = true;
      }
      if (toks_.size() >= UINT32_MAX - 1) return Status(Code::kInvalidInput, "a document with more than 4 G tokens");
    }
  }
  if (final) FinishDocument(out);

  // 3. Keep the unfinished document's bytes: they may point into `data`, which the caller reuses.
  if (!lines_p_.empty()) {
    size_t total = 0;
    for (const Line& l : lines_p_) total += l.len;
    std::string held;
    held.reserve(total);
    for (const Line& l : lines_p_) held.append(reinterpret_cast<const char*>(l.p), l.len);
    held_.swap(held);
    size_t at = 0;
    for (Line& l : lines_p_) {
      l.p = reinterpret_cast<const uint8_t*>(held_.data()) + at;
      at += l.len;
    }
  } else {
    held_.clear();
  }
  return Status::Ok();
}

}  // namespace filter
}  // namespace neardup
