// Core tests for LSH: datasketch's (b, r), union-find roots, index pairs vs brute force, spill == memory.
#include <dirent.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <unistd.h>

#include "check.h"
#include "minhash/lsh.h"
#include "minhash/lsh_dedup.h"
#include "minhash/shingle_set.h"
#include "minhash/union_find.h"
#include "text/shingle.h"
#include "util/cpu.h"

using namespace neardup;

TEST(optimal_param_samples) {
  // From test/fixtures/vectors/datasketch-legacy optimal_param.
  struct C { uint32_t k; double t; uint32_t b, r; } cases[] = {
      {16, 0.1, 15, 1}, {64, 0.3, 21, 3}, {128, 0.8, 9, 13}, {128, 0.5, 25, 5}, {200, 0.95, 4, 48}, {256, 0.9, 9, 28}};
  for (const C& c : cases) {
    uint32_t b = 0, r = 0;
    EXPECT(lsh::OptimalParam(c.t, c.k, 0.5, 0.5, &b, &r).ok());
    EXPECT_EQ(b, c.b);
    EXPECT_EQ(r, c.r);
  }
  uint32_t b, r;
  EXPECT(!lsh::OptimalParam(1.5, 128, 0.5, 0.5, &b, &r).ok());
}

#include "banding_reference.h"  // GaussLegendreArea, ExhaustiveOptimal
using banding_reference::ExhaustiveOptimal;
using banding_reference::GaussLegendreArea;

TEST(banding_areas_match_quadrature) {
  std::mt19937 rng(7);
  double worst = 0;
  for (int i = 0; i < 3000; i++) {
    const uint32_t b = 1 + rng() % (i < 1500 ? 64 : 4096), r = 1 + rng() % (i % 3 == 0 ? 200 : 24);
    const double t = 0.01 + 0.98 * (rng() % 10000) / 10000.0;
    double fp, fn;
    lsh::BandingAreas(t, b, r, &fp, &fn);
    worst = std::max(worst, std::fabs(fp - GaussLegendreArea(0, t, b, r, true)));
    worst = std::max(worst, std::fabs(fn - GaussLegendreArea(t, 1, b, r, false)));
  }
  // the reference itself sums up to ~400k rounded terms
  EXPECT(worst < 1e-11);
  if (!(worst < 1e-11)) std::fprintf(stderr, "worst area error %g\n", worst);
}

TEST(optimal_param_equals_exhaustive_scan) {
  const double ts[] = {0.05, 0.1, 0.3, 0.5, 0.62, 0.75, 0.8, 0.85, 0.9, 0.97};
  const double ws[][2] = {{0.5, 0.5}, {0.1, 0.9}, {0.9, 0.1}, {0, 1}, {1, 0}};
  for (uint32_t n : {1u, 2u, 7u, 16u, 33u, 64u, 100u, 128u}) {
    for (double t : ts) {
      for (const auto& w : ws) {
        if (n > 64 && w[0] != 0.5) continue;
        uint32_t b = 0, r = 0, eb = 0, er = 0;
        EXPECT(lsh::OptimalParam(t, n, w[0], w[1], &b, &r).ok());
        if (w[1] == 0) {
          // FP alone falls strictly with r: the optimum is (1, n). The quadrature's FP underflows to exactly
          // 0 from some r on (t^(r+1)/(r+1) below rounding), a tie it resolves to the first such r.
          eb = 1, er = n;
        } else {
          ExhaustiveOptimal(t, n, w[0], w[1], &eb, &er);
        }
        EXPECT_EQ(b, eb);
        EXPECT_EQ(r, er);
      }
    }
  }
}

TEST(optimal_param_large_num_perm) {
  uint32_t b = 0, r = 0;
  EXPECT(lsh::OptimalParam(0.8, 65536, 0.5, 0.5, &b, &r).ok());
  EXPECT(b >= 1 && r >= 1 && uint64_t(b) * r <= 65536);
  EXPECT(!lsh::OptimalParam(0.8, (1u << 20) + 1, 0.5, 0.5, &b, &r).ok());
}

TEST(union_find_root_is_first) {
  UnionFind uf(6);
  uf.Union(5, 3);
  uf.Union(3, 4);
  uf.Union(4, 1);
  std::vector<uint32_t> roots;
  uf.Roots(&roots);
  EXPECT_EQ(roots[5], 1u);
  EXPECT_EQ(roots[3], 1u);
  EXPECT_EQ(roots[0], 0u);
  EXPECT_EQ(roots[2], 2u);
}

