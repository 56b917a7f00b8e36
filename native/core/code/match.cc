#include "code/match.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <tuple>

#include "io/file.h"
#include "parallel/pool.h"
#include "text/utf8.h"

namespace neardup {
namespace code {
namespace {

constexpr uint32_t kBaseBit = 0x80000000u;

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Entry {  // one fingerprint of one file
  uint64_t hash;
  uint32_t file, index;  // index into the file's fingerprints
};

struct PairEntry {  // one pair of equal fingerprints of two files of different groups, group of a < group of b
  uint32_t ga, gb, fa, fb, ia, ib;
};
inline bool operator<(const PairEntry& x, const PairEntry& y) {
  return std::tie(x.ga, x.gb, x.fa, x.fb, x.ia, x.ib) < std::tie(y.ga, y.gb, y.fa, y.fb, y.ia, y.ib);
}

}  // namespace

Status CodeCorpus::Add(const std::vector<Source>& sources, std::vector<SourceState>* states, const std::atomic<bool>* stop) {
  const size_t n = sources.size();
  states->assign(n, SourceState::kIndexed);
  std::vector<File> made(n);
  std::vector<std::vector<uint64_t>> base(parallel::MaxSlots());
  std::vector<Status> errors(n);
  const size_t slots = parallel::MaxSlots();
  parallel::ParallelFor(n, 4, slots, [&](size_t b, size_t e, size_t slot) {
    std::string buf;
    std::vector<Token> toks;
    for (size_t i = b; i < e; i++) {
      const Source& s = sources[i];
      const uint8_t* p = s.data;
      size_t len = s.size;
      if (!s.path.empty()) {
        buf.clear();
        Status st = io::ReadFile(s.path, &buf);
        if (!st.ok()) {
          errors[i] = st;
          continue;
        }
        p = reinterpret_cast<const uint8_t*>(buf.data());
        len = buf.size();
      } else if (p == nullptr) {
        p = reinterpret_cast<const uint8_t*>("");
        len = 0;
      }
      if (len > opts_.max_file_bytes || len >= (uint64_t(1) << 32)) {
        (*states)[i] = SourceState::kTooLarge;
        continue;
      }
      if (std::memchr(p, 0, len) != nullptr) {
        (*states)[i] = SourceState::kBinary;
        continue;
      }
      if (!utf8::IsValid(p, len)) {
        (*states)[i] = SourceState::kInvalidUtf8;
        continue;
      }
      size_t skip = 0;
      if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) skip = 3;  // a byte-order mark
      toks.clear();
      Tokenize(p + skip, len - skip, s.lang, opts_.lex, &toks);
      File& f = made[i];
      f.group = s.group;
      f.values.resize(toks.size());
      f.lines.resize(toks.size());
      for (size_t t = 0; t < toks.size(); t++) {
        f.values[t] = toks[t].value;
        f.lines[t] = toks[t].line;
      }
      if (s.base) {
        (*states)[i] = SourceState::kBase;
        KgramHashes(f.values.data(), f.values.size(), opts_.k, &base[slot]);
        f.values.clear();
        f.lines.clear();
      }
    }
  }, stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "stopped");
  for (size_t i = 0; i < n; i++)
    if (!errors[i].ok()) return errors[i];
  for (size_t i = 0; i < n; i++) {
    if ((*states)[i] == SourceState::kBase) base_files_++;
    if ((*states)[i] != SourceState::kIndexed) continue;
    tokens_ += made[i].values.size();
    made[i].values.shrink_to_fit();
    made[i].lines.shrink_to_fit();
    files_.push_back(std::move(made[i]));
  }
  bool added = false;
  for (auto& v : base) {
    if (!v.empty()) added = true;
    base_.insert(base_.end(), v.begin(), v.end());
  }
  if (added) {
    std::sort(base_.begin(), base_.end());
    base_.erase(std::unique(base_.begin(), base_.end()), base_.end());
  }
  return Status::Ok();
}

Status CodeCorpus::Match(const MatchOptions& o, std::vector<PairResult>* out, MatchStats* stats) const {
  out->clear();
  *stats = MatchStats();
  const auto t0 = std::chrono::steady_clock::now();
  const size_t nf = files_.size();
  const uint32_t k = opts_.k, w = opts_.w;
  const uint32_t guarantee = w + k - 1;
  const size_t slots = parallel::MaxSlots();
  stats->files = nf;
  stats->base_files = base_files_;
  stats->tokens = tokens_;
  stats->base_kgrams = base_.size();
  auto stopped = [&] { return o.stop && o.stop->load(); };

  // 1. Each file's fingerprints; with base code, the tokens of its k-grams are marked (never equal in an
  // extension) and the fingerprints among them dropped.
  std::vector<std::vector<Fingerprint>> fps(nf);
  std::vector<std::vector<uint32_t>> marked(nf);  // values with the base bit where base code lies
  std::vector<uint64_t> base_dropped(slots, 0);
  parallel::ParallelFor(nf, 16, slots, [&](size_t b, size_t e, size_t slot) {
    std::vector<uint64_t> hashes;
    std::vector<Fingerprint> all;
    for (size_t f = b; f < e; f++) {
      const std::vector<uint32_t>& v = files_[f].values;
      hashes.clear();
      KgramHashes(v.data(), v.size(), k, &hashes);
      all.clear();
      Winnow(hashes.data(), hashes.size(), w, &all);
      if (base_.empty()) {
        fps[f] = all;
        continue;
      }
      std::vector<uint32_t> m = v;
      bool any = false;
      for (size_t p = 0; p < hashes.size(); p++) {
        if (std::binary_search(base_.begin(), base_.end(), hashes[p])) {
          any = true;
          for (size_t t = p; t < p + k; t++) m[t] |= kBaseBit;
        }
      }
      std::vector<Fingerprint>& kept = fps[f];
      for (const Fingerprint& x : all) {
        if (any && std::binary_search(base_.begin(), base_.end(), x.hash)) base_dropped[slot]++;
        else kept.push_back(x);
      }
      if (any) marked[f] = std::move(m);
    }
  }, o.stop);
  if (stopped()) return Status(Code::kCancelled, "stopped");
  for (uint64_t d : base_dropped) stats->base_fingerprints += d;

  // fingerprints per group (the shared fractions' denominators)
  // groups numbered densely here (the caller's numbers may be sparse), mapped back in the results
  std::vector<uint32_t> group_ids(nf), group_of(nf);
  for (size_t f = 0; f < nf; f++) group_ids[f] = files_[f].group;
  std::sort(group_ids.begin(), group_ids.end());
  group_ids.erase(std::unique(group_ids.begin(), group_ids.end()), group_ids.end());
  for (size_t f = 0; f < nf; f++)
    group_of[f] = uint32_t(std::lower_bound(group_ids.begin(), group_ids.end(), files_[f].group) - group_ids.begin());
  const uint32_t ngroups = uint32_t(group_ids.size());
  std::vector<uint64_t> group_fps(ngroups, 0);
  std::vector<uint64_t> first(nf + 1, 0);
  for (size_t f = 0; f < nf; f++) {
    group_fps[group_of[f]] += fps[f].size();
    first[f + 1] = first[f] + fps[f].size();
  }
  const uint64_t total = first[nf];
  stats->fingerprints = total;

  // 2. All fingerprints by hash: scattered into 256 buckets by the hash's top byte, each sorted on the pool.
  std::vector<Entry> entries(total);
  std::vector<uint64_t> bucket_start(257, 0);
  {
    std::vector<uint64_t> counts(256, 0);
    for (size_t f = 0; f < nf; f++)
      for (const Fingerprint& x : fps[f]) counts[x.hash >> 56]++;
    for (int b = 0; b < 256; b++) bucket_start[b + 1] = bucket_start[b] + counts[b];
    std::vector<uint64_t> at(bucket_start.begin(), bucket_start.end() - 1);
    for (size_t f = 0; f < nf; f++) {
      const std::vector<Fingerprint>& v = fps[f];
      for (size_t i = 0; i < v.size(); i++) entries[at[v[i].hash >> 56]++] = Entry{v[i].hash, uint32_t(f), uint32_t(i)};
    }
  }
  parallel::ParallelFor(256, 1, slots, [&](size_t b, size_t e, size_t) {
    for (size_t x = b; x < e; x++)
      std::sort(entries.begin() + bucket_start[x], entries.begin() + bucket_start[x + 1], [](const Entry& p, const Entry& q) {
        return std::tie(p.hash, p.file, p.index) < std::tie(q.hash, q.file, q.index);
      });
  }, o.stop);
  if (stopped()) return Status(Code::kCancelled, "stopped");

  // 3. Runs of one hash: boilerplate (in more than max_groups groups) dropped, and in each run the entries of
  // files holding the hash more than max_repeat times; the usable entries of each run kept (indices into
  // entries), and counted by the pair entries they make per lower group (to plan the passes).
  std::vector<std::vector<uint64_t>> use_of(slots);
  std::vector<std::vector<uint64_t>> run_ends_of(slots);  // end of each run in use_of[slot]
  std::vector<std::vector<uint64_t>> owner_counts(slots, std::vector<uint64_t>(ngroups, 0));
  std::vector<MatchStats> part(slots);
  parallel::ParallelFor(256, 1, slots, [&](size_t b, size_t e, size_t slot) {
    std::vector<uint32_t> groups;
    std::vector<uint64_t>& use = use_of[slot];
    MatchStats& st = part[slot];
    for (size_t x = b; x < e; x++) {
      uint64_t i = bucket_start[x];
      const uint64_t end = bucket_start[x + 1];
      while (i < end) {
        uint64_t j = i + 1;
        while (j < end && entries[j].hash == entries[i].hash) j++;
        if (j - i >= 2) {
          groups.clear();
          for (uint64_t y = i; y < j; y++)
            if (y == i || entries[y].file != entries[y - 1].file) groups.push_back(group_of[entries[y].file]);
          std::sort(groups.begin(), groups.end());
          const size_t distinct = size_t(std::unique(groups.begin(), groups.end()) - groups.begin());
          if (distinct >= 2 && o.max_groups != 0 && distinct > o.max_groups) {
            st.boilerplate_hashes++;
            st.boilerplate_fingerprints += j - i;
          } else if (distinct >= 2) {
            const size_t from = use.size();
            uint64_t y = i;
            while (y < j) {
              uint64_t z = y + 1;
              while (z < j && entries[z].file == entries[y].file) z++;
              if (z - y > o.max_repeat) st.repeated_fingerprints += z - y;
              else for (uint64_t q = y; q < z; q++) use.push_back(q);
              y = z;
            }
            for (size_t p = from; p < use.size(); p++) {
              const uint32_t fa = entries[use[p]].file, ga = group_of[fa];
              for (size_t q = p + 1; q < use.size(); q++) {
                const uint32_t fb = entries[use[q]].file, gb = group_of[fb];
                if (ga != gb) owner_counts[slot][std::min(ga, gb)]++;
              }
            }
            if (use.size() - from < 2) use.resize(from);
            else run_ends_of[slot].push_back(use.size());
          }
        }
        i = j;
      }
    }
  }, o.stop);
  if (stopped()) return Status(Code::kCancelled, "stopped");
  for (size_t s = 1; s < slots; s++)
    for (uint32_t g = 0; g < ngroups; g++) owner_counts[0][g] += owner_counts[s][g];
  for (const MatchStats& st : part) {
    stats->boilerplate_hashes += st.boilerplate_hashes;
    stats->boilerplate_fingerprints += st.boilerplate_fingerprints;
    stats->repeated_fingerprints += st.repeated_fingerprints;
  }
  // the runs back to back: run r is use[run_at[r] .. run_at[r + 1])
  std::vector<uint64_t> use, run_at{0};
  for (size_t sl = 0; sl < slots; sl++) {
    const uint64_t base_at = use.size();
    use.insert(use.end(), use_of[sl].begin(), use_of[sl].end());
    for (uint64_t e : run_ends_of[sl]) run_at.push_back(base_at + e);
    std::vector<uint64_t>().swap(use_of[sl]);
  }
  const size_t nruns = run_at.size() - 1;
  stats->seconds_fingerprints = Since(t0);
  const auto t1 = std::chrono::steady_clock::now();

  // 4. Passes over ranges of lower groups, each making at most pair_budget entries (at least one group).
  const std::vector<uint64_t>& owner = owner_counts[0];
  uint32_t lo = 0;
  std::vector<std::vector<PairResult>> results(slots);
  while (lo < ngroups) {
    uint32_t hi = lo;
    uint64_t budget = 0;
    while (hi < ngroups && (hi == lo || budget + owner[hi] <= o.pair_budget)) budget += owner[hi++];
    stats->passes++;
    std::vector<std::vector<PairEntry>> made(slots);
    parallel::ParallelFor(nruns, 1024, slots, [&](size_t b, size_t e, size_t slot) {
      std::vector<PairEntry>& m = made[slot];
      for (size_t r = b; r < e; r++) {
        for (uint64_t p = run_at[r]; p < run_at[r + 1]; p++) {
          const Entry& x = entries[use[p]];
          const uint32_t ga = group_of[x.file];
          for (uint64_t q = p + 1; q < run_at[r + 1]; q++) {
            const Entry& y = entries[use[q]];
            const uint32_t gb = group_of[y.file];
            if (ga == gb || std::min(ga, gb) < lo || std::min(ga, gb) >= hi) continue;
            if (ga < gb) m.push_back(PairEntry{ga, gb, x.file, y.file, x.index, y.index});
            else m.push_back(PairEntry{gb, ga, y.file, x.file, y.index, x.index});
          }
        }
      }
    }, o.stop);
    if (stopped()) return Status(Code::kCancelled, "stopped");
    std::vector<PairEntry> pe;
    {
      size_t n = 0;
      for (auto& v : made) n += v.size();
      pe.reserve(n);
      for (auto& v : made) {
        pe.insert(pe.end(), v.begin(), v.end());
        std::vector<PairEntry>().swap(v);
      }
    }
    stats->pair_entries += pe.size();
    // sorted in parts by lower group (each part a range of groups), on the pool
    {
      const size_t parts = std::min<size_t>(64, hi - lo);
      std::vector<uint32_t> cut(parts + 1, hi);
      cut[0] = lo;
      uint64_t acc = 0, per = std::max<uint64_t>(1, budget / parts);
      size_t c = 1;
      for (uint32_t g = lo; g < hi && c < parts; g++) {
        acc += owner[g];
        if (acc >= per * c) cut[c++] = g + 1;
      }
      std::vector<uint64_t> cstart(parts + 1, 0);
      auto part_of = [&](uint32_t g) { return size_t(std::upper_bound(cut.begin(), cut.end(), g) - cut.begin()) - 1; };
      for (const PairEntry& x : pe) cstart[std::min(part_of(x.ga), parts - 1) + 1]++;
      for (size_t i = 0; i < parts; i++) cstart[i + 1] += cstart[i];
      std::vector<PairEntry> sorted(pe.size());
      std::vector<uint64_t> at(cstart.begin(), cstart.end() - 1);
      for (const PairEntry& x : pe) sorted[at[std::min(part_of(x.ga), parts - 1)]++] = x;
      std::vector<PairEntry>().swap(pe);
      parallel::ParallelFor(parts, 1, slots, [&](size_t b, size_t e, size_t) {
        for (size_t i = b; i < e; i++) std::sort(sorted.begin() + cstart[i], sorted.begin() + cstart[i + 1]);
      }, o.stop);
      pe.swap(sorted);
    }
    if (stopped()) return Status(Code::kCancelled, "stopped");
    // group pairs: runs of (ga, gb)
    std::vector<uint64_t> pair_at;
    for (uint64_t i = 0; i < pe.size(); i++)
      if (i == 0 || pe[i].ga != pe[i - 1].ga || pe[i].gb != pe[i - 1].gb) pair_at.push_back(i);
    pair_at.push_back(pe.size());
    const size_t npairs = pair_at.size() - 1;
    stats->candidate_pairs += npairs;
    std::vector<uint64_t> mems(slots, 0);
    parallel::ParallelFor(npairs, 64, slots, [&](size_t b, size_t e, size_t slot) {
      std::vector<std::pair<uint32_t, uint32_t>> seen_a, seen_b;
      struct M {
        int64_t diag;
        uint32_t pa, pb;
      };
      std::vector<M> ms;
      struct Mem {
        uint32_t a, b, len;
      };
      std::vector<Mem> found;
      std::vector<size_t> active;
      for (size_t x = b; x < e; x++) {
        const uint64_t from = pair_at[x], to = pair_at[x + 1];
        PairResult r;
        r.group_a = pe[from].ga;
        r.group_b = pe[from].gb;
        seen_a.clear();
        seen_b.clear();
        for (uint64_t i = from; i < to; i++) {
          seen_a.emplace_back(pe[i].fa, pe[i].ia);
          seen_b.emplace_back(pe[i].fb, pe[i].ib);
        }
        std::sort(seen_a.begin(), seen_a.end());
        std::sort(seen_b.begin(), seen_b.end());
        r.matched_a = uint64_t(std::unique(seen_a.begin(), seen_a.end()) - seen_a.begin());
        r.matched_b = uint64_t(std::unique(seen_b.begin(), seen_b.end()) - seen_b.begin());
        r.shared_a = group_fps[r.group_a] ? double(r.matched_a) / double(group_fps[r.group_a]) : 0;
        r.shared_b = group_fps[r.group_b] ? double(r.matched_b) / double(group_fps[r.group_b]) : 0;
        if (std::max(r.shared_a, r.shared_b) < o.min_shared) continue;
        // file pairs within the group pair
        uint64_t i = from;
        while (i < to) {
          uint64_t j = i;
          const uint32_t fa = pe[i].fa, fb = pe[i].fb;
          while (j < to && pe[j].fa == fa && pe[j].fb == fb) j++;
          const std::vector<uint32_t>& va = marked[fa].empty() ? files_[fa].values : marked[fa];
          const std::vector<uint32_t>& vb = marked[fb].empty() ? files_[fb].values : marked[fb];
          ms.clear();
          for (uint64_t y = i; y < j; y++) {
            const uint32_t pa = fps[fa][pe[y].ia].pos, pb = fps[fb][pe[y].ib].pos;
            ms.push_back(M{int64_t(pa) - int64_t(pb), pa, pb});
          }
          std::sort(ms.begin(), ms.end(), [](const M& p, const M& q) { return std::tie(p.diag, p.pa) < std::tie(q.diag, q.pa); });
          found.clear();
          int64_t diag = INT64_MIN;
          uint32_t covered = 0;  // end in A of the last MEM on this diagonal
          auto eq = [&](uint32_t p, uint32_t q) { return va[p] == vb[q] && (va[p] & kBaseBit) == 0; };
          for (const M& m : ms) {
            if (m.diag == diag && m.pa < covered) continue;
            bool same = true;
            for (uint32_t t = 0; t < k && same; t++) same = eq(m.pa + t, m.pb + t);
            if (!same) continue;  // a hash collision, or base code
            uint32_t a0 = m.pa, b0 = m.pb;
            while (a0 > 0 && b0 > 0 && eq(a0 - 1, b0 - 1)) a0--, b0--;
            uint32_t a1 = m.pa + k, b1 = m.pb + k;
            while (a1 < va.size() && b1 < vb.size() && eq(a1, b1)) a1++, b1++;
            diag = m.diag;
            covered = a1;
            if (a1 - a0 >= guarantee) found.push_back(Mem{a0, b0, a1 - a0});
          }
          mems[slot] += found.size();
          // merge MEMs in order in both files with small gaps (greedy, by start in A then B)
          std::sort(found.begin(), found.end(), [](const Mem& p, const Mem& q) { return std::tie(p.a, p.b) < std::tie(q.a, q.b); });
          const size_t first_region = r.regions.size();
          active.clear();  // regions that a later MEM (starting at or after this one in A) can still extend
          for (const Mem& m : found) {
            bool merged = false;
            size_t keep = 0;
            for (size_t g : active) {
              Region& rg = r.regions[g];
              if (uint64_t(rg.a_end) + o.merge_gap < m.a) continue;  // closed for good
              active[keep++] = g;
              if (!merged && m.a >= rg.a_end && m.b >= rg.b_end && m.b - rg.b_end <= o.merge_gap) {
                rg.a_end = m.a + m.len;
                rg.b_end = m.b + m.len;
                merged = true;
              }
            }
            active.resize(keep);
            if (!merged) {
              active.push_back(r.regions.size());
              Region rg;
              rg.file_a = fa;
              rg.file_b = fb;
              rg.a_begin = m.a;
              rg.a_end = m.a + m.len;
              rg.b_begin = m.b;
              rg.b_end = m.b + m.len;
              r.regions.push_back(rg);
            }
          }
          // tokens of A covered (union of the regions' ranges)
          std::vector<std::pair<uint32_t, uint32_t>> iv;
          for (size_t g = first_region; g < r.regions.size(); g++) {
            Region& rg = r.regions[g];
            rg.tokens = rg.a_end - rg.a_begin;
            rg.a_first_line = files_[fa].lines[rg.a_begin];
            rg.a_last_line = files_[fa].lines[rg.a_end - 1];
            rg.b_first_line = files_[fb].lines[rg.b_begin];
            rg.b_last_line = files_[fb].lines[rg.b_end - 1];
            iv.emplace_back(rg.a_begin, rg.a_end);
          }
          std::sort(iv.begin(), iv.end());
          uint32_t reach = 0;
          for (auto& v : iv) {
            const uint32_t s = std::max(v.first, reach);
            if (v.second > s) r.tokens += v.second - s;
            reach = std::max(reach, v.second);
          }
          std::sort(r.regions.begin() + first_region, r.regions.end(),
                    [](const Region& p, const Region& q) { return std::tie(p.a_begin, p.b_begin) < std::tie(q.a_begin, q.b_begin); });
          i = j;
        }
        if (!r.regions.empty()) results[slot].push_back(std::move(r));
      }
    }, o.stop);
    if (stopped()) return Status(Code::kCancelled, "stopped");
    for (uint64_t m : mems) stats->mems += m;
    lo = hi;
  }
  for (auto& v : results)
    for (auto& r : v) {
      r.group_a = group_ids[r.group_a];
      r.group_b = group_ids[r.group_b];
      out->push_back(std::move(r));
    }
  std::sort(out->begin(), out->end(), [](const PairResult& p, const PairResult& q) {
    const double x = std::max(p.shared_a, p.shared_b), y = std::max(q.shared_a, q.shared_b);
    if (x != y) return x > y;
    if (p.tokens != q.tokens) return p.tokens > q.tokens;
    return std::tie(p.group_a, p.group_b) < std::tie(q.group_a, q.group_b);
  });
  stats->seconds_pairs = Since(t1);
  return Status::Ok();
}

}  // namespace code
}  // namespace neardup
