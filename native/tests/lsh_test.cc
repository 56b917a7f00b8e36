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
#include "minhash/lsh_dedup_index.h"
#include "minhash/pair_verify.h"
#include "hash/crc32c.h"
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

static lsh::Params MakeParams(lsh::Profile profile, uint32_t num_perm, uint32_t b, uint32_t r) {
  lsh::Params p;
  p.profile = profile;
  p.num_perm = num_perm;
  p.b = b;
  p.r = r;
  p.value_bytes = 4;
  return p;
}

static lsh::KeyBatch IntKeys(const std::vector<uint64_t>& ids) {
  lsh::KeyBatch k;
  k.n = ids.size();
  k.ints = ids.data();
  return k;
}

// String keys packed as bytes + offsets (the strings must outlive the batch).
struct StrKeys {
  std::string bytes;
  std::vector<uint64_t> offsets{0};
  explicit StrKeys(const std::vector<std::string>& v) {
    for (const auto& s : v) {
      bytes += s;
      offsets.push_back(bytes.size());
    }
  }
  lsh::KeyBatch batch() const {
    lsh::KeyBatch k;
    k.type = lsh::KeyType::kString;
    k.n = offsets.size() - 1;
    k.bytes = reinterpret_cast<const uint8_t*>(bytes.data());
    k.offsets = offsets.data();
    return k;
  }
};

static std::vector<uint8_t> Image(const lsh::Index& idx) {
  lsh::VectorSink sink;
  Status s = idx.SaveTo(&sink);
  EXPECT(s.ok());
  if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
  return sink.bytes;
}

static std::string TempDir() {
  char dir[] = "/tmp/neardup-lsh-XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr);
  return dir;
}

