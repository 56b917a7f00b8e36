#include "substr/repeats.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "parallel/pool.h"
#include "substr/suffix_array.h"
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

// The scan over one suffix array (entries of type Idx).
template <typename Idx>
class Scan {
 public:
  Scan(const uint8_t* text, uint64_t n, const Idx* sa, uint32_t length)
      : t_(text), n_(n), sa_(sa), l_(length), words_((n + 64) / 64) {}

  // cont bit i (i >= 1): suffixes sa[i-1] and sa[i] start with the same L bytes, none of them a separator.
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

  // fn(begin, end) for every group of equal windows (suffix-array entries [begin, end), end - begin >= 2),
  // spread over the pool; fn(begin, end, slot).
  template <typename Fn>
  void Groups(const std::atomic<bool>* stop, const Fn& fn) const {
    parallel::ParallelFor(words_, 1024, parallel::MaxSlots(), [&](size_t b, size_t e, size_t slot) {
      for (size_t w = b; w < e; w++) {
        // entry i starts a group when its cont bit is 0 and entry i+1's is 1
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
    return std::memchr(t_ + p, kSeparator, l_) == nullptr;
  }

  const uint8_t* t_;
  uint64_t n_;
  const Idx* sa_;
  uint32_t l_;
  uint64_t words_;
  std::vector<uint64_t> cont_;
};

template <typename Idx>
Status FindWith(const std::vector<uint8_t>& text, const std::vector<uint64_t>& starts, const FindOptions& o,
                std::vector<Span>* spans, FindStats* st) {
  const uint64_t n = text.size();
  const uint8_t* t = text.data();
  const uint32_t L = o.length;
  const auto cancelled = [&] { return o.stop != nullptr && o.stop->load(); };

  auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  RawBuffer<Idx> sa;
  sa.Allocate(n);
  Status s = sizeof(Idx) == 4 ? BuildSuffixArray32(t, reinterpret_cast<int32_t*>(sa.data()), n)
                              : BuildSuffixArray64(t, reinterpret_cast<int64_t*>(sa.data()), n);
  if (!s.ok()) return s;
  st->build_seconds = Since(t0);
  st->build_cpu_seconds = double(std::clock() - c0) / CLOCKS_PER_SEC;
  if (cancelled()) return Status(Code::kCancelled, "cancelled");

  t0 = std::chrono::steady_clock::now();
  Scan<Idx> scan(t, n, sa.data(), L);
  scan.Adjacent(o.stop);
  if (cancelled()) return Status(Code::kCancelled, "cancelled");

  // Marks: bit p set when the window at p is removed (keep-first: every member of a group but its smallest
  // position; drop-all: every member).
  const uint64_t words = (n + 64) / 64;
  std::unique_ptr<std::atomic<uint64_t>[]> marks(new std::atomic<uint64_t>[words]);
  for (uint64_t k = 0; k < words; k++) marks[k].store(0, std::memory_order_relaxed);
  const size_t slots = parallel::MaxSlots();
  std::vector<uint64_t> groups(slots, 0);
  scan.Groups(o.stop, [&](uint64_t b, uint64_t e, size_t slot) {
    groups[slot]++;
    uint64_t m = uint64_t(scan.at(b));
    for (uint64_t i = b + 1; i < e; i++) m = std::min<uint64_t>(m, uint64_t(scan.at(i)));
    for (uint64_t i = b; i < e; i++) {
      const uint64_t p = uint64_t(scan.at(i));
      if (p == m && !o.drop_all) continue;
      marks[p >> 6].fetch_or(uint64_t(1) << (p & 63), std::memory_order_relaxed);
    }
  });
  if (cancelled()) return Status(Code::kCancelled, "cancelled");
  for (uint64_t g : groups) st->groups += g;

  // Spans: the union of the marked windows, in order; the marks become the spans' starts.
  std::vector<std::pair<uint64_t, uint64_t>> raw;
  {
    bool open = false;
    uint64_t begin = 0, end = 0;
    for (uint64_t k = 0; k < words; k++) {
      uint64_t w = marks[k].load(std::memory_order_relaxed);
      uint64_t heads = 0;
      while (w != 0) {
        const int j = Ctz(w);
        w &= w - 1;
        const uint64_t p = k * 64 + uint64_t(j);
        if (!open || p > end) {  // windows that touch make one span
          if (open) raw.emplace_back(begin, end);
          open = true;
          begin = p;
          end = p + L;
          heads |= uint64_t(1) << j;
        } else {
          end = std::max<uint64_t>(end, p + L);
        }
      }
      marks[k].store(heads, std::memory_order_relaxed);
    }
    if (open) raw.emplace_back(begin, end);
  }

  // Where each span's first window occurs: the smallest other member of its group.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> found(slots);
  scan.Groups(o.stop, [&](uint64_t b, uint64_t e, size_t slot) {
    uint64_t m1 = UINT64_MAX, m2 = UINT64_MAX;
    bool any = false;
    for (uint64_t i = b; i < e; i++) {
      const uint64_t p = uint64_t(scan.at(i));
      if (p < m1) {
        m2 = m1;
        m1 = p;
      } else if (p < m2) {
        m2 = p;
      }
      any = any || ((marks[p >> 6].load(std::memory_order_relaxed) >> (p & 63)) & 1);
    }
    if (!any) return;
    for (uint64_t i = b; i < e; i++) {
      const uint64_t p = uint64_t(scan.at(i));
      if ((marks[p >> 6].load(std::memory_order_relaxed) >> (p & 63)) & 1) found[slot].emplace_back(p, p == m1 ? m2 : m1);
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
  if (sources.size() != raw.size()) return Status(Code::kInternal, "substrings: spans and their sources disagree");

  // Document offsets, shrunk to whole code points (a byte 10xxxxxx continues a code point).
  const auto docOf = [&](uint64_t p) { return uint64_t(std::upper_bound(starts.begin(), starts.end(), p) - starts.begin()) - 1; };
  spans->clear();
  spans->reserve(raw.size());
  uint64_t last_doc = UINT64_MAX;
  for (size_t k = 0; k < raw.size(); k++) {
    uint64_t b = raw[k].first, e = raw[k].second;
    if (sources[k].first != b) return Status(Code::kInternal, "substrings: a span without its source");
    while (b < e && (t[b] & 0xC0) == 0x80) b++;
    while (e > b && (t[e] & 0xC0) == 0x80) e--;
    if (b == e) continue;
    Span sp;
    sp.doc = docOf(b);
    sp.start = b - starts[sp.doc];
    sp.end = e - starts[sp.doc];
    const uint64_t f = sources[k].second + (b - raw[k].first);
    sp.first_doc = docOf(f);
    sp.first_offset = f - starts[sp.first_doc];
    st->removed_bytes += e - b;
    if (sp.doc != last_doc) st->documents_changed++;
    last_doc = sp.doc;
    spans->push_back(sp);
  }
  st->scan_seconds = Since(t0);
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
  if (o.length < kMinLength || o.length > kMaxLength)
    return Status(Code::kInvalidArgument, "the window length must be from " + std::to_string(kMinLength) + " to " + std::to_string(kMaxLength) + " bytes");
  *stats = FindStats();
  stats->documents = documents();
  stats->bytes = text_bytes();
  spans->clear();
  if (text_.empty()) return Status::Ok();
  try {
    if (text_.size() < (uint64_t(1) << 31)) return FindWith<int32_t>(text_, starts_, o, spans, stats);
    stats->wide_suffix_array = true;
    return FindWith<int64_t>(text_, starts_, o, spans, stats);
  } catch (const std::bad_alloc&) {
    return Status(Code::kInternal, "out of memory: the suffix array takes " + std::string(text_.size() < (uint64_t(1) << 31) ? "4" : "8") +
                                       " bytes per input byte besides the text");
  }
}

bool SuffixSortAvailable(Status* why) {
  Status s = LoadSuffixSort();
  if (why != nullptr) *why = s;
  return s.ok();
}

}  // namespace substr
}  // namespace neardup
