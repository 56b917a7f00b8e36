#include "substr/repeats.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "parallel/pool.h"
#include "substr/index_file.h"
#include "substr/suffix_array.h"
#include "text/normalize.h"
#include "text/utf8.h"
#include "util/raw_buffer.h"

namespace neardup {
namespace substr {
namespace {

// The offset of the first invalid UTF-8 sequence in p[0, n), or n when there is none.
size_t FirstInvalidUtf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if ((w & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    uint32_t cp;
    bool valid;
    const size_t k = utf8::Decode(p + i, p + n, &cp, &valid);
    if (!valid) return i;
    i += k;
  }
  return n;
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline bool Bit(const uint64_t* w, uint64_t i) { return (w[i >> 6] >> (i & 63)) & 1; }

inline int Ctz(uint64_t v) {
#if defined(_MSC_VER) && !defined(__clang__)
  unsigned long r;
  _BitScanForward64(&r, v);
  return int(r);
#else
  return __builtin_ctzll(v);
#endif
}

// The units the suffix array is built over: the text itself (bytes, width 1), or one fixed-width big-endian
// code per token (width 3 or 4; every document ends with a separator code of all 0xFF bytes). A window is
// `length` units; only suffixes at unit boundaries start windows.
struct Units {
  const uint8_t* data = nullptr;
  uint64_t n = 0;          // bytes
  uint32_t width = 1;      // bytes per unit
  uint32_t length = 0;     // L, units
  uint64_t window() const { return uint64_t(width) * length; }
  const std::vector<uint64_t>* starts = nullptr;  // the documents' starts (bytes), for an index written
};

// The scan over one suffix array (entries of type Idx).
template <typename Idx>
class Scan {
 public:
  Scan(const Units& u, const Idx* sa) : u_(u), t_(u.data), n_(u.n), sa_(sa), l_(u.window()), words_((u.n + 64) / 64) {}

  // cont bit i (i >= 1): suffixes sa[i-1] and sa[i] start with the same window of bytes (bytes: and no
  // separator in it; tokens: any alignment, so that equal windows stay one run; Window() checks a member).
  void Adjacent(const std::atomic<bool>* stop) {
    cont_.assign(words_ + 1, 0);
    parallel::ParallelFor(words_, 1024, parallel::MaxSlots(), [&](size_t b, size_t e, size_t) {
      for (size_t w = b; w < e; w++) {
        uint64_t bits = 0;
        const uint64_t first = uint64_t(w) * 64;
        for (uint64_t j = 0; j < 64; j++) {
          const uint64_t i = first + j;
          if (i == 0) continue;
          if (i >= n_) break;
          // the text at suffix-array entries is read in random order: fetch a few entries ahead
          if (i + kAhead < n_) Prefetch(t_ + sa_[i + kAhead]);
          if (SameWindow(uint64_t(sa_[i - 1]), uint64_t(sa_[i]))) bits |= uint64_t(1) << j;
        }
        cont_[w] = bits;
      }
    }, stop);
  }

  // fn(begin, end, slot) for every run of equal windows (suffix-array entries [begin, end), two or more),
  // spread over the pool.
  template <typename Fn>
  void Groups(const std::atomic<bool>* stop, const Fn& fn) const {
    parallel::ParallelFor(words_, 1024, parallel::MaxSlots(), [&](size_t b, size_t e, size_t slot) {
      for (size_t w = b; w < e; w++) {
        // entry i starts a run when its cont bit is 0 and entry i+1's is 1
        uint64_t g = ~cont_[w] & ((cont_[w] >> 1) | (cont_[w + 1] << 63));
        while (g != 0) {
          const int j = Ctz(g);
          g &= g - 1;
          const uint64_t s = uint64_t(w) * 64 + uint64_t(j);
          if (s + 1 >= n_) continue;
          uint64_t end = s + 1;
          while (end < n_ && Bit(cont_.data(), end)) end++;
          fn(s, end, slot);
        }
      }
    }, stop);
  }

  Idx at(uint64_t i) const { return sa_[i]; }

  // Whether the window at unit boundary p holds no separator (bytes: Adjacent checked it already).
  bool Window(uint64_t p) const {
    if (u_.width == 1) return true;
    for (uint64_t k = 0; k < u_.length; k++) {
      const uint8_t* c = t_ + p + k * u_.width;
      bool sep = true;
      for (uint32_t b = 0; b < u_.width; b++) sep = sep && c[b] == kSeparator;
      if (sep) return false;
    }
    return true;
  }

 private:
  static constexpr uint64_t kAhead = 16;
  static void Prefetch(const uint8_t* p) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
  }

  bool SameWindow(uint64_t p, uint64_t q) const {
    if (p + l_ > n_ || q + l_ > n_) return false;
    if (std::memcmp(t_ + p, t_ + q, l_) != 0) return false;
    return u_.width != 1 || std::memchr(t_ + p, kSeparator, l_) == nullptr;
  }

  Units u_;
  const uint8_t* t_;
  uint64_t n_;
  const Idx* sa_;
  uint64_t l_;
  uint64_t words_;
  std::vector<uint64_t> cont_;
};

// A removed run of units [begin, end) and where the window at its start occurs earliest elsewhere (unit index).
struct RawSpan {
  uint64_t begin, end, source;
};

// The suffix array of the units, the groups of equal windows, the marks and their union: the removed runs,
// in order, with their sources.
template <typename Idx>
Status RunsWith(const Units& u, const FindOptions& o, std::vector<RawSpan>* runs, FindStats* st) {
  const uint64_t n = u.n;
  const uint32_t w = u.width;
  const auto cancelled = [&] { return o.stop != nullptr && o.stop->load(); };

  auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  RawBuffer<Idx> sa;
  sa.Allocate(n);
  Status s = sizeof(Idx) == 4 ? BuildSuffixArray32(u.data, reinterpret_cast<int32_t*>(sa.data()), n)
                              : BuildSuffixArray64(u.data, reinterpret_cast<int64_t*>(sa.data()), n);
  if (!s.ok()) return s;
  st->build_seconds = Since(t0);
  st->build_cpu_seconds = double(std::clock() - c0) / CLOCKS_PER_SEC;
  if (cancelled()) return Status(Code::kCancelled, "cancelled");
  if (!o.index_path.empty()) {
    s = WriteIndex(o.index_path, u.data, n, *u.starts, sizeof(Idx) == 4 ? reinterpret_cast<const int32_t*>(sa.data()) : nullptr,
                   sizeof(Idx) == 8 ? reinterpret_cast<const int64_t*>(sa.data()) : nullptr, o.stop);
    if (!s.ok()) return s;
  }

  t0 = std::chrono::steady_clock::now();
  Scan<Idx> scan(u, sa.data());
  scan.Adjacent(o.stop);
  if (cancelled()) return Status(Code::kCancelled, "cancelled");

  // Marks, one bit per unit: set when the window at that unit is removed (keep-first: every member of a
  // group but its smallest position; drop-all: every member). Members are the suffixes at unit boundaries.
  const uint64_t units = n / w;
  const uint64_t words = (units + 64) / 64;
  std::unique_ptr<std::atomic<uint64_t>[]> marks(new std::atomic<uint64_t>[words]);
  for (uint64_t k = 0; k < words; k++) marks[k].store(0, std::memory_order_relaxed);
  const size_t slots = parallel::MaxSlots();
  std::vector<uint64_t> groups(slots, 0);
  // the group's members (unit indexes) through fn; false when the run is no group (fewer than two windows)
  const auto members = [&](uint64_t b, uint64_t e, uint64_t* m1, uint64_t* m2) {
    uint64_t count = 0;
    *m1 = *m2 = UINT64_MAX;
    bool checked = false;
    for (uint64_t i = b; i < e; i++) {
      const uint64_t p = uint64_t(scan.at(i));
      if (p % w != 0) continue;
      if (!checked) {
        if (!scan.Window(p)) return false;  // every aligned member holds the same bytes
        checked = true;
      }
      const uint64_t q = p / w;
      if (q < *m1) {
        *m2 = *m1;
        *m1 = q;
      } else if (q < *m2) {
        *m2 = q;
      }
      count++;
    }
    return count >= 2;
  };
  scan.Groups(o.stop, [&](uint64_t b, uint64_t e, size_t slot) {
    uint64_t m1, m2;
    if (!members(b, e, &m1, &m2)) return;
    groups[slot]++;
    for (uint64_t i = b; i < e; i++) {
      const uint64_t p = uint64_t(scan.at(i));
      if (p % w != 0) continue;
      const uint64_t q = p / w;
      if (q == m1 && !o.drop_all) continue;
      marks[q >> 6].fetch_or(uint64_t(1) << (q & 63), std::memory_order_relaxed);
    }
  });
  if (cancelled()) return Status(Code::kCancelled, "cancelled");
  for (uint64_t g : groups) st->groups += g;

  // Runs: the union of the marked windows, in order; the marks become the runs' starts.
  const uint64_t L = u.length;
  runs->clear();
  {
    bool open = false;
    uint64_t begin = 0, end = 0;
    for (uint64_t k = 0; k < words; k++) {
      uint64_t bits = marks[k].load(std::memory_order_relaxed);
      uint64_t heads = 0;
      while (bits != 0) {
        const int j = Ctz(bits);
        bits &= bits - 1;
        const uint64_t q = k * 64 + uint64_t(j);
        if (!open || q > end) {  // windows that touch make one run
          if (open) runs->push_back({begin, end, 0});
          open = true;
          begin = q;
          end = q + L;
          heads |= uint64_t(1) << j;
        } else {
          end = std::max<uint64_t>(end, q + L);
        }
      }
      marks[k].store(heads, std::memory_order_relaxed);
    }
    if (open) runs->push_back({begin, end, 0});
  }

  // Where each run's first window occurs: the smallest other member of its group.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> found(slots);
  const auto head = [&](uint64_t q) { return (marks[q >> 6].load(std::memory_order_relaxed) >> (q & 63)) & 1; };
  scan.Groups(o.stop, [&](uint64_t b, uint64_t e, size_t slot) {
    uint64_t m1, m2;
    if (!members(b, e, &m1, &m2)) return;
    for (uint64_t i = b; i < e; i++) {
      const uint64_t p = uint64_t(scan.at(i));
      if (p % w != 0) continue;
      const uint64_t q = p / w;
      if (head(q)) found[slot].emplace_back(q, q == m1 ? m2 : m1);
    }
  });
  if (cancelled()) return Status(Code::kCancelled, "cancelled");
  sa = RawBuffer<Idx>();
  marks.reset();
  std::vector<std::pair<uint64_t, uint64_t>> sources;
  for (auto& f : found) {
    sources.insert(sources.end(), f.begin(), f.end());
    std::vector<std::pair<uint64_t, uint64_t>>().swap(f);
  }
  std::sort(sources.begin(), sources.end());
  if (sources.size() != runs->size()) return Status(Code::kInternal, "substrings: spans and their sources disagree");
  for (size_t k = 0; k < runs->size(); k++) {
    if (sources[k].first != (*runs)[k].begin) return Status(Code::kInternal, "substrings: a span without its source");
    (*runs)[k].source = sources[k].second;
  }
  st->scan_seconds = Since(t0);
  return Status::Ok();
}

Status Runs(const Units& u, const FindOptions& o, std::vector<RawSpan>* runs, FindStats* st) {
  if (u.n < (uint64_t(1) << 31)) return RunsWith<int32_t>(u, o, runs, st);
  st->wide_suffix_array = true;
  return RunsWith<int64_t>(u, o, runs, st);
}

uint64_t DocOf(const std::vector<uint64_t>& starts, uint64_t p) {
  return uint64_t(std::upper_bound(starts.begin(), starts.end(), p) - starts.begin()) - 1;
}

// Byte mode: the runs are byte positions of the text; each span is shrunk to whole code points (a byte
// 10xxxxxx continues a code point) and its source shifted as its start was.
Status FindBytes(const std::vector<uint8_t>& text, const std::vector<uint64_t>& starts, const FindOptions& o,
                 std::vector<Span>* spans, FindStats* st) {
  Units u;
  u.data = text.data();
  u.n = text.size();
  u.width = 1;
  u.length = o.length;
  u.starts = &starts;
  std::vector<RawSpan> runs;
  Status s = Runs(u, o, &runs, st);
  if (!s.ok()) return s;
  const uint8_t* t = text.data();
  spans->reserve(runs.size());
  for (const RawSpan& r : runs) {
    uint64_t b = r.begin, e = r.end;
    while (b < e && (t[b] & 0xC0) == 0x80) b++;
    while (e > b && (t[e] & 0xC0) == 0x80) e--;
    if (b == e) continue;
    Span sp;
    sp.doc = DocOf(starts, b);
    sp.start = b - starts[sp.doc];
    sp.end = e - starts[sp.doc];
    const uint64_t f = r.source + (b - r.begin);
    sp.first_doc = DocOf(starts, f);
    sp.first_offset = f - starts[sp.first_doc];
    spans->push_back(sp);
  }
  return Status::Ok();
}

// The tokens of a document: maximal runs of code points that are not whitespace (Python's str.split()),
// as [start, end) byte offsets; fn(start, end) for each.
template <typename Fn>
void Tokens(const uint8_t* p, uint64_t n, const Fn& fn) {
  uint64_t i = 0, start = 0;
  bool in = false;
  while (i < n) {
    uint32_t cp = p[i];
    size_t k = 1;
    if (cp >= 0x80) {
      bool valid;
      k = utf8::Decode(p + i, p + n, &cp, &valid);
    }
    const bool space = text::IsSpace(cp);
    if (space && in) {
      fn(start, i);
      in = false;
    } else if (!space && !in) {
      start = i;
      in = true;
    }
    i += k;
  }
  if (in) fn(start, n);
}

// Token mode: each distinct token gets a dense id, written as a fixed-width big-endian code; runs of tokens
// become spans from their first token's first byte to their last token's last byte.
Status FindTokens(const std::vector<uint8_t>& text, const std::vector<uint64_t>& starts, const FindOptions& o,
                  std::vector<Span>* spans, FindStats* st) {
  const uint64_t docs = starts.size();
  const auto docEnd = [&](uint64_t d) { return (d + 1 < docs ? starts[d + 1] : text.size()) - 1; };  // its separator
  std::vector<uint32_t> ids;
  std::vector<uint64_t> unit_starts(docs);  // where each document's tokens start, in units
  {
    std::unordered_map<std::string_view, uint32_t> dict;
    for (uint64_t d = 0; d < docs; d++) {
      unit_starts[d] = ids.size();  // (ids holds the separator unit after each earlier document)
      const uint8_t* p = text.data() + starts[d];
      Tokens(p, docEnd(d) - starts[d], [&](uint64_t b, uint64_t e) {
        const std::string_view key(reinterpret_cast<const char*>(p + b), e - b);
        auto it = dict.emplace(key, uint32_t(dict.size())).first;
        ids.push_back(it->second);
      });
      ids.push_back(UINT32_MAX);  // the separator
      if (dict.size() >= 0xFFFFFFFEu) return Status(Code::kInvalidInput, "more than 2^32 - 2 distinct tokens");
    }
    st->tokens = ids.size() - docs;
    st->distinct_tokens = dict.size();
  }
  Units u;
  u.width = o.code_bytes == 4 || st->distinct_tokens >= 0xFFFFFFu ? 4 : 3;
  u.length = o.length;
  std::vector<uint8_t> codes(ids.size() * u.width);
  for (size_t i = 0; i < ids.size(); i++) {
    const uint32_t v = ids[i] == UINT32_MAX ? (u.width == 3 ? 0xFFFFFFu : UINT32_MAX) : ids[i];
    for (uint32_t b = 0; b < u.width; b++) codes[i * u.width + b] = uint8_t(v >> (8 * (u.width - 1 - b)));
  }
  std::vector<uint32_t>().swap(ids);
  u.data = codes.data();
  u.n = codes.size();
  std::vector<RawSpan> runs;
  Status s = Runs(u, o, &runs, st);
  if (!s.ok()) return s;
  std::vector<uint8_t>().swap(codes);

  // unit indexes -> (document, token): the byte offsets of the tokens asked for, each document tokenized once
  struct Ask {
    uint64_t doc, token;
    uint64_t* out;
    bool end;  // the token's end, else its start
  };
  std::vector<Span> out(runs.size());
  std::vector<Ask> asks;
  asks.reserve(runs.size() * 3);
  for (size_t k = 0; k < runs.size(); k++) {
    const uint64_t d = DocOf(unit_starts, runs[k].begin);
    out[k].doc = d;
    asks.push_back({d, runs[k].begin - unit_starts[d], &out[k].start, false});
    asks.push_back({d, runs[k].end - 1 - unit_starts[d], &out[k].end, true});
    const uint64_t f = DocOf(unit_starts, runs[k].source);
    out[k].first_doc = f;
    asks.push_back({f, runs[k].source - unit_starts[f], &out[k].first_offset, false});
  }
  std::sort(asks.begin(), asks.end(), [](const Ask& a, const Ask& b) { return a.doc != b.doc ? a.doc < b.doc : a.token < b.token; });
  for (size_t a = 0; a < asks.size();) {
    const uint64_t d = asks[a].doc;
    uint64_t j = 0;
    Tokens(text.data() + starts[d], docEnd(d) - starts[d], [&](uint64_t b, uint64_t e) {
      while (a < asks.size() && asks[a].doc == d && asks[a].token == j) {
        *asks[a].out = asks[a].end ? e : b;
        a++;
      }
      j++;
    });
    while (a < asks.size() && asks[a].doc == d) a++;  // (cannot happen: every token asked for exists)
  }
  *spans = std::move(out);
  return Status::Ok();
}

}  // namespace

Status Corpus::Add(const Docs& docs, size_t* bad_doc) {
  for (size_t i = 0; i < docs.n; i++) {
    const size_t bad = FirstInvalidUtf8(docs.ptr[i], docs.len[i]);
    if (bad != docs.len[i]) {
      if (bad_doc != nullptr) *bad_doc = i;
      return Status(Code::kInvalidInput, "invalid UTF-8 at byte " + std::to_string(bad) + " of the text");
    }
  }
  size_t add = 0;
  for (size_t i = 0; i < docs.n; i++) add += docs.len[i] + 1;
  if (text_.capacity() < text_.size() + add) text_.reserve(std::max(text_.size() + add, text_.capacity() + text_.capacity() / 2));
  for (size_t i = 0; i < docs.n; i++) {
    starts_.push_back(text_.size());
    text_.insert(text_.end(), docs.ptr[i], docs.ptr[i] + docs.len[i]);
    text_.push_back(kSeparator);
  }
  return Status::Ok();
}

Status Corpus::Find(const FindOptions& o, std::vector<Span>* spans, FindStats* stats) const {
  const uint32_t min = o.unit == Unit::kByte ? kMinLength : 1;
  if (o.length < min || o.length > kMaxLength)
    return Status(Code::kInvalidArgument, "the window length must be from " + std::to_string(min) + " to " + std::to_string(kMaxLength) +
                                              (o.unit == Unit::kByte ? " bytes" : " tokens"));
  if (o.unit == Unit::kToken && !o.index_path.empty()) return Status(Code::kInvalidArgument, "an index is written in byte mode only");
  *stats = FindStats();
  stats->documents = documents();
  stats->bytes = text_bytes();
  spans->clear();
  if (text_.empty()) return o.index_path.empty() ? Status::Ok() : WriteIndex(o.index_path, nullptr, 0, starts_, nullptr, nullptr, o.stop);
  try {
    Status s = o.unit == Unit::kByte ? FindBytes(text_, starts_, o, spans, stats) : FindTokens(text_, starts_, o, spans, stats);
    if (!s.ok()) return s;
  } catch (const std::bad_alloc&) {
    return Status(Code::kInternal, "out of memory: the suffix array takes 4 bytes per input byte (8 from 2 GiB) besides the text");
  }
  uint64_t last_doc = UINT64_MAX;
  for (const Span& sp : *spans) {
    stats->removed_bytes += sp.end - sp.start;
    if (sp.doc != last_doc) stats->documents_changed++;
    last_doc = sp.doc;
  }
  return Status::Ok();
}

bool SuffixSortAvailable(Status* why) {
  Status s = LoadSuffixSort();
  if (why != nullptr) *why = s;
  return s.ok();
}

}  // namespace substr
}  // namespace neardup