TEST(index_pairs_match_brute_force) {
  const lsh::Params p = MakeParams(lsh::Profile::kDatasketch, 16, 4, 4);
  const size_t n = 120;
  auto sigs = RandomSigs(n, 16, 3);
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; i++) ids[i] = i;
  lsh::Index idx(p, lsh::KeyType::kInt);
  EXPECT(idx.Insert(IntKeys(ids), reinterpret_cast<const uint8_t*>(sigs.data()), nullptr, 1, nullptr).ok());
  EXPECT(idx.Insert(IntKeys({ids[0]}), reinterpret_cast<const uint8_t*>(sigs.data()), nullptr, 1, nullptr).code() ==
         Code::kDuplicateKey);
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

  // the stream in chunks of 1, 3 and 1000 pairs (in memory and saved/loaded) gives the same pairs, in order
  const std::string dir = TempDir();
  const std::string path = dir + "/i.lsh";
  EXPECT(idx.Save(path).ok());
  std::unique_ptr<lsh::Index> loaded;
  EXPECT(lsh::Index::Load(path, true, &loaded).ok());
  std::vector<lsh::Pair> fpairs;
  EXPECT(loaded->CandidatePairs(&fpairs).ok());
  EXPECT(fpairs == expect);
  for (size_t chunk : {size_t(1), size_t(3), size_t(1000)}) {
    for (int which = 0; which < 2; which++) {
      lsh::PairStream stream(which ? *loaded : idx);
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
  rmdir(dir.c_str());
  // a changed index stops the stream
  lsh::PairStream stream(idx);
  std::vector<lsh::Pair> got;
  bool done = false;
  EXPECT(stream.Next(1, &got, &done).ok());
  EXPECT(idx.Remove(lsh::Key::Int(expect[0].second)).ok());
  EXPECT(idx.Remove(lsh::Key::Int(expect[0].second)).code() == Code::kKeyNotFound);
  EXPECT(!stream.Next(1, &got, &done).ok());
}

// A loaded index with inserts and removals answers exactly as a fresh in-memory index holding the same live
// entries in the same order, and saves to the same bytes (the merge writes what a fresh build writes).
TEST(segments_equal_fresh_index) {
  const lsh::Params p = MakeParams(lsh::Profile::kFast, 12, 4, 3);
  const size_t n = 400;
  auto sigs = RandomSigs(n, 12, 11);
  const uint8_t* sig = reinterpret_cast<const uint8_t*>(sigs.data());
  const size_t sb = p.signature_bytes();
  for (int strings = 0; strings < 2; strings++) {
    std::mt19937 g(5 + strings);
    std::vector<std::string> names(n);
    for (size_t i = 0; i < n; i++) names[i] = strings ? "doc-" + std::to_string(g() % 100000) + "-" + std::to_string(i) : "";
    auto key = [&](size_t i) { return strings ? lsh::Key::Str(names[i]) : lsh::Key::Int(1000003 * i % 7919 + i * 8000); };
    auto insert = [&](lsh::Index* ix, size_t i) {
      StrKeys sk({names[i]});
      std::vector<uint64_t> one{key(i).i};
      Status s = ix->Insert(strings ? sk.batch() : IntKeys(one), sig + i * sb, nullptr, 1, nullptr);
      EXPECT(s.ok());
    };
    const lsh::KeyType kt = strings ? lsh::KeyType::kString : lsh::KeyType::kInt;
    // day 1: the first 250 entries, 30 of them removed before saving
    lsh::Index first(p, kt);
    first.set_meta("{\"day\": 1}");
    std::vector<size_t> live;
    for (size_t i = 0; i < 250; i++) insert(&first, i);
    for (size_t i = 0; i < 250; i++) {
      if (i % 9 == 4) EXPECT(first.Remove(key(i)).ok());
      else live.push_back(i);
    }
    const std::string dir = TempDir();
    const std::string path = dir + "/a.lsh";
    EXPECT(first.Save(path).ok());
    std::unique_ptr<lsh::Index> ix;
    EXPECT(lsh::Index::Load(path, true, &ix).ok());
    EXPECT(ix->meta() == "{\"day\": 1}");
    // then: remove some saved ones, insert the rest, remove some inserted ones
    for (size_t x = 0; x < live.size(); x += 7) EXPECT(ix->Remove(key(live[x])).ok());
    EXPECT(ix->Remove(key(live[0])).code() == Code::kKeyNotFound);
    EXPECT(ix->Remove(key(4)).code() == Code::kKeyNotFound);  // removed before the save
    for (size_t i = 250; i < n; i++) insert(ix.get(), i);
    for (size_t i = 250; i < n; i += 11) EXPECT(ix->Remove(key(i)).ok());
    insert(ix.get(), 4);                                     // a key removed earlier comes back
    EXPECT(ix->Insert(strings ? StrKeys({names[live[1]]}).batch() : IntKeys({key(live[1]).i}), sig, nullptr, 1, nullptr).code() ==
           Code::kDuplicateKey);                             // a live saved key
    std::vector<size_t> order;
    for (size_t x = 0; x < live.size(); x++)
      if (x % 7 != 0) order.push_back(live[x]);
    for (size_t i = 250; i < n; i++)
      if ((i - 250) % 11 != 0) order.push_back(i);
    order.push_back(4);
    lsh::Index fresh(p, kt);
    fresh.set_meta("{\"day\": 1}");
    for (size_t i : order) insert(&fresh, i);
    EXPECT_EQ(ix->size(), order.size());
    // same answers, by key
    auto keys_of = [&](const lsh::Index& x, const std::vector<uint64_t>& hs) {
      std::vector<std::string> out;
      for (uint64_t h : hs) {
        lsh::Key k;
        EXPECT(x.KeyOf(h, &k).ok());
        out.push_back(lsh::KeyText(k));
      }
      return out;
    };
    std::vector<uint64_t> a, b;
    for (size_t i = 0; i < n; i++) {
      ix->Query(sig + i * sb, &a);
      fresh.Query(sig + i * sb, &b);
      EXPECT(keys_of(*ix, a) == keys_of(fresh, b));
      EXPECT(ix->Contains(key(i)) == fresh.Contains(key(i)));
    }
    std::vector<lsh::Pair> pa, pb;
    EXPECT(ix->CandidatePairs(&pa).ok());
    EXPECT(fresh.CandidatePairs(&pb).ok());
    EXPECT_EQ(pa.size(), pb.size());
    std::vector<uint64_t> ha, ra, hb, rb;
    ix->Clusters(&ha, &ra);
    fresh.Clusters(&hb, &rb);
    EXPECT(keys_of(*ix, ha) == keys_of(fresh, hb));
    EXPECT(keys_of(*ix, ra) == keys_of(fresh, rb));
    // pairs by key, in handle order
    std::vector<std::string> ka, kb;
    for (auto& q : pa) ka.push_back(keys_of(*ix, {q.first})[0] + "," + keys_of(*ix, {q.second})[0]);
    for (auto& q : pb) kb.push_back(keys_of(fresh, {q.first})[0] + "," + keys_of(fresh, {q.second})[0]);
    EXPECT(ka == kb);
    // the merged save is byte for byte the fresh build's; saving over the loaded file is safe
    const std::vector<uint8_t> merged = Image(*ix);
    EXPECT(merged == Image(fresh));
    EXPECT(ix->Save(path).ok());
    ix->Query(sig, &a);  // the old map is still readable
    std::unique_ptr<lsh::Index> again;
    EXPECT(lsh::Index::Load(path, true, &again).ok());
    EXPECT(Image(*again) == merged);
    std::remove(path.c_str());
    rmdir(dir.c_str());
  }
}

TEST(corrupt_images_are_refused) {
  const lsh::Params p = MakeParams(lsh::Profile::kFast, 8, 2, 4);
  auto sigs = RandomSigs(20, 8, 2);
  lsh::Index idx(p, lsh::KeyType::kString, lsh::Store{true, true});
  std::vector<std::string> names;
  for (int i = 0; i < 20; i++) names.push_back("k" + std::to_string(i * 37));
  StrKeys sk(names);
  std::string blob;
  std::vector<uint64_t> off{0};
  for (int i = 0; i < 20; i++) {
    blob += std::string(size_t(i % 5), char('a' + i));
    off.push_back(blob.size());
  }
  lsh::DataBatch db{reinterpret_cast<const uint8_t*>(blob.data()), off.data()};
  EXPECT(idx.Insert(sk.batch(), reinterpret_cast<const uint8_t*>(sigs.data()), &db, 1, nullptr).ok());
  idx.set_meta("{}");
  const std::vector<uint8_t> good = Image(idx);
  std::unique_ptr<lsh::Index> ok;
  EXPECT(lsh::Index::LoadBytes(good.data(), good.size(), "x", true, &ok).ok());
  const uint8_t* d;
  uint64_t m;
  EXPECT(ok->Data(7, &d, &m).ok() && m == 2 && d[0] == 'a' + 7);
  EXPECT(std::memcmp(ok->Signature(3), &sigs[3 * 8], 32) == 0);
  // every truncation, and every single-byte change (checksums then fail), is an error, never a crash
  for (size_t len = 0; len < good.size(); len += 1 + len / 16) {
    std::unique_ptr<lsh::Index> x;
    EXPECT(!lsh::Index::LoadBytes(good.data(), len, "x", true, &x).ok());
  }
  for (size_t at = 0; at < good.size(); at += 3) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x41;
    std::unique_ptr<lsh::Index> x;
    Status s = lsh::Index::LoadBytes(bad.data(), bad.size(), "x", true, &x);
    EXPECT(!s.ok() && (s.code() == Code::kCorrupt || s.code() == Code::kUnsupported));
  }
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

// Candidate pairs spilled as sorted runs (dedup --pairs beyond its buffer): every distinct pair once,
// ascending, against std::set, with more runs than one merge takes (kFanIn), read in chunks of every size;
// in memory (nothing spilled) the buffer is the list; the run files are gone afterwards.
TEST(pair_runs_merge_equals_a_set) {
  char dir[] = "/tmp/neardup-pairs-test-XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr);
  std::mt19937_64 rng(41);
  for (const uint64_t buffer : {uint64_t{2}, uint64_t{64}, uint64_t{1000}, uint64_t{1} << 20}) {
    for (const size_t n : {size_t{0}, size_t{1}, size_t{5000}, size_t{40000}}) {
      std::set<uint64_t> want;
      lsh::PairRuns runs;
      runs.Reset(buffer, true, [&](std::string* d) { *d = dir; return Status::Ok(); });
      for (size_t i = 0; i < n; i++) {
        // a few thousand distinct pairs, most of them repeated: duplicates within and across runs
        const uint64_t a = rng() % 90, b = a + 1 + rng() % 60;
        const uint64_t v = (a << 32) | b;
        want.insert(v);
        EXPECT(runs.Add(v).ok());
      }
      EXPECT(runs.Seal(nullptr).ok());
      std::vector<uint64_t> got;
      if (!runs.spilled()) {
        got = runs.memory();
      } else {
        EXPECT(n * 2 > buffer);
        std::vector<uint64_t> chunk;
        for (size_t max = 1;; max = max % 97 + 3) {
          EXPECT(runs.Next(max, &chunk).ok());
          if (chunk.empty()) break;
          EXPECT(chunk.size() <= max);
          got.insert(got.end(), chunk.begin(), chunk.end());
        }
      }
      EXPECT(got == std::vector<uint64_t>(want.begin(), want.end()));
      if (buffer == 64 && n == 40000) EXPECT(runs.runs() > lsh::PairRuns::kFanIn);  // merged before reading
      runs.Clear();
      EXPECT_EQ(FilesIn(dir), 0u);
    }
  }
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

namespace stage_docs {

std::string JsonString(const std::string& t) {
  std::string o = "\"";
  for (char c : t) {
    if (c == '"' || c == '\\') o += std::string("\\") + c;
    else if (c == '\n') o += "\\n";
    else o += c;
  }
  return o + "\"";
}

void Put32(std::string* b, uint32_t v) {
  for (int i = 0; i < 4; i++) b->push_back(static_cast<char>(v >> (8 * i)));
}

void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* fp = std::fopen(path.c_str(), "wb");
  EXPECT(fp && std::fwrite(bytes.data(), 1, bytes.size(), fp) == bytes.size());
  std::fclose(fp);
}

void FlipByte(const std::string& path, uint64_t off) {
  FILE* fp = std::fopen(path.c_str(), "r+b");
  EXPECT(fp != nullptr);
  std::fseek(fp, long(off), SEEK_SET);
  const int c = std::fgetc(fp);
  std::fseek(fp, long(off), SEEK_SET);
  std::fputc(c ^ 1, fp);
  std::fclose(fp);
}

}  // namespace stage_docs

// The staged dedup's verification (DecidePairs over StageDocs and ShardSignatures) decides every candidate pair
// of a session as the session does: the same kept pairs, exact values and estimates, for any budget, with texts
// read back from the lines of plain JSONL inputs (escapes, a '\r' before the '\n', other fields, bad lines) and
// from copied texts files, and records read block by block. A changed input line is an error naming the input
// and the line's offset; a copied text that fails its CRC, a block that fails its CRC or a short records file is
// an error naming that file.
TEST(stage_docs_decide_as_the_session) {
  using namespace stage_docs;
  std::mt19937 rng(23);
  std::vector<std::string> texts;
  std::vector<uint8_t> valid;
  for (size_t i = 0; i < 400; i++) {
    std::string t;
    if (i > 3 && rng() % 2) {
      const std::string& src = texts[i - 1 - rng() % std::min<size_t>(i, 30)];
      for (char c : src) t += rng() % 30 ? c : static_cast<char>('a' + rng() % 26);
    } else {
      for (int w = 0; w < 20 + int(rng() % 50); w++) t += "w" + std::to_string(rng() % 60) + (rng() % 9 ? " " : rng() % 2 ? "\"q\n" : "\\ ");
    }
    texts.push_back(t);
    valid.push_back(i % 47 != 5);
  }
  jsonl::FieldPath field;
  EXPECT(jsonl::ParseFieldPath("text", &field).ok());
  for (lsh::Verify v : {lsh::Verify::kExact, lsh::Verify::kEstimate, lsh::Verify::kNone}) {
    lsh::DedupOptions o = TextOptionsFor(0.7, 16, 3);
    o.verify = v;
    o.spill_texts = false;
    o.want_candidates = true;
    const lsh::DedupResult ref = RunTexts(o, texts, valid);
    EXPECT(ref.kept_pairs > 20);
    EXPECT_EQ(ref.candidates.size(), ref.candidate_pairs);
    if (v == lsh::Verify::kExact) EXPECT(ref.kept_pairs < ref.candidate_pairs);
    // three shards: [0, 150) one plain input; [150, 151) one copied text; [151, 400) a plain input [151, 250)
    // and a copied one [250, 400). Records in blocks of 7, after a 64-byte header.
    char dir[] = "/tmp/neardup-stage-docs-XXXXXX";
    EXPECT(mkdtemp(dir) != nullptr);
    const size_t cuts[] = {0, 150, 151, 400};
    const uint64_t block = 7;
    std::vector<lsh::StageShard> shards;
    std::vector<std::string> all_files;
    std::vector<uint64_t> line_off(texts.size()), text_off(texts.size());
    std::vector<std::vector<uint8_t>> sigs;
    lsh::ShardSignatures ss(o.params.signature_bytes());
    lsh::Dedup signer(o);
    EXPECT(signer.Init().ok());
    DocsOf docs(texts);
    for (size_t f = 0; f + 1 < 4; f++) {
      lsh::StageShard sh;
      sh.first = cuts[f];
      sh.n = cuts[f + 1] - cuts[f];
      sh.block = block;
      sh.locs = std::string(dir) + "/locs" + std::to_string(f);
      std::string recs, copied(64, 'H');
      std::vector<std::pair<uint64_t, uint64_t>> parts;  // [first, end) of each input
      if (f == 0) parts = {{0, 150}};
      else if (f == 1) parts = {{150, 151}};
      else parts = {{151, 250}, {250, 400}};
      for (const auto& part : parts) {
        lsh::StageInput in;
        in.first = part.first;
        in.count = part.second - part.first;
        in.in_place = f != 1 && part.first != 250;
        std::string lines = "\xEF\xBB\xBF";  // a BOM: offsets are file offsets
        for (uint64_t d = part.first; d < part.second; d++) {
          const std::string t = valid[d] ? texts[d] : std::string();
          uint64_t off, raw;
          if (in.in_place) {
            const std::string line = valid[d] ? "{\"id\": " + std::to_string(d) + ", \"text\": " + JsonString(t) + (d % 3 ? "}" : "}\r")
                                              : std::string("{\"text\": broken");
            off = lines.size();
            raw = line.size();
            lines += line + "\n";
          } else {
            off = copied.size() - 64;
            raw = t.size();
            copied += t;
          }
          line_off[d] = off;
          text_off[d] = in.in_place ? UINT64_MAX : off;
          Put32(&recs, static_cast<uint32_t>(off));
          Put32(&recs, static_cast<uint32_t>(off >> 32));
          Put32(&recs, static_cast<uint32_t>(raw));
          Put32(&recs, static_cast<uint32_t>(t.size()));
          Put32(&recs, Crc32c(t.data(), t.size()));
        }
        in.path = std::string(dir) + "/in" + std::to_string(part.first) + (in.in_place ? ".jsonl" : ".jsonl.gz");
        if (in.in_place) WriteFile(in.path, lines);
        sh.inputs.push_back(in);
      }
      if (copied.size() > 64) {
        sh.texts = std::string(dir) + "/texts" + std::to_string(f);
        sh.texts_bytes = copied.size() - 64;
        WriteFile(sh.texts, copied);
        all_files.push_back(sh.texts);
      }
      std::string table;
      for (uint64_t b = 0; b * block < sh.n; b++) {
        const uint64_t n = std::min<uint64_t>(block, sh.n - b * block);
        Put32(&table, Crc32c(recs.data() + b * block * lsh::kDocLocBytes, n * lsh::kDocLocBytes));
      }
      sh.locs_crc = Crc32c(table.data(), table.size());
      WriteFile(sh.locs, std::string(64, 'H') + recs + table);
      all_files.push_back(sh.locs);
      for (const auto& in : sh.inputs)
        if (in.in_place) all_files.push_back(in.path);
      shards.push_back(sh);
      sigs.emplace_back();
      std::vector<uint64_t> keys;
      std::vector<uint32_t> crcs;
      EXPECT(signer.Sign(docs.slice(cuts[f], cuts[f + 1] - cuts[f]), valid.data() + cuts[f], 2, nullptr, &sigs.back(), &keys, &crcs).ok());
      EXPECT_EQ(crcs.size(), cuts[f + 1] - cuts[f]);
      for (size_t d = cuts[f]; d < cuts[f + 1]; d++) EXPECT_EQ(crcs[d - cuts[f]], Crc32c(texts[d].data(), texts[d].size()));
    }
    std::vector<uint32_t> cdocs;
    for (uint64_t c : ref.candidates) {
      cdocs.push_back(static_cast<uint32_t>(c >> 32));
      cdocs.push_back(static_cast<uint32_t>(c));
    }
    std::sort(cdocs.begin(), cdocs.end());
    cdocs.erase(std::unique(cdocs.begin(), cdocs.end()), cdocs.end());
    EXPECT(cdocs.front() < 150 && std::count_if(cdocs.begin(), cdocs.end(), [](uint32_t d) { return d >= 151 && d < 250; }) > 0 &&
           std::count_if(cdocs.begin(), cdocs.end(), [](uint32_t d) { return d >= 250; }) > 0);
    for (size_t f = 0; f < 3; f++) ss.Add(cuts[f], cuts[f + 1] - cuts[f], sigs[f].data());
    const auto decide = [&](uint64_t memory, lsh::PairDecisions* dec, lsh::StageDocs* st) {
      lsh::VerifyStats vs;
      Status s = st->Open(shards, cdocs, 64, field);
      if (!s.ok()) return s;
      return lsh::DecidePairs(o.params, o.minhash.text, v, o.threshold, memory, ref.candidates, &ss, st, 2, nullptr, dec, &vs);
    };
    for (uint64_t memory : {uint64_t(0), uint64_t(1), uint64_t(3000)}) {
      lsh::StageDocs st;
      lsh::PairDecisions dec;
      EXPECT(decide(memory, &dec, &st).ok());
      std::vector<uint32_t> a, b;
      std::vector<float> est, exact;
      for (size_t i = 0; i < ref.candidates.size(); i++) {
        if (!dec.keep[i]) continue;
        a.push_back(static_cast<uint32_t>(ref.candidates[i] >> 32));
        b.push_back(static_cast<uint32_t>(ref.candidates[i]));
        est.push_back(dec.est[i]);
        if (v == lsh::Verify::kExact) exact.push_back(dec.exact[i]);
      }
      EXPECT(a == ref.pair_a);
      EXPECT(b == ref.pair_b);
      EXPECT(est == ref.pair_estimate);
      EXPECT(exact == ref.pair_exact);
      EXPECT(st.bytes_read() > 0);  // the records' blocks at least
    }
    if (v == lsh::Verify::kExact) {
      // a changed line of a plain input: the input and the line's offset are named
      const uint32_t in_doc = *std::find_if(cdocs.begin(), cdocs.end(), [&](uint32_t d) { return d >= 151 && d < 250; });
      const std::string& in_path = shards[2].inputs[0].path;
      const uint64_t at = line_off[in_doc] + std::string("{\"id\": " + std::to_string(in_doc) + ", \"text\": \"").size() + 1;
      FlipByte(in_path, at);
      lsh::StageDocs st;
      lsh::PairDecisions dec;
      Status s = decide(0, &dec, &st);
      EXPECT(s.code() == Code::kInvalidInput);
      EXPECT(s.message().find("'" + in_path + "' has changed since the signatures stage: the line at offset " +
                              std::to_string(line_off[in_doc]) + " (document " + std::to_string(in_doc) + ")") != std::string::npos);
      FlipByte(in_path, at);
      // a flipped byte in a copied text
      const uint32_t copy_doc = *std::find_if(cdocs.begin(), cdocs.end(), [&](uint32_t d) { return d >= 250 && texts[d].size() > 3; });
      FlipByte(shards[2].texts, 64 + text_off[copy_doc] + 2);
      lsh::StageDocs st2;
      s = decide(0, &dec, &st2);
      EXPECT(s.code() == Code::kCorrupt);
      EXPECT(s.message().find("'" + shards[2].texts + "' is corrupt: the text of document " + std::to_string(copy_doc) + " (offset " +
                              std::to_string(64 + text_off[copy_doc])) != std::string::npos);
      FlipByte(shards[2].texts, 64 + text_off[copy_doc] + 2);
      // a flipped byte in a block of records, then a short records file
      const uint64_t blk = (cdocs.front() - 0) / block;
      FlipByte(shards[0].locs, 64 + blk * block * lsh::kDocLocBytes + 9);
      lsh::StageDocs st3;
      s = decide(0, &dec, &st3);
      EXPECT(s.code() == Code::kCorrupt);
      EXPECT(s.message().find("'" + shards[0].locs + "' is corrupt: block " + std::to_string(blk) + " (offset") != std::string::npos);
      FlipByte(shards[0].locs, 64 + blk * block * lsh::kDocLocBytes + 9);
      EXPECT_EQ(truncate(shards[2].locs.c_str(), 100), 0);
      lsh::StageDocs st4;
      s = decide(0, &dec, &st4);
      EXPECT(s.code() == Code::kCorrupt);
      EXPECT(s.message().find(shards[2].locs + "' is corrupt: 100 bytes") != std::string::npos);
    }
    for (const auto& f : all_files) unlink(f.c_str());
    rmdir(dir);
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
    // an empty set is no near-duplicate of anything (not even of another empty set), whatever the threshold
    const bool empty = va.empty() || vb.empty();
    const double truth = empty ? 0.0 : double(common) / double(va.size() + vb.size() - common);
    for (double t : {0.0, std::nextafter(truth, 0.0), truth, std::nextafter(truth, 2.0), 0.5, 0.8, 1.0}) {
      if (t > 1) continue;
      for (IntersectKernel k : kernels) {
        for (int swap = 0; swap < 2; swap++) {
          double j = -1;
          const bool got = swap ? JaccardAtLeast(vb.data(), vb.size(), va.data(), va.size(), t, &j, k)
                                : JaccardAtLeast(va.data(), va.size(), vb.data(), vb.size(), t, &j, k);
          EXPECT_EQ(got, !empty && truth >= t);
          if (got) EXPECT(j == truth);
          checked++;
        }
      }
    }
  }
  EXPECT(checked > 30000);
}

// A corpus of texts with planted near-copies, and signatures that follow the texts' copying (as MinHash would:
// a copy keeps most of its source's values). Exact verification builds the sets from the texts.
struct TextCorpus {
  std::vector<std::string> texts;
  std::vector<uint32_t> sigs;  // n x k
  TextCorpus(size_t n, uint32_t k, uint32_t seed) {
    std::mt19937 g(seed);
    auto word = [&] { return std::to_string(g() % 100000) + "x"; };
    std::vector<std::vector<std::string>> words;
    for (size_t i = 0; i < n; i++) {
      const bool copy = i > 3 && g() % 2;
      const size_t src = copy ? g() % i : 0;
      std::vector<std::string> w;
      if (copy) {
        w = words[src];
        for (auto& x : w)
          if (g() % 12 == 0) x = word();
      } else {
        for (int j = 0; j < 60; j++) w.push_back(word());
      }
      std::string t;
      for (const auto& x : w) t += (t.empty() ? "" : " ") + x;
      words.push_back(w);
      texts.push_back(t);
      for (uint32_t v = 0; v < k; v++) sigs.push_back(copy && g() % 6 ? sigs[src * k + v] : g() % 50);
    }
  }
  // Adds documents [lo, hi) to d in batches of `batch`.
  Status Add(lsh::Dedup* d, size_t lo, size_t hi, size_t batch, uint32_t k) {
    for (size_t at = lo; at < hi; at += batch) {
      const size_t m = std::min(batch, hi - at);
      std::vector<const uint8_t*> ptr;
      std::vector<size_t> len;
      for (size_t i = at; i < at + m; i++) {
        ptr.push_back(reinterpret_cast<const uint8_t*>(texts[i].data()));
        len.push_back(texts[i].size());
      }
      Docs docs;
      docs.ptr = ptr.data();
      docs.len = len.data();
      docs.n = m;
      Status s = d->AddSigned(reinterpret_cast<const uint8_t*>(&sigs[at * k]), m, nullptr, &docs, 2, nullptr);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
};

// A run over B against the index a run over A wrote (and that index extended) equals one run over A + B.
TEST(dedup_against_index_equals_one_run) {
  const uint32_t k = 16;
  const size_t n = 600, m = 250;
  TextCorpus c(n, k, 77);
  const std::string dir = TempDir();
  for (lsh::Verify v : {lsh::Verify::kNone, lsh::Verify::kEstimate, lsh::Verify::kExact}) {
    for (uint64_t memory : {uint64_t(0), uint64_t(1)}) {
      lsh::DedupOptions o;
      o.params = MakeParams(lsh::Profile::kFast, k, 8, 2);
      o.minhash = minhash::DefaultConfig(minhash::Profile::kFast);
      o.minhash.num_perm = k;
      o.verify = v;
      o.threshold = 0.7;
      o.memory_bytes = memory;
      o.tmp_dir = dir;
      lsh::DedupResult full;
      {
        lsh::Dedup d(o);
        EXPECT(d.Init().ok());
        EXPECT(c.Add(&d, 0, n, 64, k).ok());
        EXPECT(d.Finish(2, nullptr, &full).ok());
      }
      lsh::IndexHookOptions h;
      h.params = o.params;
      h.verify = v;
      h.threshold = o.threshold;
      h.text = o.minhash.text;
      h.tmp_dir = dir;
      h.write = true;
      // run 1: A, writing the index
      const std::string path_a = dir + "/a.lsh", path_b = dir + "/b.lsh";
      {
        lsh::IndexHook hook(h);
        EXPECT(hook.Init().ok());
        lsh::DedupOptions oa = o;
        oa.index = &hook;
        lsh::Dedup d(oa);
        EXPECT(d.Init().ok());
        EXPECT(c.Add(&d, 0, m, 50, k).ok());
        lsh::DedupResult r;
        EXPECT(d.Finish(2, nullptr, &r).ok());
        EXPECT(std::vector<uint32_t>(full.rep.begin(), full.rep.begin() + m) == r.rep);
        uint64_t entries = 0;
        EXPECT(d.WriteIndex(path_a, "{}", 2, nullptr, &entries).ok());
        EXPECT_EQ(entries, uint64_t(m - r.duplicates));
      }
      // run 2: B against it, extending it
      std::unique_ptr<lsh::Index> prior;
      EXPECT(lsh::Index::Load(path_a, true, &prior).ok());
      h.prior = prior.get();
      h.key_offset = m;
      {
        lsh::IndexHook hook(h);
        EXPECT(hook.Init().ok());
        lsh::DedupOptions ob = o;
        ob.index = &hook;
        lsh::Dedup d(ob);
        EXPECT(d.Init().ok());
        EXPECT(c.Add(&d, m, n, 70, k).ok());
        lsh::DedupResult r;
        EXPECT(d.Finish(2, nullptr, &r).ok());
        EXPECT(!hook.matches().empty());
        std::vector<uint32_t> global(r.rep.size());
        size_t at = 0;
        for (size_t i = 0; i < r.rep.size(); i++) {
          if (r.rep[i] == lsh::kIndexRep) {
            EXPECT(at < hook.matches().size() && hook.matches()[at].first == i);
            lsh::Key key;
            EXPECT(prior->KeyOf(hook.matches()[at++].second, &key).ok());
            global[i] = static_cast<uint32_t>(key.i);
          } else {
            global[i] = static_cast<uint32_t>(m + r.rep[i]);
          }
        }
        EXPECT(std::vector<uint32_t>(full.rep.begin() + m, full.rep.end()) == global);
        uint64_t entries = 0;
        EXPECT(d.WriteIndex(path_b, "{}", 2, nullptr, &entries).ok());
        EXPECT_EQ(entries, uint64_t(n - full.duplicates));
      }
      // the index holds the documents one run keeps, under their numbers, with their texts (exact)
      std::unique_ptr<lsh::Index> all;
      EXPECT(lsh::Index::Load(path_b, true, &all).ok());
      std::vector<uint64_t> hs;
      all->Handles(&hs);
      std::vector<uint64_t> keys, want;
      for (uint64_t hd : hs) {
        lsh::Key key;
        EXPECT(all->KeyOf(hd, &key).ok());
        keys.push_back(key.i);
        if (v == lsh::Verify::kExact) {
          const uint8_t* t;
          uint64_t len;
          EXPECT(all->Data(hd, &t, &len).ok() && std::string(reinterpret_cast<const char*>(t), len) == c.texts[key.i]);
        }
        EXPECT(std::memcmp(all->Signature(hd), &c.sigs[key.i * k], 4 * k) == 0);
      }
      for (size_t i = 0; i < n; i++)
        if (full.rep[i] == i) want.push_back(i);
      EXPECT(keys == want);
      std::remove(path_a.c_str());
      std::remove(path_b.c_str());
    }
  }
  EXPECT_EQ(FilesIn(dir), 0u);
  rmdir(dir.c_str());
}

TEST_MAIN("lsh")
