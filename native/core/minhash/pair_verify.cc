#include "minhash/pair_verify.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "hash/crc32c.h"
#include "hash/fast64.h"
#include "minhash/shingle_set.h"
#include "minhash/union_find.h"
#include "parallel/pool.h"
#include "util/raw_buffer.h"

namespace neardup {
namespace lsh {

std::vector<uint32_t> PairDocuments(const std::vector<uint64_t>& cand) {
  std::vector<uint32_t> docs;
  docs.reserve(cand.size() * 2);
  for (uint64_t c : cand) {
    docs.push_back(static_cast<uint32_t>(c >> 32));
    docs.push_back(static_cast<uint32_t>(c));
  }
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  return docs;
}

Status VerifyPairsExact(const std::vector<uint64_t>& cand, const TextSource& texts, const TextOptions& topt,
                        double t, uint64_t memory_bytes, size_t slots, const std::atomic<bool>* stop,
                        std::vector<uint8_t>* keep, std::vector<float>* exact, VerifyStats* stats) {
  // The documents of candidate pairs (dense indexes 0..m-1 in document order), ordered by connected
  // component of the candidate graph so that partners sit close together.
  const std::vector<uint32_t> docs = PairDocuments(cand);
  const size_t m = docs.size();
  auto dense = [&](uint32_t doc) {
    return static_cast<uint32_t>(std::lower_bound(docs.begin(), docs.end(), doc) - docs.begin());
  };
  std::vector<uint32_t> pa(cand.size()), pb(cand.size());  // dense indexes of each pair
  UnionFind uf(m);
  for (size_t i = 0; i < cand.size(); i++) {
    pa[i] = dense(static_cast<uint32_t>(cand[i] >> 32));
    pb[i] = dense(static_cast<uint32_t>(cand[i]));
    uf.Union(pa[i], pb[i]);
  }
  std::vector<uint32_t> order(m), rank(m);
  {
    std::vector<uint32_t> root;
    uf.Roots(&root);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return root[x] < root[y]; });
    for (size_t r = 0; r < m; r++) rank[order[r]] = static_cast<uint32_t>(r);
  }
  auto text_len = [&](uint32_t d) { return texts.Length(docs[d]); };
  auto bound = [&](uint32_t d) { return ShingleBoundOfLength(topt, text_len(d)); };
  // Blocks of consecutive ranks whose sets fit the budget (at least one document each).
  const uint64_t budget = std::max<uint64_t>((memory_bytes ? memory_bytes : kDefaultVerifyBytes) / 8, 1);
  std::vector<uint32_t> block_start{0}, block_of(m);
  uint64_t in_block = 0, largest_block = 0;
  for (size_t r = 0; r < m; r++) {
    const uint64_t b = bound(order[r]);
    if (in_block > 0 && in_block + b > budget) {
      block_start.push_back(static_cast<uint32_t>(r));
      in_block = 0;
    }
    in_block += b;
    largest_block = std::max(largest_block, in_block);
    block_of[r] = static_cast<uint32_t>(block_start.size() - 1);
  }
  block_start.push_back(static_cast<uint32_t>(m));
  const size_t blocks = m ? block_start.size() - 1 : 0;
  // Pairs by (block of the lower rank, higher rank): a block's own pairs first, then those reaching a later
  // block grouped by that later document.
  struct Job {
    uint32_t block, lo, hi, pair;
  };
  std::vector<Job> jobs(cand.size());
  for (size_t i = 0; i < cand.size(); i++) {
    const uint32_t ra = rank[pa[i]], rb = rank[pb[i]];
    const uint32_t lo = std::min(ra, rb), hi = std::max(ra, rb);
    jobs[i] = Job{block_of[lo], lo, hi, static_cast<uint32_t>(i)};
  }
  std::sort(jobs.begin(), jobs.end(), [](const Job& x, const Job& y) {
    return x.block != y.block ? x.block < y.block : x.hi != y.hi ? x.hi < y.hi : x.pair < y.pair;
  });
  std::vector<uint32_t>().swap(pa);
  std::vector<uint32_t>().swap(pb);
  std::vector<uint32_t>().swap(rank);

  auto text_of = [&](uint32_t d, SetScratch* sc, const uint8_t** p) { return texts.Text(docs[d], sc, p); };

