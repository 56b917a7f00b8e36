#include "postings/passages.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "parallel/pool.h"

namespace neardup {
namespace postings {

void WindowsOf(Blotter* bl, const uint8_t* text, size_t n, Windows* out) {
  bl->Run(text, n);
  const size_t m = bl->blots().size();
  out->blots = bl->blots();
  out->begin.resize(m);
  out->end.resize(m);
  for (size_t j = 0; j < m; j++) {
    out->begin[j] = bl->text_begin(j);
    out->end[j] = bl->text_end(j);
  }
}

namespace {
void SortedIndex(const uint32_t* y, size_t ny, std::vector<std::pair<uint32_t, uint32_t>>* idx) {
  idx->resize(ny);  // (blot, position) of y, sorted
  for (size_t j = 0; j < ny; j++) (*idx)[j] = {y[j], uint32_t(j)};
  std::sort(idx->begin(), idx->end());
}
}  // namespace

void AlignedRuns(const uint32_t* x, size_t nx, const uint32_t* y, size_t ny, std::vector<Run>* out) {
  std::vector<std::pair<uint32_t, uint32_t>> idx;
  SortedIndex(y, ny, &idx);
  AlignedRunsSorted(x, nx, y, ny, idx.data(), out);
}

void AlignedRunsSorted(const uint32_t* x, size_t nx, const uint32_t* y, size_t ny,
                       const std::pair<uint32_t, uint32_t>* idx, std::vector<Run>* out) {
  out->clear();
  const auto* end = idx + ny;
  for (size_t i = 0; i < nx; i++) {
    auto k = std::lower_bound(idx, end, std::make_pair(x[i], uint32_t(0)));
    for (size_t c = 0; k != end && k->first == x[i] && c < kMaxRepeat; ++k, ++c) {
      const size_t j = k->second;
      if (i > 0 && j > 0 && x[i - 1] == y[j - 1]) continue;  // not the start of its run
      size_t len = 1;
      while (i + len < nx && j + len < ny && x[i + len] == y[j + len]) len++;
      out->push_back(Run{uint32_t(i), uint32_t(j), uint32_t(len)});
    }
  }
}

namespace {

// Length of the union of byte ranges.
uint64_t UnionBytes(std::vector<std::pair<uint32_t, uint32_t>>* r) {
  std::sort(r->begin(), r->end());
  uint64_t total = 0;
  uint32_t lo = 0, hi = 0;
  bool open = false;
  for (const auto& x : *r) {
    if (open && x.first <= hi) {
      hi = std::max(hi, x.second);
      continue;
    }
    if (open) total += hi - lo;
    lo = x.first, hi = x.second, open = true;
  }
  if (open) total += hi - lo;
  return total;
}

uint64_t SeqHash(const uint32_t* b, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (size_t i = 0; i < n; i++) {
    h = (h ^ b[i]) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return h;
}

uint64_t ListHash(const std::vector<uint32_t>& v) { return SeqHash(v.data(), v.size()); }

Status Cancelled() { return Status(Code::kCancelled, "cancelled"); }

// Blots the documents on the pool: visit(slot, doc, windows) for each, in parallel (one Blotter and one
// Windows per slot). Stops at the first text that cannot be read, or when stop is set.
Status ForEachWindows(const std::vector<uint32_t>& docs, const BlotOptions& bo, const TextFn& text, size_t slots,
                      const std::atomic<bool>* stop,
                      const std::function<void(size_t slot, uint32_t doc, const Windows& w)>& visit) {
  std::vector<std::unique_ptr<Blotter>> blotters(slots);
  std::vector<Windows> wins(slots);
  Status err;
  std::mutex em;
  std::atomic<bool> failed{false};
  parallel::ParallelFor(docs.size(), 16, slots, [&](size_t b, size_t e, size_t slot) {
    if (!blotters[slot]) blotters[slot] = std::make_unique<Blotter>(bo);
    for (size_t di = b; di < e && !failed.load(std::memory_order_relaxed); di++) {
      const uint8_t* t = nullptr;
      size_t n = 0;
      Status s = text(docs[di], &t, &n);
      if (!s.ok()) {
        std::lock_guard<std::mutex> g(em);
        if (err.ok()) err = s;
        failed.store(true);
        return;
      }
      WindowsOf(blotters[slot].get(), t, n, &wins[slot]);
      visit(slot, docs[di], wins[slot]);
    }
  }, stop);
  if (!err.ok()) return err;
  return stop && stop->load() ? Cancelled() : Status::Ok();
}

}  // namespace

uint64_t CoveredBytes(const std::vector<Run>& runs, bool side_a, const Windows& w) {
  std::vector<std::pair<uint32_t, uint32_t>> r;
  r.reserve(runs.size());
  for (const Run& x : runs) {
    const uint32_t s = side_a ? x.a : x.b;
    r.push_back({w.begin[s], w.end[s + x.len - 1]});
  }
  return UnionBytes(&r);
}

// ------------------------------------------------------------------------------------------ extract

Status ExtractPassages(const PostingIndex& ix, const std::vector<uint32_t>& keys, const BlotOptions& bo,
                       const TextFn& text, size_t slots, const std::atomic<bool>* stop, std::vector<Passage>* out) {
  out->clear();
  // Document sets: equal lists get one set id.
  std::unordered_map<uint32_t, uint32_t> set_of;  // key -> set id
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash;  // list hash -> set ids
  std::vector<std::vector<uint32_t>> sets;
  std::vector<uint32_t> docs, list;
  set_of.reserve(keys.size());
  for (uint32_t k : keys) {
    if (stop && stop->load()) return Cancelled();
    Status s = ix.Lookup(k, &list);
    if (!s.ok()) return s;
    if (list.empty()) continue;
    auto& cands = by_hash[ListHash(list)];
    uint32_t id = uint32_t(sets.size());
    for (uint32_t c : cands)
      if (sets[c] == list) id = c;
    if (id == sets.size()) {
      cands.push_back(id);
      sets.push_back(list);
      docs.insert(docs.end(), list.begin(), list.end());
    }
    set_of[k] = id;
  }
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());