static std::vector<uint32_t> RandomSigs(size_t n, uint32_t k, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint32_t> s(n * k);
  for (size_t i = 0; i < n; i++) {
    const bool copy = i > 5 && g() % 2;
    const size_t src = copy ? g() % i : 0;
    for (uint32_t v = 0; v < k; v++) s[i * k + v] = copy && g() % 5 ? s[src * k + v] : g() % 8;
  }
  return s;
}

TEST(index_pairs_match_brute_force) {
  lsh::Params p;
  p.profile = lsh::Profile::kDatasketch;
  p.num_perm = 16;
  p.b = 4;
  p.r = 4;
  p.value_bytes = 4;
  const size_t n = 120;
  auto sigs = RandomSigs(n, 16, 3);
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; i++) ids[i] = i;
  lsh::Index idx(p);
  EXPECT(idx.Insert(ids.data(), reinterpret_cast<const uint8_t*>(sigs.data()), n, 1, nullptr).ok());
  EXPECT(!idx.Insert(ids.data(), reinterpret_cast<const uint8_t*>(sigs.data()), 1, 1, nullptr).ok());
  std::vector<lsh::Pair> pairs;
  idx.CandidatePairs(&pairs);
  std::vector<lsh::Pair> expect;
  for (size_t a = 0; a < n; a++)
    for (size_t b = a + 1; b < n; b++)
      for (uint32_t j = 0; j < 4; j++)
        if (std::memcmp(&sigs[a * 16 + j * 4], &sigs[b * 16 + j * 4], 16) == 0) {
          expect.emplace_back(a, b);
          break;
        }
  EXPECT(!expect.empty());
  EXPECT(pairs == expect);

  // the cap: exactly the count passes, one less fails with kTooManyResults and an empty output
  EXPECT(idx.CandidatePairs(&pairs, expect.size()).ok());
  EXPECT(pairs == expect);
  Status capped = idx.CandidatePairs(&pairs, expect.size() - 1);
  EXPECT(capped.code() == Code::kTooManyResults);
  EXPECT(pairs.empty());

  // the stream in chunks of 1, 3 and 1000 pairs (mutable and saved/frozen) gives the same pairs, in order
  char dir[] = "/tmp/neardup-lsh-pairs-XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/i.lsh";
  EXPECT(idx.Save(path).ok());
  lsh::FrozenIndex frozen;
  EXPECT(frozen.Load(path, true).ok());
  std::vector<lsh::Pair> fpairs;
  EXPECT(frozen.CandidatePairs(&fpairs).ok());
  EXPECT(fpairs == expect);
  for (size_t chunk : {size_t(1), size_t(3), size_t(1000)}) {
    for (int which = 0; which < 2; which++) {
      lsh::PairStream stream = which ? lsh::PairStream(frozen) : lsh::PairStream(idx);
      std::vector<lsh::Pair> got;
      bool done = false;
      size_t calls = 0;
      while (!done) {
        const size_t before = got.size();
        EXPECT(stream.Next(chunk, &got, &done).ok());
        EXPECT(got.size() - before <= chunk);
        calls++;
      }
      EXPECT(got == expect);
      EXPECT(calls >= expect.size() / chunk);
    }
  }
  std::remove(path.c_str());
  rmdir(dir);
  // a changed index stops the stream
  lsh::PairStream stream(idx);
  std::vector<lsh::Pair> got;
  bool done = false;
  EXPECT(stream.Next(1, &got, &done).ok());
  EXPECT(idx.Remove(expect[0].second));
  EXPECT(!stream.Next(1, &got, &done).ok());
}