  if (slots == 0) slots = 1;
  std::vector<std::unique_ptr<SetScratch>> scratch(slots);
  for (auto& sc : scratch) sc = std::make_unique<SetScratch>(topt);
  RawBuffer<uint64_t> arena;
  arena.Allocate(static_cast<size_t>(largest_block));
  std::vector<uint64_t> at;   // per rank of the block: offset of its set in the arena
  std::vector<uint32_t> size;  // and its size
  keep->assign(cand.size(), 0);
  exact->assign(cand.size(), 0.0f);
  auto check = [&](uint32_t pair, const uint64_t* x, size_t nx, const uint64_t* y, size_t ny) {
    double j;
    if (JaccardAtLeast(x, nx, y, ny, t, &j)) {
      (*keep)[pair] = 1;
      (*exact)[pair] = static_cast<float>(j);
    }
  };
  size_t next_job = 0;
  for (size_t blk = 0; blk < blocks; blk++) {
    const uint32_t first = block_start[blk], end = block_start[blk + 1];
    at.assign(end - first + 1, 0);
    for (uint32_t r = first; r < end; r++) at[r - first + 1] = at[r - first] + bound(order[r]);
    size.assign(end - first, 0);
    // The block's sets, built in parallel.
    parallel::ParallelFor(end - first, 1, slots, [&](size_t b, size_t e, size_t slot) {
      SetScratch& sc = *scratch[slot];
      for (size_t x = b; x < e && sc.status.ok(); x++) {
        const uint32_t d = order[first + x];
        const uint8_t* p = nullptr;
        sc.status = text_of(d, &sc, &p);
        if (sc.status.ok()) size[x] = static_cast<uint32_t>(BuildSet(p, text_len(d), &sc, arena.data() + at[x]));
      }
    }, stop);
    for (const auto& sc : scratch)
      if (!sc->status.ok()) return sc->status;
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
    stats->sets += end - first;
    // Its own pairs.
    size_t own_end = next_job;
    while (own_end < jobs.size() && jobs[own_end].block == blk && jobs[own_end].hi < end) own_end++;
    parallel::ParallelFor(own_end - next_job, 256, slots, [&](size_t b, size_t e, size_t) {
      for (size_t x = next_job + b; x < next_job + e; x++) {
        const Job& jb = jobs[x];
        const size_t u = jb.lo - first, v = jb.hi - first;
        check(jb.pair, arena.data() + at[u], size[u], arena.data() + at[v], size[v]);
      }
    }, stop);
    // Pairs reaching later blocks: the later document's set is built once per block, in per-thread scratch.
    const size_t cross_begin = own_end;
    size_t cross_end = cross_begin;
    while (cross_end < jobs.size() && jobs[cross_end].block == blk) cross_end++;
    std::vector<size_t> groups;  // starts of runs of equal hi
    for (size_t x = cross_begin; x < cross_end; x++)
      if (x == cross_begin || jobs[x].hi != jobs[x - 1].hi) groups.push_back(x);
    groups.push_back(cross_end);
    parallel::ParallelFor(groups.size() - 1, 1, slots, [&](size_t b, size_t e, size_t slot) {
      SetScratch& sc = *scratch[slot];
      for (size_t g = b; g < e && sc.status.ok(); g++) {
        const uint32_t d = order[jobs[groups[g]].hi];
        const uint8_t* p = nullptr;
        sc.status = text_of(d, &sc, &p);
        if (!sc.status.ok()) break;
        const uint64_t len = text_len(d);
        if (sc.set.size() < ShingleBoundOfLength(topt, len)) sc.set.resize(ShingleBoundOfLength(topt, len));
        const size_t ny = BuildSet(p, len, &sc, sc.set.data());
        for (size_t x = groups[g]; x < groups[g + 1]; x++) {
          const size_t u = jobs[x].lo - first;
          check(jobs[x].pair, arena.data() + at[u], size[u], sc.set.data(), ny);
        }
      }
    }, stop);
    for (const auto& sc : scratch)
      if (!sc->status.ok()) return sc->status;
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
    stats->sets += groups.size() - 1;
    next_job = cross_end;
  }
  stats->docs = m;
  stats->blocks = blocks;
  return Status::Ok();
}