  // Runs of windows with one set, in every document involved (first occurrence of each run per document).
  struct Rec {
    uint32_t set, len, first_blot;
    uint64_t hash;
    uint32_t doc, begin, end;
    bool operator<(const Rec& o) const {
      if (set != o.set) return set < o.set;
      if (len != o.len) return len < o.len;
      if (hash != o.hash) return hash < o.hash;
      if (first_blot != o.first_blot) return first_blot < o.first_blot;
      if (doc != o.doc) return doc < o.doc;
      return begin < o.begin;
    }
    bool SameRun(const Rec& o) const { return set == o.set && len == o.len && hash == o.hash && first_blot == o.first_blot; }
  };
  std::vector<std::vector<Rec>> part(slots);
  Status st = ForEachWindows(docs, bo, text, slots, stop, [&](size_t slot, uint32_t doc, const Windows& w) {
    const size_t first = part[slot].size();
    for (size_t i = 0; i < w.size();) {
      auto it = set_of.find(w.blots[i]);
      if (it == set_of.end()) {
        i++;
        continue;
      }
      size_t j = i + 1;
      while (j < w.size()) {
        auto jt = set_of.find(w.blots[j]);
        if (jt == set_of.end() || jt->second != it->second) break;
        j++;
      }
      part[slot].push_back(Rec{it->second, uint32_t(j - i), w.blots[i], SeqHash(&w.blots[i], j - i), doc,
                               w.begin[i], w.end[j - 1]});
      i = j;
    }
    // first occurrence per run in this document
    auto beg = part[slot].begin() + first;
    std::sort(beg, part[slot].end());  // a run's occurrences in this document by position
    part[slot].erase(std::unique(beg, part[slot].end(), [](const Rec& x, const Rec& y) { return x.SameRun(y); }),
                     part[slot].end());
  });
  if (!st.ok()) return st;
  std::vector<Rec> all;
  for (auto& p : part) {
    all.insert(all.end(), p.begin(), p.end());
    std::vector<Rec>().swap(p);
  }
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    Passage p;
    p.windows = all[i].len;
    p.first_blot = all[i].first_blot;
    while (j < all.size() && all[j].SameRun(all[i])) {
      p.docs.push_back(Occurrence{all[j].doc, all[j].begin, all[j].end});
      j++;
    }
    out->push_back(std::move(p));
    i = j;
  }
  std::sort(out->begin(), out->end(), [](const Passage& x, const Passage& y) {
    if (x.docs.size() != y.docs.size()) return x.docs.size() > y.docs.size();
    if (x.windows != y.windows) return x.windows > y.windows;
    if (x.first_blot != y.first_blot) return x.first_blot < y.first_blot;
    return x.docs[0].doc < y.docs[0].doc;
  });
  return Status::Ok();
}

// -------------------------------------------------------------------------------------------- query

Status WindowsCache::Get(uint32_t d, const TextFn& text, Blotter* bl, std::shared_ptr<const Entry>* out) {
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(d);
    if (it != map_.end()) {
      *out = it->second;
      return Status::Ok();
    }
  }
  const uint8_t* t = nullptr;
  size_t n = 0;
  Status s = text(d, &t, &n);
  if (!s.ok()) return s;
  auto e = std::make_shared<Entry>();
  WindowsOf(bl, t, n, &e->w);
  SortedIndex(e->w.blots.data(), e->w.size(), &e->idx);
  const size_t bytes = e->w.size() * 20 + 64;
  *out = e;
  std::lock_guard<std::mutex> g(mu_);
  if (bytes_ + bytes <= cap_ && map_.emplace(d, e).second) bytes_ += bytes;
  return Status::Ok();
}