TEST(spill_equals_memory) {
  lsh::DedupOptions o;
  o.params.profile = lsh::Profile::kFast;
  o.params.num_perm = 16;
  o.params.b = 8;
  o.params.r = 2;
  o.params.value_bytes = 4;
  o.want_pairs = true;
  o.verify = lsh::Verify::kEstimate;
  o.threshold = 0.5;
  const size_t n = 500;
  auto sigs = RandomSigs(n, 16, 9);
  lsh::DedupResult a, b;
  {
    lsh::Dedup d(o);
    EXPECT(d.Init().ok());
    for (size_t at = 0; at < n; at += 100)
      EXPECT(d.AddSigned(reinterpret_cast<const uint8_t*>(&sigs[at * 16]), 100, nullptr, nullptr, 2, nullptr).ok());
    EXPECT(d.Finish(2, nullptr, &a).ok());
  }
  char dir[] = "/tmp/neardup-lsh-test-XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr);
  o.memory_bytes = 2048;
  o.tmp_dir = dir;
  {
    lsh::Dedup d(o);
    EXPECT(d.Init().ok());
    for (size_t at = 0; at < n; at += 100)
      EXPECT(d.AddSigned(reinterpret_cast<const uint8_t*>(&sigs[at * 16]), 100, nullptr, nullptr, 2, nullptr).ok());
    EXPECT(d.Finish(2, nullptr, &b).ok());
  }
  rmdir(dir);
  EXPECT(b.runs > 5);
  EXPECT(a.rep == b.rep);
  EXPECT(a.pair_a == b.pair_a);
  EXPECT(a.pair_b == b.pair_b);
  EXPECT(a.kept_pairs > 0);
  EXPECT(a.duplicates > 0);
}

static size_t OpenFds() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) n++;
    closedir(d);
  }
  return n;
}

// Entries of `dir` and of its sub-folders (one level: the spill folder).
static size_t FilesIn(const std::string& dir, bool recurse = true) {
  size_t n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      n++;
      if (recurse && e->d_type == DT_DIR) n += FilesIn(dir + "/" + e->d_name, false);
    }
    closedir(d);
  }
  return n;
}

// A budget of one document per run: thousands of runs are merged with a bounded fan-in (few files open,
// few files on disk), and the buckets are exactly those of the in-memory grouping.
TEST(spill_merges_with_bounded_fan_in) {
  const uint32_t bands = 3;
  const size_t n = 3000;
  std::vector<uint64_t> keys(n * bands);
  uint64_t x = 88172645463325252ull;
  for (auto& k : keys) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    k = x % 700;  // many collisions: buckets of several docs
  }
  auto collect = [&](lsh::BandRuns& r) {
    std::vector<std::vector<uint64_t>> out;
    for (uint32_t j = 0; j < bands; j++)
      EXPECT(r.ForEachBucket(j, 2, [&](const uint64_t* d, size_t m) { out.emplace_back(d, d + m); }).ok());
    return out;
  };
  lsh::BandRuns mem(bands, 0, ".");
  EXPECT(mem.Add(keys.data(), n, 0, nullptr, 2, nullptr).ok());
  const auto want = collect(mem);
  EXPECT(want.size() > 100);

  char dir[] = "/tmp/neardup-merge-test-XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr);
  {
    lsh::BandRuns sp(bands, 1, dir);  // budget: `bands` entries = one document
    sp.set_fan_in(4);
    const size_t fds = OpenFds();
    size_t most_files = 0;
    for (size_t i = 0; i < n; i++) {
      EXPECT(sp.Add(&keys[i * bands], 1, i, nullptr, 2, nullptr).ok());
      most_files = std::max(most_files, FilesIn(dir));
    }
    EXPECT(OpenFds() <= fds + 1);
    EXPECT(most_files <= 2 * 4 + 1);
    EXPECT(sp.merges() > 100);
    EXPECT(sp.Seal(2, nullptr).ok());
    EXPECT(sp.runs() <= 4);
    const auto got = collect(sp);
    EXPECT(got == want);
  }
  EXPECT_EQ(FilesIn(dir), 0u);
  rmdir(dir);
}