Status DecideKeptExact(const std::vector<uint64_t>& member, uint64_t buckets, const TextSource& texts, const TextOptions& topt,
                       double t, uint64_t memory_bytes, size_t slots, const std::atomic<bool>* stop, std::vector<uint32_t>* rep,
                       VerifyStats* stats, uint64_t* checked) {
  *checked = 0;
  // documents (dense, ascending) and their buckets: member is sorted by document, then bucket
  std::vector<uint32_t> docs, moff{0}, mb(member.size());
  for (size_t i = 0; i < member.size(); i++) {
    const uint32_t d = static_cast<uint32_t>(member[i] >> 32);
    if (docs.empty() || docs.back() != d) {
      if (!docs.empty()) moff.push_back(static_cast<uint32_t>(i));
      docs.push_back(d);
    }
    mb[i] = static_cast<uint32_t>(member[i]);
  }
  const size_t m = docs.size();
  moff.resize(m + 1);
  moff[m] = static_cast<uint32_t>(member.size());
  // per bucket: its kept documents so far (dense, ascending: a list of at most the bucket's size) and its last
  // member; last[x]: the last document sharing a bucket with x
  std::vector<uint64_t> koff(buckets + 1, 0);
  std::vector<uint32_t> kn(buckets, 0), blast(buckets, 0), last(m);
  for (size_t x = 0; x < m; x++)
    for (uint32_t k = moff[x]; k < moff[x + 1]; k++) {
      koff[mb[k] + 1]++;
      blast[mb[k]] = static_cast<uint32_t>(x);
    }
  for (uint64_t g = 0; g < buckets; g++) koff[g + 1] += koff[g];
  std::vector<uint32_t> klist(member.size());
  for (size_t x = 0; x < m; x++) {
    last[x] = static_cast<uint32_t>(x);
    for (uint32_t k = moff[x]; k < moff[x + 1]; k++) last[x] = std::max(last[x], blast[mb[k]]);
  }
  std::vector<uint32_t>().swap(blast);
  // 0 undecided, 1 kept, 2 dropped or never decided (matched an index entry)
  std::vector<uint8_t> state(m);
  for (size_t x = 0; x < m; x++) state[x] = (*rep)[docs[x]] == docs[x] ? 0 : 2;
  std::vector<uint64_t> h1(m), h2(m);
  auto len_of = [&](uint32_t x) { return texts.Length(docs[x]); };
  auto same = [&](uint32_t x, uint32_t y) { return h1[x] == h1[y] && h2[x] == h2[y] && len_of(x) == len_of(y); };
  auto bound = [&](uint32_t x) { return ShingleBoundOfLength(topt, len_of(x)); };
  const uint64_t budget = std::max<uint64_t>((memory_bytes ? memory_bytes : kDefaultVerifyBytes) / 8, 2);
  const uint64_t wbudget = budget / 2, cbudget = budget - wbudget;
  constexpr size_t kMaxWindow = size_t(1) << 16;
  if (slots == 0) slots = 1;
  struct Scratch {
    explicit Scratch(const TextOptions& o) : set(o) {}
    SetScratch set;
    std::vector<uint32_t> cand;
    uint64_t compared = 0;
  };
  std::vector<std::unique_ptr<Scratch>> scratch(slots);
  for (auto& sc : scratch) sc = std::make_unique<Scratch>(topt);
  auto fail = [&]() -> Status {
    for (const auto& sc : scratch)
      if (!sc->set.status.ok()) return sc->set.status;
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
    return Status::Ok();
  };
  // x's kept candidates below `below` (or from `from` on), ascending and distinct
  auto gather = [&](uint32_t x, uint32_t from, uint32_t below, std::vector<uint32_t>* out) {
    out->clear();
    for (uint32_t k = moff[x]; k < moff[x + 1]; k++) {
      const uint32_t* l = klist.data() + koff[mb[k]];
      const uint32_t* e = l + kn[mb[k]];
      for (const uint32_t* q = std::lower_bound(l, e, from); q < e && *q < below; q++) out->push_back(*q);
    }
    if (moff[x + 1] - moff[x] > 1) {
      std::sort(out->begin(), out->end());
      out->erase(std::unique(out->begin(), out->end()), out->end());
    }
  };
  std::unordered_map<uint32_t, std::vector<uint64_t>> cache;  // sets of kept documents of earlier windows
  // buckets of the window: the first member seen (dense), kMixed once two members differ, kUnseen outside the
  // window; a flat array (a hash map's node walks and allocations were most of this function's own time)
  constexpr uint32_t kUnseen = UINT32_MAX - 1, kMixed = UINT32_MAX;
  std::vector<uint32_t> mixed(buckets, kUnseen), touched;
  uint64_t cache_vals = 0;
  std::vector<uint8_t> need;
  std::vector<uint32_t> res, fetch, mark(m, UINT32_MAX), cands;
  std::vector<uint64_t> at;
  std::vector<size_t> size;
  std::vector<std::vector<uint64_t>> fetched;
  // The arena holds the largest window's sets: allocated once (each growth was fresh memory for the kernel to
  // zero, ~4 % of a CLI run's CPU in page faults on the 100 MB 30-copies corpus)
  RawBuffer<uint64_t> arena;
  {
    uint64_t largest = 0;
    for (size_t w0 = 0; w0 < m;) {
      size_t w1 = w0;
      uint64_t in = 0;
      for (; w1 < m && w1 - w0 < kMaxWindow && (w1 == w0 || in + bound(w1) <= wbudget); w1++) in += bound(w1);
      largest = std::max(largest, in);
      w0 = w1;
    }
    arena.Allocate(static_cast<size_t>(largest));
  }
  for (size_t w0 = 0; w0 < m;) {
    size_t w1 = w0;
    for (uint64_t in = 0; w1 < m && w1 - w0 < kMaxWindow && (w1 == w0 || in + bound(w1) <= wbudget); w1++) in += bound(w1);
    const size_t wn = w1 - w0;
    const uint32_t W0 = static_cast<uint32_t>(w0);
    // the window's texts hashed
    parallel::ParallelFor(wn, 16, slots, [&](size_t b, size_t e, size_t slot) {
      SetScratch& sc = scratch[slot]->set;
      for (size_t x = w0 + b; x < w0 + e && sc.status.ok(); x++) {
        if (state[x] == 2) continue;
        const uint8_t* p = nullptr;
        sc.status = texts.Text(docs[x], &sc, &p);
        if (!sc.status.ok()) break;
        const size_t len = static_cast<size_t>(len_of(static_cast<uint32_t>(x)));
        h1[x] = fast64::Hash(p, len, 0x9e3779b97f4a7c15ull);
        h2[x] = fast64::Hash(p, len, 0x632be59bd9b4e019ull);
      }
    }, stop);
    Status s = fail();
    if (!s.ok()) return s;
    // Which sets are needed: those of the members of a bucket whose window members and earlier kept ones are
    // not all one text, and of those earlier kept ones (when not cached).
    for (uint32_t g : touched) mixed[g] = kUnseen;
    touched.clear();
    for (size_t x = w0; x < w1; x++) {
      if (state[x] == 2) continue;
      for (uint32_t k = moff[x]; k < moff[x + 1]; k++) {
        uint32_t& first = mixed[mb[k]];
        if (first == kUnseen) {
          first = static_cast<uint32_t>(x);
          touched.push_back(mb[k]);
        } else if (first != kMixed && !same(first, static_cast<uint32_t>(x))) {
          first = kMixed;
        }
      }
    }
    // a bucket whose window members are one text is mixed when an earlier kept member differs (each bucket on
    // its own: in parallel)
    parallel::ParallelFor(touched.size(), 256, slots, [&](size_t b, size_t e, size_t) {
      for (size_t i = b; i < e; i++) {
        uint32_t& first = mixed[touched[i]];
        if (first == kMixed) continue;
        const uint32_t* l = klist.data() + koff[touched[i]];
        for (uint32_t j = 0; j < kn[touched[i]]; j++)
          if (!same(l[j], first)) {
            first = kMixed;
            break;
          }
      }
    }, stop);
    need.assign(wn, 0);
    fetch.clear();
    for (size_t x = w0; x < w1; x++) {
      if (state[x] == 2) continue;
      for (uint32_t k = moff[x]; k < moff[x + 1]; k++) {
        if (mixed[mb[k]] != kMixed) continue;
        need[x - w0] = 1;
        const uint32_t* l = klist.data() + koff[mb[k]];
        for (uint32_t i = 0; i < kn[mb[k]]; i++)
          if (mark[l[i]] != W0 && cache.find(l[i]) == cache.end()) {
            mark[l[i]] = W0;
            fetch.push_back(l[i]);
          }
      }
    }
    at.assign(wn + 1, 0);
    for (size_t x = 0; x < wn; x++) at[x + 1] = at[x] + (need[x] ? bound(static_cast<uint32_t>(w0 + x)) : 0);
    size.assign(wn, 0);
    fetched.assign(fetch.size(), {});
    // the sets: the window's needed ones into the arena, the earlier kept ones into the cache
    parallel::ParallelFor(wn + fetch.size(), 1, slots, [&](size_t b, size_t e, size_t slot) {
      SetScratch& sc = scratch[slot]->set;
      for (size_t i = b; i < e && sc.status.ok(); i++) {
        if (i < wn && !need[i]) continue;
        const uint32_t x = i < wn ? static_cast<uint32_t>(w0 + i) : fetch[i - wn];
        const uint8_t* p = nullptr;
        sc.status = texts.Text(docs[x], &sc, &p);
        if (!sc.status.ok()) break;
        const uint64_t len = len_of(x);
        if (i < wn) {
          size[i] = BuildSet(p, len, &sc, arena.data() + at[i]);
        } else {
          std::vector<uint64_t>& v = fetched[i - wn];
          v.resize(bound(x));
          v.resize(BuildSet(p, len, &sc, v.data()));
        }
      }
    }, stop);
    s = fail();
    if (!s.ok()) return s;
    stats->sets += fetch.size();
    for (size_t x = 0; x < wn; x++) stats->sets += need[x];
    for (size_t i = 0; i < fetch.size(); i++) {
      cache_vals += fetched[i].size();
      cache[fetch[i]] = std::move(fetched[i]);
    }
    // candidates of earlier windows (decided, frozen): the first kept one that matches, in parallel
    res.assign(wn, UINT32_MAX);
    parallel::ParallelFor(wn, 64, slots, [&](size_t b, size_t e, size_t slot) {
      Scratch& sc = *scratch[slot];
      for (size_t x = w0 + b; x < w0 + e; x++) {
        if (state[x] == 2) continue;
        gather(static_cast<uint32_t>(x), 0, W0, &sc.cand);
        for (uint32_t p : sc.cand) {
          if (same(p, static_cast<uint32_t>(x))) {
            res[x - w0] = p;
            break;
          }
          const std::vector<uint64_t>& ps = cache.at(p);
          double j;
          sc.compared++;
          if (JaccardAtLeast(ps.data(), ps.size(), arena.data() + at[x - w0], size[x - w0], t, &j)) {
            res[x - w0] = p;
            break;
          }
        }
      }
    }, stop);
    s = fail();
    if (!s.ok()) return s;
    // the window in order: its own candidates; a kept document joins its buckets' lists
    for (size_t x = w0; x < w1; x++) {
      if (state[x] == 2) continue;
      uint32_t by = res[x - w0];
      if (by == UINT32_MAX) {
        gather(static_cast<uint32_t>(x), W0, static_cast<uint32_t>(x), &cands);
        for (uint32_t p : cands) {
          if (same(p, static_cast<uint32_t>(x))) {
            by = p;
            break;
          }
          double j;
          scratch[0]->compared++;
          if (JaccardAtLeast(arena.data() + at[p - w0], size[p - w0], arena.data() + at[x - w0], size[x - w0], t, &j)) {
            by = p;
            break;
          }
        }
      }
      if (by == UINT32_MAX) {
        state[x] = 1;
        for (uint32_t k = moff[x]; k < moff[x + 1]; k++) klist[koff[mb[k]] + kn[mb[k]]++] = static_cast<uint32_t>(x);
      } else {
        state[x] = 2;
        (*rep)[docs[x]] = docs[by];
      }
    }
    // kept documents with later partners keep their sets; sets no later document needs leave the cache
    for (auto it = cache.begin(); it != cache.end();) {
      if (last[it->first] < w1) {
        cache_vals -= it->second.size();
        it = cache.erase(it);
      } else {
        ++it;
      }
    }
    for (size_t x = w0; x < w1; x++) {
      if (state[x] != 1 || !need[x - w0] || last[x] < w1 || cache_vals + size[x - w0] > cbudget) continue;
      const uint64_t* q = arena.data() + at[x - w0];
      cache[static_cast<uint32_t>(x)].assign(q, q + size[x - w0]);
      cache_vals += size[x - w0];
    }
    // over the budget (sets fetched for this window): the rest is built again when needed
    for (auto it = cache.begin(); cache_vals > cbudget && it != cache.end();) {
      cache_vals -= it->second.size();
      it = cache.erase(it);
    }
    stats->blocks++;
    w0 = w1;
  }
  stats->docs = m;
  for (const auto& sc : scratch) *checked += sc->compared;
  return Status::Ok();
}