Status QueryPassages(const PostingIndex& ix, const Windows& q, const BlotOptions& bo, const TextFn& text,
                     uint32_t min_passages, uint32_t max_docs, std::vector<QueryMatch>* out, WindowsCache* cache) {
  out->clear();
  std::vector<uint32_t> blots(q.blots), cands, list;
  std::sort(blots.begin(), blots.end());
  blots.erase(std::unique(blots.begin(), blots.end()), blots.end());
  for (uint32_t k : blots) {
    Status s = ix.Lookup(k, &list);
    if (!s.ok()) return s;
    if (list.size() <= max_docs) cands.insert(cands.end(), list.begin(), list.end());
  }
  std::sort(cands.begin(), cands.end());
  cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
  Blotter bl(bo);
  WindowsCache local(0);  // keeps nothing: each document blotted for this query only
  WindowsCache* wc = cache ? cache : &local;
  std::shared_ptr<const WindowsCache::Entry> e;
  std::vector<Run> runs;
  std::vector<uint8_t> seen(q.size());
  for (uint32_t d : cands) {
    Status s = wc->Get(d, text, &bl, &e);
    if (!s.ok()) return s;
    const Windows& w = e->w;
    AlignedRunsSorted(q.blots.data(), q.size(), w.blots.data(), w.size(), e->idx.data(), &runs);
    if (runs.empty() || runs.size() < min_passages) continue;
    std::fill(seen.begin(), seen.end(), 0);
    QueryMatch m;
    m.doc = d;
    m.spans.reserve(runs.size());
    for (const Run& r : runs) {
      for (uint32_t i = r.a; i < r.a + r.len; i++) m.windows += seen[i] ? 0 : (seen[i] = 1);
      m.spans.push_back(QuerySpan{r.len, q.begin[r.a], q.end[r.a + r.len - 1], w.begin[r.b], w.end[r.b + r.len - 1]});
    }
    out->push_back(std::move(m));
  }
  std::sort(out->begin(), out->end(), [](const QueryMatch& a, const QueryMatch& b) {
    if (a.windows != b.windows) return a.windows > b.windows;
    if (a.spans.size() != b.spans.size()) return a.spans.size() > b.spans.size();
    return a.doc < b.doc;
  });
  return Status::Ok();
}

// -------------------------------------------------------------------------------------------- pairs