// Through Dedup with the default fan-in: --memory 1 spills every document; same clusters as in memory.
TEST(dedup_tiny_memory_equals_memory) {
  lsh::DedupOptions o;
  o.params.profile = lsh::Profile::kFast;
  o.params.num_perm = 16;
  o.params.b = 8;
  o.params.r = 2;
  o.params.value_bytes = 4;
  const size_t n = 1500;
  auto sigs = RandomSigs(n, 16, 5);
  for (size_t i = 100; i < n; i += 7) std::copy(&sigs[(i - 100) * 16], &sigs[(i - 99) * 16], &sigs[i * 16]);
  lsh::DedupResult a, b;
  {
    lsh::Dedup d(o);
    EXPECT(d.Init().ok());
    EXPECT(d.AddSigned(reinterpret_cast<const uint8_t*>(sigs.data()), n, nullptr, nullptr, 2, nullptr).ok());
    EXPECT(d.Finish(2, nullptr, &a).ok());
  }
  char dir[] = "/tmp/neardup-lsh-test-XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr);
  o.memory_bytes = 1;
  o.tmp_dir = dir;
  {
    lsh::Dedup d(o);
    EXPECT(d.Init().ok());
    const size_t fds = OpenFds();
    for (size_t at = 0; at < n; at += 100)
      EXPECT(d.AddSigned(reinterpret_cast<const uint8_t*>(&sigs[at * 16]), 100, nullptr, nullptr, 2, nullptr).ok());
    EXPECT(OpenFds() <= fds + 1);
    EXPECT(FilesIn(dir) <= 2 * lsh::BandRuns::kDefaultFanIn + 3);
    EXPECT(d.Finish(2, nullptr, &b).ok());
  }
  EXPECT_EQ(FilesIn(dir), 0u);
  rmdir(dir);
  EXPECT(b.runs <= lsh::BandRuns::kDefaultFanIn);
  EXPECT(a.duplicates > 100);
  EXPECT(a.rep == b.rep);
}

// doubri's rule: documents decided in order, one dropped only for a kept one. Band 0 buckets {1, 2}, band 1
// buckets {0, 1}: 1 is dropped for 0; 2 shares a bucket only with the dropped 1, so it is kept. Components join
// all three. The same with verified pairs (estimate 0.5 >= 0.5 for (0,1) and (1,2), 0 for (0,2)).
TEST(keep_rule_vs_components) {
  const uint32_t sigs[] = {5, 100, 7, 100, 7, 200};
  for (lsh::Verify v : {lsh::Verify::kNone, lsh::Verify::kEstimate}) {
    for (lsh::Clustering c : {lsh::Clustering::kKept, lsh::Clustering::kComponents}) {
      lsh::DedupOptions o;
      o.params.profile = lsh::Profile::kFast;
      o.params.num_perm = 2;
      o.params.b = 2;
      o.params.r = 1;
      o.params.value_bytes = 4;
      o.verify = v;
      o.threshold = 0.5;
      o.clustering = c;
      lsh::Dedup d(o);
      EXPECT(d.Init().ok());
      EXPECT(d.AddSigned(reinterpret_cast<const uint8_t*>(sigs), 3, nullptr, nullptr, 2, nullptr).ok());
      lsh::DedupResult r;
      EXPECT(d.Finish(2, nullptr, &r).ok());
      const std::vector<uint32_t> want = c == lsh::Clustering::kKept ? std::vector<uint32_t>{0, 0, 2} : std::vector<uint32_t>{0, 0, 0};
      EXPECT(r.rep == want);
      EXPECT(r.duplicates == (c == lsh::Clustering::kKept ? 1u : 2u));
      EXPECT(r.clusters == 1);
    }
  }
}

namespace {

// Documents as the engine's Docs view (the strings must outlive it).
struct DocsOf {
  std::vector<const uint8_t*> ptr;
  std::vector<size_t> len;
  explicit DocsOf(const std::vector<std::string>& t) {
    for (const auto& x : t) {
      ptr.push_back(reinterpret_cast<const uint8_t*>(x.data()));
      len.push_back(x.size());
    }
  }
  Docs slice(size_t from, size_t n) const { return Docs{ptr.data() + from, len.data() + from, n}; }
};

lsh::DedupOptions TextOptionsFor(double t, uint32_t b, uint32_t r) {
  lsh::DedupOptions o;
  o.params.profile = lsh::Profile::kFast;
  o.params.num_perm = b * r;
  o.params.b = b;
  o.params.r = r;
  o.params.value_bytes = 4;
  o.minhash = minhash::DefaultConfig(minhash::Profile::kFast);
  o.minhash.num_perm = b * r;
  o.minhash.text.lowercase = true;
  o.threshold = t;
  o.want_pairs = true;
  return o;
}

lsh::DedupResult RunTexts(lsh::DedupOptions o, const std::vector<std::string>& texts, const std::vector<uint8_t>& valid) {
  lsh::Dedup d(o);
  EXPECT(d.Init().ok());
  DocsOf docs(texts);
  for (size_t at = 0; at < texts.size(); at += 37) {
    const size_t n = std::min<size_t>(37, texts.size() - at);
    EXPECT(d.Add(docs.slice(at, n), valid.data() + at, 2, nullptr).ok());
  }
  lsh::DedupResult r;
  EXPECT(d.Finish(2, nullptr, &r).ok());
  return r;
}

}  // namespace