Status DecidePairs(const Params& params, const TextOptions& topt, Verify verify, double threshold, uint64_t memory_bytes,
                   const std::vector<uint64_t>& cand, const SignatureSource* sigs, const TextSource* texts, size_t slots,
                   const std::atomic<bool>* stop, PairDecisions* out, VerifyStats* stats) {
  out->keep.clear();
  out->est.assign(sigs ? cand.size() : 0, 0.0f);
  out->exact.clear();
  if (verify == Verify::kEstimate && !sigs) return Status(Code::kInvalidArgument, "verification by estimate needs the signatures");
  if (verify == Verify::kExact && !texts) return Status(Code::kInvalidArgument, "exact verification needs the texts");
  if (sigs) {
    parallel::ParallelFor(cand.size(), 1024, slots, [&](size_t b, size_t e, size_t) {
      for (size_t i = b; i < e; i++)
        out->est[i] = static_cast<float>(EstimateJaccard(params, sigs->Signature(static_cast<uint32_t>(cand[i] >> 32)),
                                                         sigs->Signature(static_cast<uint32_t>(cand[i]))));
    }, stop);
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  }
  if (verify == Verify::kExact) return VerifyPairsExact(cand, *texts, topt, threshold, memory_bytes, slots, stop, &out->keep, &out->exact, stats);
  out->keep.resize(cand.size());
  for (size_t i = 0; i < cand.size(); i++) out->keep[i] = verify == Verify::kNone || out->est[i] >= threshold;
  return Status::Ok();
}