Status PassagePairs(const PostingIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t min_passages,
                    uint32_t max_docs, size_t slots, const std::atomic<bool>* stop, std::vector<PairSummary>* out) {
  out->clear();
  // Eligible windows: held by 2 .. max_docs live documents.
  std::unordered_map<uint32_t, uint32_t> eligible;  // key -> dense index
  Status s = ix.ForEach([&](uint32_t key, const std::vector<uint32_t>& d) {
    if (d.size() >= 2 && d.size() <= max_docs) eligible.emplace(key, uint32_t(eligible.size()));
    return stop && stop->load() ? Cancelled() : Status::Ok();
  });
  if (!s.ok()) return s;
  std::vector<uint32_t> live;
  for (uint32_t d = 0; d < ix.next_id(); d++)
    if (ix.IsLive(d)) live.push_back(d);

  // The first occurrence of each eligible window in each live document.
  struct Occ {
    uint32_t key, doc, pos, begin, end;
  };
  std::vector<std::vector<Occ>> part(slots);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> firsts_of(slots);  // (key index, position)
  s = ForEachWindows(live, bo, text, slots, stop, [&](size_t slot, uint32_t doc, const Windows& w) {
    auto& firsts = firsts_of[slot];
    firsts.clear();
    for (size_t i = 0; i < w.size(); i++) {
      auto it = eligible.find(w.blots[i]);
      if (it != eligible.end()) firsts.push_back({it->second, uint32_t(i)});
    }
    std::sort(firsts.begin(), firsts.end());
    for (size_t k = 0; k < firsts.size(); k++) {
      if (k > 0 && firsts[k].first == firsts[k - 1].first) continue;
      const uint32_t i = firsts[k].second;
      part[slot].push_back(Occ{firsts[k].first, doc, i, w.begin[i], w.end[i]});
    }
  });
  if (!s.ok()) return s;
  std::vector<Occ> occ;
  for (auto& p : part) {
    occ.insert(occ.end(), p.begin(), p.end());
    std::vector<Occ>().swap(p);
  }
  // by_key: occurrences grouped by key (then doc); by_doc: by doc, then position.
  std::vector<uint32_t> by_key(occ.size()), by_doc(occ.size());
  for (uint32_t i = 0; i < occ.size(); i++) by_key[i] = by_doc[i] = i;
  std::sort(by_key.begin(), by_key.end(), [&](uint32_t x, uint32_t y) {
    return occ[x].key != occ[y].key ? occ[x].key < occ[y].key : occ[x].doc < occ[y].doc;
  });
  std::sort(by_doc.begin(), by_doc.end(), [&](uint32_t x, uint32_t y) {
    return occ[x].doc != occ[y].doc ? occ[x].doc < occ[y].doc : occ[x].pos < occ[y].pos;
  });
  std::vector<uint32_t> key_start(eligible.size() + 1, 0);
  for (const Occ& o : occ) key_start[o.key + 1]++;
  for (size_t k = 0; k < eligible.size(); k++) key_start[k + 1] += key_start[k];
  std::vector<size_t> doc_start;  // runs of by_doc with one doc
  for (size_t i = 0; i < by_doc.size(); i++)
    if (i == 0 || occ[by_doc[i]].doc != occ[by_doc[i - 1]].doc) doc_start.push_back(i);
  doc_start.push_back(by_doc.size());

  // For each document a: its matches (i in a, j in b) with every b > a, grouped by b and diagonal.
  struct Match {
    uint32_t b;
    int64_t diag;
    uint32_t i;   // occurrence index in a (its pos, range)
    uint32_t jb;  // occurrence index in b
  };
  std::vector<std::vector<PairSummary>> res(slots);
  std::vector<std::vector<Match>> mbuf(slots);
  parallel::ParallelFor(doc_start.size() - 1, 4, slots, [&](size_t b0, size_t e0, size_t slot) {
    std::vector<Match>& m = mbuf[slot];
    std::vector<std::pair<uint32_t, uint32_t>> ra, rb;
    for (size_t g = b0; g < e0; g++) {
      m.clear();
      for (size_t t = doc_start[g]; t < doc_start[g + 1]; t++) {
        const uint32_t oi = by_doc[t];
        const Occ& oa = occ[oi];
        for (uint32_t u = key_start[oa.key]; u < key_start[oa.key + 1]; u++) {
          const Occ& ob = occ[by_key[u]];
          if (ob.doc > oa.doc) m.push_back(Match{ob.doc, int64_t(oa.pos) - int64_t(ob.pos), oi, by_key[u]});
        }
      }
      std::sort(m.begin(), m.end(), [&](const Match& x, const Match& y) {
        if (x.b != y.b) return x.b < y.b;
        if (x.diag != y.diag) return x.diag < y.diag;
        return occ[x.i].pos < occ[y.i].pos;
      });
      for (size_t k = 0; k < m.size();) {
        size_t l = k;
        PairSummary p;
        p.a = occ[m[k].i].doc;
        p.b = m[k].b;
        ra.clear();
        rb.clear();
        while (l < m.size() && m[l].b == p.b) {
          // one run: consecutive positions on one diagonal
          size_t r = l + 1;
          while (r < m.size() && m[r].b == p.b && m[r].diag == m[l].diag && occ[m[r].i].pos == occ[m[r - 1].i].pos + 1) r++;
          p.passages++;
          p.windows += uint32_t(r - l);
          ra.push_back({occ[m[l].i].begin, occ[m[r - 1].i].end});
          rb.push_back({occ[m[l].jb].begin, occ[m[r - 1].jb].end});
          l = r;
        }
        if (p.passages >= min_passages) {
          p.bytes_a = UnionBytes(&ra);
          p.bytes_b = UnionBytes(&rb);
          res[slot].push_back(p);
        }
        k = l;
      }
    }
  }, stop);
  if (stop && stop->load()) return Cancelled();
  for (auto& r : res) out->insert(out->end(), r.begin(), r.end());
  std::sort(out->begin(), out->end(), [](const PairSummary& x, const PairSummary& y) {
    if (x.passages != y.passages) return x.passages > y.passages;
    if (x.windows != y.windows) return x.windows > y.windows;
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  return Status::Ok();
}

}  // namespace postings
}  // namespace neardup