// Exact verification from the texts (Add signs them): the reported pairs are the candidate pairs whose
// Jaccard of shingle sets (brute force over the shingle stream) is >= t, with that value; the same for every
// verification budget (tiny ones put partners in different blocks) and with the texts in memory.
TEST(dedup_exact_equals_brute_force) {
  std::mt19937 rng(11);
  const char* words[] = {"Alpha", "beta", "gamma", "delta", "EPS", "zeta", "eta", "theta", "iota", "kappa", "\xc3\xa9t\xc3\xa9"};
  std::vector<std::string> texts;
  std::vector<uint8_t> valid;
  for (size_t i = 0; i < 300; i++) {
    std::string t;
    if (i > 5 && rng() % 2) {
      const std::string& src = texts[rng() % i];
      for (char c : src) t += rng() % 40 ? c : static_cast<char>('a' + rng() % 26);
    } else {
      for (int w = 0; w < 30 + int(rng() % 40); w++) t += std::string(words[rng() % 11]) + (rng() % 3 ? " " : "  ");
    }
    if (i % 50 == 7) t = i % 100 == 7 ? "" : "abc";
    texts.push_back(t);
    valid.push_back(i % 61 != 3);
  }
  const double t = 0.7;
  lsh::DedupOptions o = TextOptionsFor(t, 16, 3);
  o.verify = lsh::Verify::kEstimate;
  o.threshold = 0;
  const lsh::DedupResult cand = RunTexts(o, texts, valid);
  // truth
  Shingler sh(o.minhash.text);
  HashDedup dd;
  std::vector<std::vector<uint64_t>> sets;
  for (const auto& x : texts) {
    sh.Reset(x);
    std::vector<uint64_t> v;
    AppendShingleHashes<uint64_t>(sh, ShingleHash::kFast64, 0, true, &dd, &v);
    std::sort(v.begin(), v.end());
    sets.push_back(v);
  }
  std::vector<uint32_t> want_a, want_b;
  std::vector<float> want_j;
  for (size_t i = 0; i < cand.pair_a.size(); i++) {
    const auto& x = sets[cand.pair_a[i]];
    const auto& y = sets[cand.pair_b[i]];
    std::vector<uint64_t> both;
    std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
    const double j = x.empty() && y.empty() ? 1.0 : double(both.size()) / double(x.size() + y.size() - both.size());
    if (j < t) continue;
    want_a.push_back(cand.pair_a[i]);
    want_b.push_back(cand.pair_b[i]);
    want_j.push_back(static_cast<float>(j));
  }
  EXPECT(want_a.size() > 20);
  EXPECT(want_a.size() < cand.pair_a.size());
  char dir[] = "/tmp/neardup-lsh-test-XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr);
  o.verify = lsh::Verify::kExact;
  o.threshold = t;
  o.tmp_dir = dir;
  std::vector<uint32_t> rep;
  for (uint64_t memory : {uint64_t(0), uint64_t(1), uint64_t(2048), uint64_t(40000)}) {
    for (bool spill : {true, false}) {
      o.memory_bytes = memory;
      o.spill_texts = spill;
      const lsh::DedupResult r = RunTexts(o, texts, valid);
      EXPECT(r.pair_a == want_a);
      EXPECT(r.pair_b == want_b);
      EXPECT(r.pair_exact == want_j);
      EXPECT_EQ(r.candidate_pairs, cand.pair_a.size());
      if (rep.empty()) rep = r.rep;
      EXPECT(r.rep == rep);
      if (memory == 1) EXPECT(r.verify_sets > r.verify_docs);  // partners in other blocks: sets built again
      if (memory == 0) EXPECT_EQ(r.verify_sets, r.verify_docs);
      EXPECT_EQ(FilesIn(dir), 0u);
    }
  }
  rmdir(dir);
}