namespace {

uint32_t U32At(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

Status ReadFully(io::os::Fd fd, const std::string& path, uint64_t off, uint8_t* q, uint64_t len, const char* what) {
  for (uint64_t at = 0; at < len;) {
    size_t got = 0;
    Status s = io::os::ReadAt(fd, path, off + at, q + at, static_cast<size_t>(len - at), &got);
    if (!s.ok()) return s;
    if (got == 0)
      return Status(Code::kCorrupt, "'" + path + "' is " + what + ": truncated at offset " + std::to_string(off + at));
    at += got;
  }
  return Status::Ok();
}

// StageDocs' per-thread scratch: the line parser and its output.
struct LineScratch : SourceScratch {
  explicit LineScratch(const jsonl::FieldPath* field) : parser(field, nullptr) {}
  jsonl::LineParser parser;
  std::string text, id, reason;
};

}  // namespace

StageDocs::~StageDocs() {
  for (Shard& sh : shards_) {
    io::os::CloseQuietly(sh.texts_fd);
    for (io::os::Fd fd : sh.input_fd) io::os::CloseQuietly(fd);
  }
}

Status StageDocs::Open(std::vector<StageShard> shards, const std::vector<uint32_t>& docs, uint64_t skip,
                       const jsonl::FieldPath& field) {
  skip_ = skip;
  field_ = &field;
  docs_ = docs;
  locs_.assign(docs.size(), Loc{});
  uint64_t next = 0;
  for (StageShard& ss : shards) {
    if (ss.first < next || ss.block == 0)
      return Status(Code::kInvalidArgument, "stage shards: document ranges must be ascending, blocks not empty");
    next = ss.first + ss.n;
    shards_.emplace_back();
    shards_.back().s = std::move(ss);
  }
  std::vector<uint8_t> table, block;
  size_t x = 0;  // next document of docs to load
  for (Shard& sh : shards_) {
    const StageShard& s = sh.s;
    if (x < docs.size() && docs[x] < s.first)
      return Status(Code::kInvalidArgument, "document " + std::to_string(docs[x]) + " is in no signatures shard given");
    const size_t x0 = x;
    while (x < docs.size() && docs[x] < s.first + s.n) x++;
    if (x == x0) continue;
    io::os::Fd fd = io::os::kNoFd;
    Status st = io::os::OpenRead(s.locs, &fd);
    if (!st.ok()) return st;
    struct Closer {
      io::os::Fd fd;
      ~Closer() { io::os::CloseQuietly(fd); }
    } closer{fd};
    uint64_t size = 0;
    bool regular = false;
    st = io::os::FileSize(fd, s.locs, &size, &regular);
    if (!st.ok()) return st;
    const uint64_t blocks = (s.n + s.block - 1) / s.block;
    if (size != skip + s.n * kDocLocBytes + blocks * 4)
      return Status(Code::kCorrupt, "'" + s.locs + "' is corrupt: " + std::to_string(size) + " bytes, " + std::to_string(s.n) +
                                        " records in blocks of " + std::to_string(s.block) + " need " +
                                        std::to_string(skip + s.n * kDocLocBytes + blocks * 4));
    // the block CRCs, checked against the header's
    table.resize(blocks * 4);
    st = ReadFully(fd, s.locs, skip + s.n * kDocLocBytes, table.data(), table.size(), "corrupt");
    if (!st.ok()) return st;
    if (Crc32c(table.data(), table.size()) != s.locs_crc)
      return Status(Code::kCorrupt, "'" + s.locs + "' is corrupt: its block checksums fail the payload checksum");
    bytes_read_ += table.size();
    // the blocks of the documents wanted, each read once and checked
    for (size_t y = x0; y < x;) {
      const uint64_t b = (docs[y] - s.first) / s.block;
      const uint64_t first = b * s.block, count = std::min(s.block, s.n - first);
      block.resize(count * kDocLocBytes);
      st = ReadFully(fd, s.locs, skip + first * kDocLocBytes, block.data(), block.size(), "corrupt");
      if (!st.ok()) return st;
      bytes_read_ += block.size();
      if (Crc32c(block.data(), block.size()) != U32At(table.data() + b * 4))
        return Status(Code::kCorrupt, "'" + s.locs + "' is corrupt: block " + std::to_string(b) + " (offset " +
                                          std::to_string(skip + first * kDocLocBytes) + ") fails its checksum");
      for (; y < x && (docs[y] - s.first) / s.block == b; y++) {
        const uint8_t* r = block.data() + (docs[y] - s.first - first) * kDocLocBytes;
        Loc& l = locs_[y];
        l.offset = uint64_t(U32At(r)) | uint64_t(U32At(r + 4)) << 32;
        l.raw_len = U32At(r + 8);
        l.text_len = U32At(r + 12);
        l.crc = U32At(r + 16);
      }
    }
    // the files their texts are in
    sh.input_fd.assign(s.inputs.size(), io::os::kNoFd);
    for (size_t y = x0; y < x; y++) {
      const uint64_t d = docs[y];
      size_t i = 0;
      while (i + 1 < s.inputs.size() && s.inputs[i + 1].first <= d) i++;  // inputs are few per shard
      if (s.inputs.empty() || d < s.inputs[i].first || d >= s.inputs[i].first + s.inputs[i].count)
        return Status(Code::kInvalidArgument, "document " + std::to_string(d) + " is in no input file of its shard");
      const StageInput& in = s.inputs[i];
      const Loc& l = locs_[y];
      if (in.in_place) {
        if (l.text_len > l.raw_len)  // unescaping never makes a text longer than its line
          return Status(Code::kCorrupt, "'" + s.locs + "' is corrupt: the record of document " + std::to_string(d) +
                                            " has a text longer than its line");
        if (sh.input_fd[i] == io::os::kNoFd) {
          st = io::os::OpenRead(in.path, &sh.input_fd[i]);
          if (!st.ok()) return st;
        }
      } else {
        if (l.raw_len != l.text_len || l.offset + l.text_len > s.texts_bytes)
          return Status(Code::kCorrupt, "'" + s.locs + "' is corrupt: the record of document " + std::to_string(d) +
                                            " points outside its texts file");
        if (sh.texts_fd == io::os::kNoFd) {
          if (s.texts.empty()) return Status(Code::kInvalidArgument, "document " + std::to_string(d) + " needs the shard's texts file");
          st = io::os::OpenRead(s.texts, &sh.texts_fd);
          if (!st.ok()) return st;
        }
      }
    }
  }
  if (x < docs.size()) return Status(Code::kInvalidArgument, "document " + std::to_string(docs[x]) + " is in no signatures shard given");
  return Status::Ok();
}

const StageDocs::Loc* StageDocs::Find(uint32_t doc) const {
  const auto it = std::lower_bound(docs_.begin(), docs_.end(), doc);
  return it == docs_.end() || *it != doc ? nullptr : &locs_[it - docs_.begin()];
}

uint64_t StageDocs::Length(uint32_t doc) const {
  const Loc* l = Find(doc);
  return l ? l->text_len : 0;
}

Status StageDocs::Text(uint32_t doc, SetScratch* sc, const uint8_t** p) const {
  const Loc* l = Find(doc);
  if (!l) return Status(Code::kInvalidArgument, "document " + std::to_string(doc) + " was not loaded");
  size_t k = shards_.size() - 1;  // the last shard whose first document is <= doc
  while (k > 0 && shards_[k].s.first > doc) k--;
  const Shard& sh = shards_[k];
  size_t i = 0;
  while (i + 1 < sh.s.inputs.size() && sh.s.inputs[i + 1].first <= doc) i++;
  const StageInput& in = sh.s.inputs[i];
  if (sc->text.size() < l->raw_len) sc->text.resize(l->raw_len);
  uint8_t* q = sc->text.data();
  if (!in.in_place) {
    const uint64_t off = skip_ + l->offset;
    Status s = ReadFully(sh.texts_fd, sh.s.texts, off, q, l->raw_len, "corrupt");
    if (!s.ok()) return s;
    if (Crc32c(q, l->raw_len) != l->crc)
      return Status(Code::kCorrupt, "'" + sh.s.texts + "' is corrupt: the text of document " + std::to_string(doc) + " (offset " +
                                        std::to_string(off) + ", " + std::to_string(l->raw_len) + " bytes) fails its checksum");
    bytes_read_ += l->raw_len;
    *p = q;
    return Status::Ok();
  }
  const auto changed = [&](const std::string& why) {
    return Status(Code::kInvalidInput, "'" + in.path + "' has changed since the signatures stage: the line at offset " +
                                           std::to_string(l->offset) + " (document " + std::to_string(doc) + ") " + why +
                                           "; rerun the stages from signatures");
  };
  size_t got_total = 0;
  for (; got_total < l->raw_len;) {
    size_t got = 0;
    Status s = io::os::ReadAt(sh.input_fd[i], in.path, l->offset + got_total, q + got_total, l->raw_len - got_total, &got);
    if (!s.ok()) return s;
    if (got == 0) return changed("is past its end");
    got_total += got;
  }
  bytes_read_ += l->raw_len;
  if (!sc->source) sc->source = std::make_unique<LineScratch>(field_);
  LineScratch& ls = static_cast<LineScratch&>(*sc->source);
  ls.text.clear();
  jsonl::IdKind kind = jsonl::IdKind::kNone;
  // a bad line ('--on-bad-line empty') was signed as an empty text: the parser appends nothing for it
  ls.parser.Parse(q, l->raw_len, &ls.text, &ls.id, &kind, &ls.reason);
  if (ls.text.size() != l->text_len || Crc32c(ls.text.data(), ls.text.size()) != l->crc)
    return changed("no longer holds the text that was signed (" + std::to_string(l->text_len) + " bytes, checksum " +
                   std::to_string(l->crc) + ")");
  *p = reinterpret_cast<const uint8_t*>(ls.text.data());
  return Status::Ok();
}

void ShardSignatures::Add(uint64_t first, uint64_t count, const uint8_t* data) {
  first_.push_back(first);
  count_.push_back(count);
  data_.push_back(data);
}

bool ShardSignatures::Covers(uint32_t doc) const {
  const size_t i = std::upper_bound(first_.begin(), first_.end(), uint64_t(doc)) - first_.begin();
  return i > 0 && doc - first_[i - 1] < count_[i - 1];
}

const uint8_t* ShardSignatures::Signature(uint32_t doc) const {
  size_t i = std::upper_bound(first_.begin(), first_.end(), uint64_t(doc)) - first_.begin() - 1;
  return data_[i] + (doc - first_[i]) * sb_;
}

}  // namespace lsh
}  // namespace neardup
