#include "simhash/all_pairs.h"

#include <algorithm>

#include "minhash/union_find.h"
#include "parallel/pool.h"
#include "simhash/kernels.h"
#include "simhash/layout.h"

namespace neardup {
namespace simhash {
namespace {

constexpr size_t kLeaf = 48;
using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

struct Level {
  uint64_t blocks[kMaxDistance + 1];
  uint32_t count;  // k + 1
  uint32_t chosen;
};

// What the search does with the pairs it finds (one sink per pool slot, so no locks):
//   Skip(idx, g)        true when no pair of this group can matter (range sinks: no member in range)
//   Arrange(fp, idx, g) may reorder a leaf group; returns how many leading members need scanning as the
//                       first member of a pair (the others only pair with those)
//   Add(i, j)           a pair of indices, i < j
//   Aborted()           stop searching (a cap was exceeded)
template <typename Sink>
struct Finder {
  const Layout& layout;
  size_t table;
  uint32_t k;
  uint64_t prefix_mask;
  std::vector<Level> levels;
  Sink* sink;
  bool fast;
  const std::atomic<bool>* stop;

  bool Done() const { return sink->Aborted() || (stop != nullptr && stop->load(std::memory_order_relaxed)); }

  bool Accept(uint64_t diff) const {
    if ((diff & prefix_mask) != 0) return false;
    for (const Level& L : levels) {
      uint32_t j = 0;
      while (j < L.count && (diff & L.blocks[j]) != 0) j++;
      if (j != L.chosen) return false;
    }
    return layout.IsCanonical(table, diff);
  }

  template <bool kFast>
  NEARDUP_INLINE void LeafT(const uint64_t* fp, const uint32_t* idx, size_t g, size_t first) {
    for (size_t a = 0; a < first && a + 1 < g; a++) {
      const uint64_t x = fp[a];
      auto on = [&](size_t off) {
        const size_t b = a + 1 + off;
        if (!Accept(x ^ fp[b])) return;
        const uint32_t i = idx[a], j = idx[b];
        sink->Add(std::min(i, j), std::max(i, j));
      };
#if NEARDUP_X86_DISPATCH
      if (kFast) ScanWithinAvx2(fp + a + 1, g - a - 1, x, k, on);
      else
#endif
        ScanWithinPortable(fp + a + 1, g - a - 1, x, k, on);
      if ((a & 255) == 255 && Done()) return;
    }
  }
  NEARDUP_SIMHASH_FAST void LeafFast(const uint64_t* fp, const uint32_t* idx, size_t g, size_t first) {
    LeafT<true>(fp, idx, g, first);
  }
  void Leaf(uint64_t* fp, uint32_t* idx, size_t g) {
    const size_t first = sink->Arrange(fp, idx, g);
    if (fast) LeafFast(fp, idx, g, first);
    else LeafT<false>(fp, idx, g, first);
  }

