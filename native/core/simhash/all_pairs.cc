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

struct Finder {
  const Layout& layout;
  size_t table;
  uint32_t k;
  uint64_t prefix_mask;
  std::vector<Level> levels;
  Pairs* out;
  bool fast;

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
  NEARDUP_INLINE void LeafT(const uint64_t* fp, const uint32_t* idx, size_t g) {
    for (size_t a = 0; a + 1 < g; a++) {
      const uint64_t x = fp[a];
      auto on = [&](size_t off) {
        const size_t b = a + 1 + off;
        if (!Accept(x ^ fp[b])) return;
        const uint32_t i = idx[a], j = idx[b];
        out->emplace_back(std::min(i, j), std::max(i, j));
      };
#if NEARDUP_X86_DISPATCH
      if (kFast) ScanWithinAvx2(fp + a + 1, g - a - 1, x, k, on);
      else
#endif
        ScanWithinPortable(fp + a + 1, g - a - 1, x, k, on);
    }
  }
  NEARDUP_SIMHASH_FAST void LeafFast(const uint64_t* fp, const uint32_t* idx, size_t g) { LeafT<true>(fp, idx, g); }
  void Leaf(const uint64_t* fp, const uint32_t* idx, size_t g) {
    if (fast) LeafFast(fp, idx, g);
    else LeafT<false>(fp, idx, g);
  }

  // fp/idx: the group (modified: reordered).
  void Group(std::vector<uint64_t>& fp, std::vector<uint32_t>& idx) {
    const size_t g = fp.size();
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
    std::vector<std::pair<uint64_t, uint32_t>> order(g);
    std::vector<uint64_t> sub_fp;
    std::vector<uint32_t> sub_idx;
    for (uint32_t j = 0; j <= k; j++) {
      const uint64_t mask = L.blocks[j];
      for (size_t i = 0; i < g; i++) order[i] = {fp[i], idx[i]};
      std::sort(order.begin(), order.end(), [mask](const std::pair<uint64_t, uint32_t>& a, const std::pair<uint64_t, uint32_t>& b) {
        return (a.first & mask) < (b.first & mask);
      });
      L.chosen = j;
      levels.push_back(L);
      for (size_t a = 0; a < g;) {
        size_t b = a + 1;
        while (b < g && ((order[b].first ^ order[a].first) & mask) == 0) b++;
        if (b - a >= 2) {
          sub_fp.resize(b - a);
          sub_idx.resize(b - a);
          for (size_t i = a; i < b; i++) {
            sub_fp[i - a] = order[i].first;
            sub_idx[i - a] = order[i].second;
          }
          Group(sub_fp, sub_idx);
        }
        a = b;
      }
      levels.pop_back();
    }
  }
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

}  // namespace

Status AllPairs(const uint64_t* fps, size_t n, uint32_t m, uint32_t k, size_t slots, const std::atomic<bool>* stop,
                Pairs* out) {
  Status st = ValidateParams(m, k);
  if (!st.ok()) return st;
  if (n >= UINT32_MAX) return Status(Code::kInvalidArgument, "at most 4294967294 fingerprints per call");
  out->clear();
  if (n < 2) return Status::Ok();
  const Layout layout(m, k);
  const size_t T = layout.tables();
  slots = std::max<size_t>(1, slots);
  std::vector<Pairs> found(T);
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
        for (size_t t = b; t < e; t++) {
          const Table& tb = layout.table(t);
          const uint32_t kb = std::min<uint32_t>(tb.prefix_bits, 32);
          s.keys.resize(n);
          for (size_t i = 0; i < n; i++) s.keys[i] = ((tb.Permute(fps[i]) >> (64 - kb)) << 32) | i;
          RadixByHigh(s.keys, s.tmp, kb);
          Finder f{layout, t, k, tb.prefix_mask, {}, &found[t], fast};
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
            }
            a = z;
          }
        }
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");
  size_t total = 0;
  for (auto& p : found) total += p.size();
  out->reserve(total);
  for (auto& p : found) out->insert(out->end(), p.begin(), p.end());
  std::sort(out->begin(), out->end());
  return Status::Ok();
}

void Components(size_t n, const Pairs& pairs, std::vector<uint32_t>* labels) {
  UnionFind uf(n);
  for (const auto& e : pairs) uf.Union(e.first, e.second);
  uf.Roots(labels);
}

}  // namespace simhash
}  // namespace neardup