// The decision is inter / (na + nb - inter) >= t exactly: "abcdefg" and "abcdefgh" share 3 of 4 char 5-grams.
TEST(dedup_exact_at_the_threshold) {
  const std::vector<std::string> texts = {"abcdefg", "abcdefgh", "zzzzzzzz"};
  const std::vector<uint8_t> valid = {1, 1, 1};
  for (double t : {0.75, std::nextafter(0.75, 1.0)}) {
    lsh::DedupOptions o = TextOptionsFor(t, 64, 1);
    o.verify = lsh::Verify::kExact;
    o.spill_texts = false;
    const lsh::DedupResult r = RunTexts(o, texts, valid);
    EXPECT_EQ(r.candidate_pairs, 1u);
    EXPECT_EQ(r.kept_pairs, t == 0.75 ? 1u : 0u);
    if (t == 0.75) EXPECT(r.pair_exact == std::vector<float>{0.75f});
    EXPECT(r.rep == (t == 0.75 ? std::vector<uint32_t>{0, 0, 2} : std::vector<uint32_t>{0, 1, 2}));
  }
}

// SortHashes == std::sort on uniform, repeated and skewed values (equal top bits, tiny ranges), every size
// class (std::sort below 64, one to three radix passes).
TEST(sort_hashes_matches_std_sort) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> tmp;
  std::vector<uint32_t> cnt;
  for (size_t n : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(1000), size_t(70000), size_t(300000)}) {
    for (int kind = 0; kind < 4; kind++) {
      std::vector<uint64_t> v(n);
      for (auto& x : v) {
        const uint64_t r = rng();
        x = kind == 0 ? r : kind == 1 ? r % 50 : kind == 2 ? (uint64_t(7) << 40) | (r >> 30) : r & ~uint64_t(0xffff);
      }
      if (kind == 0 && n > 10) std::copy(v.begin(), v.begin() + n / 3, v.begin() + n / 2);  // repeats
      std::vector<uint64_t> want = v;
      std::sort(want.begin(), want.end());
      lsh::SortHashes(v.data(), n, &tmp, &cnt);
      EXPECT(v == want);
    }
  }
}

// JaccardAtLeast: every kernel the CPU has agrees with std::set_intersection, for thresholds just below, at
// and just above the true Jaccard (the early stop must never reject a pair that passes), on sets of all sizes
// around the block widths.
TEST(jaccard_at_least_all_kernels) {
  using lsh::IntersectKernel;
  using lsh::JaccardAtLeast;
  std::vector<IntersectKernel> kernels = {IntersectKernel::kPortable};
  if (Cpu().avx2 && Cpu().popcnt) kernels.push_back(IntersectKernel::kAvx2);
  if (Cpu().avx512f && Cpu().popcnt) kernels.push_back(IntersectKernel::kAvx512);
  std::mt19937_64 rng(17);
  size_t checked = 0;
  for (int round = 0; round < 3000; round++) {
    const size_t common = rng() % 200, only_a = rng() % (round % 3 ? 40 : 400), only_b = rng() % 60;
    // values interleaved over one range, so equal values sit at unrelated positions of the two sets
    std::set<uint64_t> a, b;
    while (a.size() < common) {
      const uint64_t x = rng() % 1000000 * 3;
      a.insert(x);
      b.insert(x);
    }
    while (a.size() < common + only_a) a.insert(rng() % 1000000 * 3 + 1);
    while (b.size() < common + only_b) b.insert(rng() % 1000000 * 3 + 2);
    const std::vector<uint64_t> va(a.begin(), a.end()), vb(b.begin(), b.end());
    const double truth = va.empty() && vb.empty() ? 1.0 : double(common) / double(va.size() + vb.size() - common);
    for (double t : {0.0, std::nextafter(truth, 0.0), truth, std::nextafter(truth, 2.0), 0.5, 0.8, 1.0}) {
      if (t > 1) continue;
      for (IntersectKernel k : kernels) {
        for (int swap = 0; swap < 2; swap++) {
          double j = -1;
          const bool got = swap ? JaccardAtLeast(vb.data(), vb.size(), va.data(), va.size(), t, &j, k)
                                : JaccardAtLeast(va.data(), va.size(), vb.data(), vb.size(), t, &j, k);
          EXPECT_EQ(got, truth >= t);
          if (got) EXPECT(j == truth);
          checked++;
        }
      }
    }
  }
  EXPECT(checked > 30000);
}

TEST_MAIN("lsh")