  // fp/idx: the group (modified: reordered).
  void Group(std::vector<uint64_t>& fp, std::vector<uint32_t>& idx) {
    const size_t g = fp.size();
    if (Done() || sink->Skip(idx.data(), g)) return;
    if (g <= kLeaf) {
      Leaf(fp.data(), idx.data(), g);
      return;
    }
    uint64_t v = 0;
    for (size_t i = 1; i < g; i++) v |= fp[i] ^ fp[0];
    const uint32_t nv = Pop(v);
    if (nv <= k) {
      Leaf(fp.data(), idx.data(), g);
      return;
    }
    Level L;
    L.count = k + 1;
    {
      uint32_t seen = 0, j = 0;
      for (uint32_t i = 0; i <= k; i++) L.blocks[i] = 0;
      for (uint32_t bit = 0; bit < 64; bit++) {
        if (!((v >> bit) & 1)) continue;
        while (seen >= (uint64_t{j} + 1) * nv / (k + 1)) j++;
        L.blocks[j] |= uint64_t{1} << bit;
        seen++;
      }
    }
    // The k+1 partitions, each sorted by its block. Dense groups (most members within a few bits of each
    // other) barely shrink: every sub-group keeps nearly all of the group, and recursing multiplies the
    // work by up to k+1 per level. When the sub-groups, compared all-to-all, would cost half the group's
    // own all-to-all comparison or more, the group is compared all-to-all here instead (Accept reports each
    // pair at this level exactly as the recursion would). Each level that recurses at least halves that
    // sum of squares, so a group costs O(g^2) comparisons at most, whatever its shape.
    std::vector<std::pair<uint64_t, uint32_t>> order(g * (k + 1));
    uint64_t sub_cost = 0;
    for (uint32_t j = 0; j <= k; j++) {
      const uint64_t mask = L.blocks[j];
      auto* o = order.data() + size_t{j} * g;
      for (size_t i = 0; i < g; i++) o[i] = {fp[i], idx[i]};
      std::sort(o, o + g, [mask](const std::pair<uint64_t, uint32_t>& a, const std::pair<uint64_t, uint32_t>& b) {
        return (a.first & mask) < (b.first & mask);
      });
      for (size_t a = 0; a < g;) {
        size_t b = a + 1;
        while (b < g && ((o[b].first ^ o[a].first) & mask) == 0) b++;
        if (b - a >= 2) sub_cost += uint64_t{b - a} * (b - a);
        a = b;
      }
    }
    if (2 * sub_cost >= uint64_t{g} * g) {
      Leaf(fp.data(), idx.data(), g);
      return;
    }
    std::vector<uint64_t> sub_fp;
    std::vector<uint32_t> sub_idx;
    for (uint32_t j = 0; j <= k; j++) {
      const uint64_t mask = L.blocks[j];
      const auto* o = order.data() + size_t{j} * g;
      L.chosen = j;
      levels.push_back(L);
      for (size_t a = 0; a < g;) {
        size_t b = a + 1;
        while (b < g && ((o[b].first ^ o[a].first) & mask) == 0) b++;
        if (b - a >= 2) {
          sub_fp.resize(b - a);
          sub_idx.resize(b - a);
          for (size_t i = a; i < b; i++) {
            sub_fp[i - a] = o[i].first;
            sub_idx[i - a] = o[i].second;
          }
          Group(sub_fp, sub_idx);
        }
        a = b;
      }
      levels.pop_back();
    }
  }
};

// The sinks receive pairs of distinct values (Distinct, all_pairs.h) and expand each into the pairs of their
// members; with no repeated value (d.identity) a value is its fingerprint's index.

// Collects the pairs whose smaller index is in [lo, hi), up to a cap shared by all slots.
struct CollectSink {
  Pairs pairs;
  const Distinct* d = nullptr;
  const std::vector<uint8_t>* in_range = nullptr;  // value u has a member in range (ranged, !d->identity)
  uint32_t lo = 0, hi = UINT32_MAX;
  uint64_t cap = UINT64_MAX;
  std::atomic<uint64_t>* total = nullptr;
  std::atomic<bool>* over = nullptr;
  uint64_t unflushed = 0;

  bool In(uint32_t i) const { return i >= lo && i < hi; }
  bool Ranged() const { return lo != 0 || hi != UINT32_MAX; }
  bool ValueIn(uint32_t u) const { return d->identity ? In(u) : (*in_range)[u] != 0; }
  bool Skip(const uint32_t* idx, size_t g) const {
    if (!Ranged()) return false;
    for (size_t i = 0; i < g; i++)
      if (ValueIn(idx[i])) return false;
    return true;
  }
  size_t Arrange(uint64_t* fp, uint32_t* idx, size_t g) const {
    if (!Ranged()) return g;
    // members in range first: a pair with both members out of range is never wanted
    size_t r = 0;
    for (size_t i = 0; i < g; i++)
      if (ValueIn(idx[i])) {
        std::swap(fp[i], fp[r]);
        std::swap(idx[i], idx[r]);
        r++;
      }
    return r;
  }
  void Push(uint32_t i, uint32_t j) {
    pairs.emplace_back(i, j);
    if (++unflushed == 4096) Flush();
  }
  // (i, j) for every i of [a, ae) in range and j of [b, be) with j > i (both lists ascending)
  void Cross(const uint32_t* a, const uint32_t* ae, const uint32_t* b, const uint32_t* be) {
    for (const uint32_t* s = std::lower_bound(a, ae, lo); s < ae && *s < hi && !Aborted(); s++)
      for (const uint32_t* t = std::upper_bound(b, be, *s); t < be; t++) Push(*s, *t);
  }
  void Add(uint32_t u, uint32_t v) {
    if (d->identity) {
      if (In(u)) Push(u, v);
      return;
    }
    Cross(d->begin(u), d->end(u), d->begin(v), d->end(v));
    Cross(d->begin(v), d->end(v), d->begin(u), d->end(u));
  }
  // the pairs among the members of each value
  void AddWithin() {
    for (uint32_t u = 0; u < d->size() && !d->identity && !Aborted(); u++)
      if (d->end(u) - d->begin(u) >= 2) Cross(d->begin(u), d->end(u), d->begin(u), d->end(u));
  }
  void Flush() {
    if (total->fetch_add(unflushed) + unflushed > cap) over->store(true);
    unflushed = 0;
  }
  bool Aborted() const { return over->load(std::memory_order_relaxed); }
};

// counts[i] = pairs whose smaller index is i.
struct CountSink {
  std::vector<uint32_t> counts;
  const Distinct* d = nullptr;
  bool Skip(const uint32_t*, size_t) const { return false; }
  size_t Arrange(uint64_t*, uint32_t*, size_t g) const { return g; }
  void Cross(const uint32_t* a, const uint32_t* ae, const uint32_t* b, const uint32_t* be) {
    for (const uint32_t* s = a; s < ae; s++) counts[*s] += static_cast<uint32_t>(be - std::upper_bound(b, be, *s));
  }
  void Add(uint32_t u, uint32_t v) {
    if (d->identity) {
      counts[u]++;
      return;
    }
    Cross(d->begin(u), d->end(u), d->begin(v), d->end(v));
    Cross(d->begin(v), d->end(v), d->begin(u), d->end(u));
  }
  void AddWithin() {
    for (uint32_t u = 0; u < d->size() && !d->identity; u++)
      for (const uint32_t* s = d->begin(u); s < d->end(u); s++) counts[*s] += static_cast<uint32_t>(d->end(u) - s - 1);
  }
  bool Aborted() const { return false; }
};

struct UnionSink {
  UnionFind uf;
  const Distinct* d = nullptr;
  bool Skip(const uint32_t*, size_t) const { return false; }
  size_t Arrange(uint64_t*, uint32_t*, size_t g) const { return g; }
  void Add(uint32_t u, uint32_t v) {
    if (d->identity) uf.Union(u, v);
    else uf.Union(*d->begin(u), *d->begin(v));
  }
  void AddWithin() {
    for (uint32_t u = 0; u < d->size() && !d->identity; u++)
      for (const uint32_t* s = d->begin(u) + 1; s < d->end(u); s++) uf.Union(*d->begin(u), *s);
  }
  bool Aborted() const { return false; }
};

// LSD radix sort of words by bits [32, 32 + kb).
void RadixByHigh(std::vector<uint64_t>& a, std::vector<uint64_t>& tmp, uint32_t kb) {
  const uint32_t passes = (kb + 10) / 11;
  if (passes == 0) return;
  const uint32_t width = (kb + passes - 1) / passes;
  std::vector<uint32_t> cnt(size_t{1} << width);
  tmp.resize(a.size());
  for (uint32_t p = 0; p < passes; p++) {
    const uint32_t shift = 32 + p * width;
    const uint64_t mask = (uint64_t{1} << width) - 1;
    std::fill(cnt.begin(), cnt.end(), 0);
    for (uint64_t x : a) cnt[(x >> shift) & mask]++;
    uint32_t sum = 0;
    for (auto& c : cnt) {
      const uint32_t t = c;
      c = sum;
      sum += t;
    }
    for (uint64_t x : a) tmp[cnt[(x >> shift) & mask]++] = x;
    a.swap(tmp);
  }
}

// Runs the search of every table over the pool; sinks[slot] receives what slot finds.
template <typename Sink>
Status Search(const uint64_t* fps, size_t n, uint32_t m, uint32_t k, size_t slots, const std::atomic<bool>* stop,
              std::vector<Sink>* sinks) {
  const Layout layout(m, k);
  const size_t T = layout.tables();
  struct Scratch {
    std::vector<uint64_t> keys, tmp, gfp;
    std::vector<uint32_t> gidx;
  };
  std::vector<Scratch> scratch(slots);
  const bool fast = UseFast();
  parallel::ParallelFor(
      T, 1, slots,
      [&](size_t b, size_t e, size_t slot) {
        Scratch& s = scratch[slot];
        Sink& sink = (*sinks)[slot];
        for (size_t t = b; t < e && !sink.Aborted(); t++) {
          const Table& tb = layout.table(t);
          const uint32_t kb = std::min<uint32_t>(tb.prefix_bits, 32);
          s.keys.resize(n);
          for (size_t i = 0; i < n; i++) s.keys[i] = ((tb.Permute(fps[i]) >> (64 - kb)) << 32) | i;
          RadixByHigh(s.keys, s.tmp, kb);
          Finder<Sink> f{layout, t, k, tb.prefix_mask, {}, &sink, fast, stop};
          for (size_t a = 0; a < n;) {
            size_t z = a + 1;
            while (z < n && (s.keys[z] >> 32) == (s.keys[a] >> 32)) z++;
            if (z - a >= 2) {
              s.gfp.resize(z - a);
              s.gidx.resize(z - a);
              for (size_t i = a; i < z; i++) {
                const uint32_t ix = static_cast<uint32_t>(s.keys[i]);
                s.gidx[i - a] = ix;
                s.gfp[i - a] = fps[ix];
              }
              f.Group(s.gfp, s.gidx);
              if (f.Done()) break;
            }
            a = z;
          }
        }
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");
  return Status::Ok();
}

// Search over the distinct values of d (fps: the fingerprints d was made from).
template <typename Sink>
Status SearchDistinct(const uint64_t* fps, const Distinct& d, uint32_t m, uint32_t k, size_t slots,
                      const std::atomic<bool>* stop, std::vector<Sink>* sinks) {
  for (auto& s : *sinks) s.d = &d;
  if (d.size() < 2) return Status::Ok();
  return Search(d.identity ? fps : d.fps.data(), d.size(), m, k, slots, stop, sinks);
}

Status CheckInput(size_t n, uint32_t m, uint32_t k) {
  Status st = ValidateParams(m, k);
  if (!st.ok()) return st;
  if (n >= UINT32_MAX) return Status(Code::kInvalidArgument, "at most 4294967294 fingerprints per call");
  return Status::Ok();
}

Status TooManyPairs(uint64_t max_pairs) {
  return Status(Code::kTooManyResults, "more than " + std::to_string(max_pairs) +
                                           " pairs (raise maxPairs, or read them with simhashFindAllStream)");
}

// The pairs of [lo, hi) (smaller index), sorted; kTooManyResults beyond cap.
Status Collect(const uint64_t* fps, const Distinct& d, uint32_t m, uint32_t k, size_t slots,
               const std::atomic<bool>* stop, uint32_t lo, uint32_t hi, uint64_t cap, Pairs* out) {
  out->clear();
  slots = std::max<size_t>(1, slots);
  std::atomic<uint64_t> total{0};
  std::atomic<bool> over{false};
  std::vector<CollectSink> sinks(slots);
  std::vector<uint8_t> in_range;
  if (!d.identity && (lo != 0 || hi != UINT32_MAX)) {
    in_range.assign(d.size(), 0);
    for (size_t u = 0; u < d.size(); u++) {
      const uint32_t* f = std::lower_bound(d.begin(u), d.end(u), lo);
      in_range[u] = f < d.end(u) && *f < hi;
    }
  }
  for (auto& s : sinks) {
    s.lo = lo;
    s.hi = hi;
    s.cap = cap;
    s.total = &total;
    s.over = &over;
    s.in_range = &in_range;
  }
  Status st = SearchDistinct(fps, d, m, k, slots, stop, &sinks);
  if (!st.ok()) return st;
  sinks[0].AddWithin();
  size_t count = 0;
  for (auto& s : sinks) {
    s.Flush();
    count += s.pairs.size();
  }
  if (over.load()) return TooManyPairs(cap);
  out->reserve(count);
  for (auto& s : sinks) {
    out->insert(out->end(), s.pairs.begin(), s.pairs.end());
    Pairs().swap(s.pairs);
  }
  std::sort(out->begin(), out->end());
  return Status::Ok();
}

}  // namespace

void FindDistinct(const uint64_t* fps, size_t n, Distinct* d) {
  *d = Distinct();
  d->n = n;
  // The common case first: no value repeats. Up to 2^17 fingerprints, a sorted copy says so; beyond, a
  // sorted sample of 2^16 (evenly spaced), which costs a few milliseconds where sorting them all would
  // cost about a fifth of the search (1M random fingerprints, (5,3)). Values repeated often show up in the
  // sample; the few repeats a sample misses cost little (a group of equal values has no varying bit and is
  // compared all-to-all at once), so grouping is a matter of speed there, not of the result.
  {
    constexpr size_t kSample = size_t{1} << 16;
    std::vector<uint64_t> v;
    if (n <= 2 * kSample) {
      v.assign(fps, fps + n);
    } else {
      v.resize(kSample);
      for (size_t i = 0; i < kSample; i++) v[i] = fps[i * n / kSample];
    }
    std::sort(v.begin(), v.end());
    if (std::adjacent_find(v.begin(), v.end()) == v.end()) return;
  }
  d->identity = false;
  d->members.resize(n);
  for (size_t i = 0; i < n; i++) d->members[i] = static_cast<uint32_t>(i);
  std::sort(d->members.begin(), d->members.end(), [fps](uint32_t a, uint32_t b) {
    return fps[a] != fps[b] ? fps[a] < fps[b] : a < b;
  });
  for (size_t i = 0; i < n; i++) {
    const uint64_t x = fps[d->members[i]];
    if (i == 0 || x != d->fps.back()) {
      d->fps.push_back(x);
      d->start.push_back(static_cast<uint32_t>(i));
    }
  }
  d->start.push_back(static_cast<uint32_t>(n));
}

Status AllPairs(const uint64_t* fps, size_t n, uint32_t m, uint32_t k, size_t slots, const std::atomic<bool>* stop,
                Pairs* out, uint64_t max_pairs) {
  out->clear();
  Status st = CheckInput(n, m, k);
  if (!st.ok() || n < 2) return st;
  Distinct d;
  FindDistinct(fps, n, &d);
  return Collect(fps, d, m, k, slots, stop, 0, UINT32_MAX, max_pairs, out);
}

void Components(size_t n, const Pairs& pairs, std::vector<uint32_t>* labels) {
  UnionFind uf(n);
  for (const auto& e : pairs) uf.Union(e.first, e.second);
  uf.Roots(labels);
}

Status AllComponents(const uint64_t* fps, size_t n, uint32_t m, uint32_t k, size_t slots,
                     const std::atomic<bool>* stop, std::vector<uint32_t>* labels) {
  Status st = CheckInput(n, m, k);
  if (!st.ok()) return st;
  slots = std::max<size_t>(1, slots);
  std::vector<UnionSink> sinks(slots);
  for (auto& s : sinks) s.uf.Reset(n);
  Distinct d;
  if (n >= 2) {
    FindDistinct(fps, n, &d);
    st = SearchDistinct(fps, d, m, k, slots, stop, &sinks);
    if (!st.ok()) return st;
    sinks[0].AddWithin();
  }
  // merge the slots' forests: i joins the root of its set in every other slot
  UnionFind& all = sinks[0].uf;
  for (size_t s = 1; s < slots; s++)
    for (size_t i = 0; i < n; i++) all.Union(static_cast<uint32_t>(i), sinks[s].uf.Find(static_cast<uint32_t>(i)));
  all.Roots(labels);
  return Status::Ok();
}

PairStream::PairStream(std::vector<uint64_t> fps, std::vector<uint64_t> ids, uint32_t m, uint32_t k, bool ids_are_fps)
    : m_(m), k_(k) {
  if (ids_are_fps) {
    // in id order = in value order
    fps_ = std::move(fps);
    // find-all's reader gives them sorted (SortDistinct): then only checked, in one pass
    if (!std::is_sorted(fps_.begin(), fps_.end())) std::sort(fps_.begin(), fps_.end());
    fps_ids_ = true;
    return;
  }
  if (ids.empty() || ids.size() != fps.size()) {
    fps_ = std::move(fps);
    return;
  }
  // entries in id order: index order is then id order, and a range of indices is a range of ids
  std::vector<uint32_t> order(ids.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return ids[a] < ids[b]; });
  fps_.resize(fps.size());
  ids_.resize(ids.size());
  for (size_t i = 0; i < order.size(); i++) {
    fps_[i] = fps[order[i]];
    ids_[i] = ids[order[i]];
  }
}

Status PairStream::Range(uint32_t lo, uint32_t hi, uint64_t cap, size_t slots, const std::atomic<bool>* stop,
                         std::vector<std::pair<uint64_t, uint64_t>>* out) {
  Pairs idx;
  Status st = Collect(fps_.data(), distinct_, m_, k_, slots, stop, lo, hi, cap, &idx);
  if (!st.ok()) return st;
  const size_t before = out->size();
  for (const auto& e : idx) {
    const uint64_t a = IdOf(e.first), b = IdOf(e.second);
    if (a != b) out->emplace_back(a, b);  // a <= b: entries are in id order
  }
  std::sort(out->begin() + before, out->end());
  out->erase(std::unique(out->begin() + before, out->end()), out->end());
  return Status::Ok();
}

Status PairStream::Next(uint64_t max_pairs, size_t slots, const std::atomic<bool>* stop,
                        std::vector<std::pair<uint64_t, uint64_t>>* out, bool* done) {
  *done = done_;
  if (done_) return Status::Ok();
  const size_t n = fps_.size();
  Status st = CheckInput(n, m_, k_);
  if (!st.ok()) return st;
  if (max_pairs == 0) max_pairs = 1;
  if (n < 2) {
    *done = done_ = true;
    return Status::Ok();
  }
  if (!grouped_) {
    FindDistinct(fps_.data(), n, &distinct_);
    grouped_ = true;
  }
  if (!counted_) {
    // Everything in one chunk when it fits (one search); otherwise count, then one search per chunk.
    st = Range(0, UINT32_MAX, max_pairs, slots, stop, out);
    if (st.ok()) {
      *done = done_ = true;
      return st;
    }
    if (st.code() != Code::kTooManyResults) return st;
    slots = std::max<size_t>(1, slots);
    std::vector<CountSink> sinks(slots);
    for (auto& s : sinks) s.counts.assign(n, 0);
    st = SearchDistinct(fps_.data(), distinct_, m_, k_, slots, stop, &sinks);
    if (!st.ok()) return st;
    sinks[0].AddWithin();
    counts_ = std::move(sinks[0].counts);
    for (size_t s = 1; s < slots; s++)
      for (size_t i = 0; i < n; i++) counts_[i] += sinks[s].counts[i];
    counted_ = true;
  }
  // The next range: whole runs of equal ids (their pairs merge), at least one run, up to max_pairs pairs.
  uint32_t hi = next_;
  uint64_t sum = 0;
  while (hi < n) {
    uint32_t run_end = hi + 1;
    while (run_end < n && (fps_ids_ || !ids_.empty()) && IdOf(run_end) == IdOf(hi)) run_end++;
    uint64_t run = 0;
    for (uint32_t i = hi; i < run_end; i++) run += counts_[i];
    if (hi > next_ && sum + run > max_pairs) break;
    sum += run;
    hi = run_end;
  }
  st = Range(next_, hi, UINT64_MAX, slots, stop, out);
  if (!st.ok()) return st;
  next_ = hi;
  *done = done_ = next_ >= n;
  return Status::Ok();
}

}  // namespace simhash
}  // namespace neardup
