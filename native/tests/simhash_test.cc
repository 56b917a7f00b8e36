// SimHash core: fingerprints, the online index and batch all-pairs against brute-force popcount.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "hash/digest.h"
#include "simhash/all_pairs.h"
#include "simhash/fingerprint.h"
#include "simhash/index.h"
#include "simhash/layout.h"
#include "simhash/pair_text.h"
#include "util/endian.h"

using namespace neardup;
using namespace neardup::simhash;
using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

static std::string TempDir() {
  char tmpl[] = "/tmp/neardup-simhash-XXXXXX";
  return std::string(mkdtemp(tmpl));
}

static int Dist(uint64_t a, uint64_t b) { return __builtin_popcountll(a ^ b); }

// Random fingerprints plus near copies with 0..k+1 flipped bits (so both sides of the boundary occur).
static std::vector<uint64_t> MakeSet(size_t base, uint32_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> v;
  for (size_t i = 0; i < base; i++) {
    const uint64_t x = rng();
    v.push_back(x);
    const int copies = static_cast<int>(rng() % 3);
    for (int c = 0; c < copies; c++) {
      uint64_t y = x;
      const uint32_t flips = static_cast<uint32_t>(rng() % (k + 2));
      for (uint32_t f = 0; f < flips; f++) y ^= uint64_t{1} << (rng() % 64);
      v.push_back(y);
    }
  }
  return v;
}

static Pairs Brute(const std::vector<uint64_t>& v, uint32_t k) {
  Pairs p;
  for (uint32_t i = 0; i < v.size(); i++)
    for (uint32_t j = i + 1; j < v.size(); j++)
      if (Dist(v[i], v[j]) <= static_cast<int>(k)) p.emplace_back(i, j);
  return p;
}

TEST(compute_votes) {
  EXPECT_EQ(Compute(nullptr, 0), 0u);
  const uint64_t one = 0x8000000000000001ull;
  EXPECT_EQ(Compute(&one, 1), one);
  const uint64_t two[2] = {0xffull, 0x0full};  // bits 4..7: tie -> 0
  EXPECT_EQ(Compute(two, 2), 0x0full);
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; round++) {
    std::vector<uint64_t> f(rng() % 700);
    for (auto& x : f) x = rng();
    uint64_t expect = 0;
    for (int b = 0; b < 64; b++) {
      long v = 0;
      for (uint64_t x : f) v += ((x >> b) & 1) ? 1 : -1;
      if (v > 0) expect |= uint64_t{1} << b;
    }
    EXPECT_EQ(Compute(f.data(), f.size()), expect);
    std::vector<double> w(f.size(), 2.5);
    EXPECT_EQ(ComputeWeighted(f.data(), w.data(), f.size()), expect);
  }
}

TEST(seomoz_example) {
  // "the quick brown fox" -> unsigned_hash 3527384202465209835 (vectors.json).
  EXPECT_EQ(Md5Be64("the quick brown fox", 19), 3527384202465209835ull);
  const char* text = "The quick brown fox jumps over the lazy dog.";
  const uint8_t* p = reinterpret_cast<const uint8_t*>(text);
  size_t len = std::strlen(text);
  Docs docs{&p, &len, 1};
  std::vector<uint64_t> out;
  EXPECT(FingerprintBatch(docs, SeomozProfile(), 1, nullptr, &out).ok());
  EXPECT_EQ(out[0], 12782281268758982817ull);
}

TEST(layout_tables_and_params) {
  EXPECT(ValidateParams(6, 3).ok());
  EXPECT(!ValidateParams(3, 3).ok());
  EXPECT(!ValidateParams(65, 3).ok());
  EXPECT(!ValidateParams(40, 9).ok());
  EXPECT(!ValidateParams(64, 8).ok());  // too many tables
  Layout l(6, 3);
  EXPECT_EQ(l.tables(), 20u);
  // Table 0 chooses blocks 0,1,2 (bits 0..31): block 0 (bits 0..9) becomes the top bits.
  EXPECT_EQ(l.table(0).prefix_bits, 32u);
  EXPECT_EQ(l.table(0).Permute(1), uint64_t{1} << 54);
  for (size_t t = 0; t < l.tables(); t++) {
    std::mt19937_64 rng(t);
    for (int i = 0; i < 100; i++) {
      const uint64_t x = rng(), y = rng();
      EXPECT_EQ(Dist(l.table(t).Permute(x), l.table(t).Permute(y)), Dist(x, y));
    }
  }
  // PermutePrefix (lookups) gives Permute's top prefix_bits bits, for every valid (m, k).
  for (uint32_t m = 1; m <= 64; m++) {
    for (uint32_t k = 0; k < m && k <= kMaxDistance; k++) {
      if (!ValidateParams(m, k).ok()) continue;
      Layout lk(m, k);
      std::mt19937_64 rng(m * 100 + k);
      for (size_t t = 0; t < lk.tables(); t += 1 + lk.tables() / 50) {
        const Table& tb = lk.table(t);
        const uint32_t p = tb.prefix_bits;
        for (int i = 0; i < 20; i++) {
          const uint64_t x = rng();
          const uint64_t full = tb.Permute(x), pre = tb.PermutePrefix(x);
          EXPECT_EQ(p >= 64 ? full : full >> (64 - p), p >= 64 ? pre : pre >> (64 - p));
        }
      }
    }
  }
  EXPECT_EQ(PickBlocks(1000000, 3), 5u);
}

TEST(all_pairs_matches_brute_force) {
  const uint32_t params[][2] = {{4, 3}, {5, 3}, {6, 3}, {6, 4}, {3, 2}, {9, 8}, {2, 0}, {5, 1}, {12, 3}};
  for (auto& mk : params) {
    const auto v = MakeSet(700, mk[1], mk[0] * 31 + mk[1]);
    Pairs got;
    EXPECT(AllPairs(v.data(), v.size(), mk[0], mk[1], 2, nullptr, &got).ok());
    const Pairs want = Brute(v, mk[1]);
    EXPECT_EQ(got.size(), want.size());
    EXPECT(got == want);
  }
}

TEST(all_pairs_skewed_group) {
  // 3000 fingerprints sharing the same 40 high bits, varying in the low 24 bits, plus identical copies.
  std::mt19937_64 rng(99);
  std::vector<uint64_t> v;
  for (int i = 0; i < 3000; i++) v.push_back((0xabcdef1234ull << 24) | (rng() & 0xffffff));
  for (int i = 0; i < 50; i++) v.push_back(v[i]);
  Pairs got;
  EXPECT(AllPairs(v.data(), v.size(), 4, 3, 1, nullptr, &got).ok());
  EXPECT(got == Brute(v, 3));
  std::vector<uint32_t> labels;
  Components(v.size(), got, &labels);
  for (auto& e : got) EXPECT_EQ(labels[e.first], labels[e.second]);
  // Labels are the smallest member of each component, singletons label themselves.
  Components(6, Pairs{{3, 5}, {1, 3}, {2, 4}}, &labels);
  EXPECT(labels == (std::vector<uint32_t>{0, 1, 2, 1, 2, 1}));
}

TEST(all_pairs_cap_components_and_stream) {
  // clusters of near-identical fingerprints (quadratic pairs) among random ones, skewed groups included
  std::mt19937_64 rng(7);
  std::vector<uint64_t> v;
  for (int c = 0; c < 6; c++) {
    const uint64_t base = rng();
    for (int i = 0; i < 40 + 30 * c; i++) v.push_back(base ^ (uint64_t{1} << (rng() % 64)) ^ (i % 3 == 0 ? 0 : uint64_t{1} << (rng() % 64)));
  }
  for (int i = 0; i < 500; i++) v.push_back(rng());
  std::shuffle(v.begin(), v.end(), rng);
  const Pairs want = Brute(v, 3);
  EXPECT(want.size() > 5000);
  // the cap: exactly the count passes; one less fails with kTooManyResults and an empty output, for 1 and 2 slots
  for (size_t slots : {1, 2}) {
    Pairs got;
    EXPECT(AllPairs(v.data(), v.size(), 6, 3, slots, nullptr, &got, want.size()).ok());
    EXPECT(got == want);
    Status capped = AllPairs(v.data(), v.size(), 6, 3, slots, nullptr, &got, want.size() - 1);
    EXPECT(capped.code() == Code::kTooManyResults);
    EXPECT(got.empty());
  }
  // components without pairs: the same labels
  std::vector<uint32_t> a, b;
  Components(v.size(), want, &a);
  for (size_t slots : {1, 2, 3}) {
    EXPECT(AllComponents(v.data(), v.size(), 6, 3, slots, nullptr, &b).ok());
    EXPECT(a == b);
  }
  // the stream: ids with repeats (an id never pairs with itself; an id pair once), in every chunk size
  std::vector<uint64_t> ids(v.size());
  for (size_t i = 0; i < ids.size(); i++) ids[i] = (i * 7919) % 900;  // repeats
  std::set<std::pair<uint64_t, uint64_t>> id_pairs;
  for (const auto& e : want) {
    const uint64_t x = ids[e.first], y = ids[e.second];
    if (x != y) id_pairs.emplace(std::min(x, y), std::max(x, y));
  }
  const std::vector<std::pair<uint64_t, uint64_t>> want_ids(id_pairs.begin(), id_pairs.end());
  for (uint64_t chunk : {uint64_t{1}, uint64_t{7}, uint64_t{1000}, uint64_t{1} << 30}) {
    for (bool with_ids : {false, true}) {
      PairStream ps(v, with_ids ? ids : std::vector<uint64_t>(), 6, 3);
      std::vector<std::pair<uint64_t, uint64_t>> all, part;
      bool done = false;
      size_t chunks = 0;
      while (!done) {
        part.clear();
        EXPECT(ps.Next(chunk, 2, nullptr, &part, &done).ok());
        if (chunk >= 1000) EXPECT(part.size() <= chunk + 200);  // whole first ids: at most one id's pairs over
        all.insert(all.end(), part.begin(), part.end());
        chunks++;
        if (chunks > v.size() + 2) break;
      }
      if (with_ids) {
        EXPECT(all == want_ids);
      } else {
        EXPECT_EQ(all.size(), want.size());
        for (size_t i = 0; i < all.size() && i < want.size(); i++)
          EXPECT(all[i].first == want[i].first && all[i].second == want[i].second);
      }
      if (chunk == (uint64_t{1} << 30)) EXPECT_EQ(chunks, 1u);
      if (chunk == 1000) EXPECT(chunks > 5);
    }
  }
  // ids that are the fingerprints (find-all of bare values, one copy kept): the pairs of ids = fps, in chunks
  for (uint64_t chunk : {uint64_t{3}, uint64_t{500}, uint64_t{1} << 30}) {
    std::vector<std::pair<uint64_t, uint64_t>> got[2];
    for (int way = 0; way < 2; way++) {
      PairStream ps(v, way == 0 ? v : std::vector<uint64_t>(), 6, 3, way == 1);
      std::vector<std::pair<uint64_t, uint64_t>> part;
      for (bool done = false; !done;) {
        part.clear();
        EXPECT(ps.Next(chunk, 2, nullptr, &part, &done).ok());
        got[way].insert(got[way].end(), part.begin(), part.end());
      }
    }
    EXPECT(!got[0].empty());
    EXPECT(got[1] == got[0]);
  }
  // identical fingerprints: n(n-1)/2 pairs, streamed in chunks of whole first ids
  std::vector<uint64_t> same(300, 42);
  PairStream ps(same, {}, 6, 3);
  uint64_t total = 0;
  bool done = false;
  std::vector<std::pair<uint64_t, uint64_t>> part;
  while (!done) {
    part.clear();
    EXPECT(ps.Next(5000, 1, nullptr, &part, &done).ok());
    EXPECT(part.size() <= 5000 + 299);
    total += part.size();
  }
  EXPECT_EQ(total, uint64_t{300} * 299 / 2);
}

TEST(all_pairs_dense_sets) {
  // Issue 26: 300 identical fingerprints plus 300 within 3 bits of them (took minutes before equal values were
  // grouped and dense groups compared all-to-all), among random ones and a second, shuffled dense cluster
  // of distinct values; pairs, components and the stream against brute force.
  std::mt19937_64 rng(2626);
  std::vector<uint64_t> v;
  const uint64_t base = rng(), base2 = rng();
  for (int i = 0; i < 300; i++) v.push_back(base);
  for (int i = 0; i < 300; i++) {
    uint64_t y = base;
    for (int f = 0, flips = 1 + static_cast<int>(rng() % 3); f < flips; f++) y ^= uint64_t{1} << (rng() % 64);
    v.push_back(y);
  }
  for (int i = 0; i < 200; i++) v.push_back(base2 ^ (uint64_t{1} << (rng() % 64)) ^ (uint64_t{1} << (rng() % 64)));
  for (int i = 0; i < 300; i++) v.push_back(rng());
  std::shuffle(v.begin(), v.end(), rng);
  const uint32_t params[][2] = {{6, 3}, {4, 3}, {8, 5}, {11, 8}, {9, 8}, {2, 0}};
  for (auto& mk : params) {
    const Pairs want = Brute(v, mk[1]);
    for (size_t slots : {1, 2}) {
      Pairs got;
      EXPECT(AllPairs(v.data(), v.size(), mk[0], mk[1], slots, nullptr, &got).ok());
      EXPECT(got == want);
      std::vector<uint32_t> a, b;
      Components(v.size(), want, &a);
      EXPECT(AllComponents(v.data(), v.size(), mk[0], mk[1], slots, nullptr, &b).ok());
      EXPECT(a == b);
      // a cap one below the count is refused
      if (!want.empty()) EXPECT(AllPairs(v.data(), v.size(), mk[0], mk[1], slots, nullptr, &got, want.size() - 1).code() == Code::kTooManyResults);
    }
    // the stream, in chunks (ranges of first indices), with and without repeated ids
    std::vector<uint64_t> ids(v.size());
    for (size_t i = 0; i < ids.size(); i++) ids[i] = (i * 7919) % 700;
    std::set<std::pair<uint64_t, uint64_t>> id_pairs;
    for (const auto& e : want)
      if (ids[e.first] != ids[e.second]) id_pairs.emplace(std::min(ids[e.first], ids[e.second]), std::max(ids[e.first], ids[e.second]));
    for (bool with_ids : {false, true}) {
      PairStream ps(v, with_ids ? ids : std::vector<uint64_t>(), mk[0], mk[1]);
      std::vector<std::pair<uint64_t, uint64_t>> all, part;
      bool done = false;
      while (!done) {
        part.clear();
        EXPECT(ps.Next(20000, 2, nullptr, &part, &done).ok());
        EXPECT(part.size() <= 20000 + 1000);
        all.insert(all.end(), part.begin(), part.end());
      }
      if (with_ids) {
        EXPECT((all == std::vector<std::pair<uint64_t, uint64_t>>(id_pairs.begin(), id_pairs.end())));
      } else {
        EXPECT_EQ(all.size(), want.size());
        bool same = all.size() == want.size();
        for (size_t i = 0; same && i < all.size(); i++) same = all[i].first == want[i].first && all[i].second == want[i].second;
        EXPECT(same);
      }
    }
  }
  // Distinct: the values and their members
  Distinct d;
  const uint64_t few[] = {5, 3, 5, 9, 3, 5};
  FindDistinct(few, 6, &d);
  EXPECT(!d.identity);
  EXPECT(d.fps == (std::vector<uint64_t>{3, 5, 9}));
  EXPECT(d.members == (std::vector<uint32_t>{1, 4, 0, 2, 5, 3}));
  EXPECT(d.start == (std::vector<uint32_t>{0, 2, 5, 6}));
  std::vector<uint64_t> many(10000);
  for (auto& x : many) x = rng();
  FindDistinct(many.data(), many.size(), &d);
  EXPECT(d.identity && d.size() == many.size());
  many.push_back(many[1234]);  // one repeat among 10,001
  FindDistinct(many.data(), many.size(), &d);
  EXPECT(!d.identity && d.size() == 10000);
  // beyond 2^17: a sample; a value held by a run of 1,000 fingerprints is found, and the pairs stay exact
  // either way (one repeated pair only: missed by the sample, found by the search)
  many.assign(300000, 0);
  for (auto& x : many) x = rng();
  many[5] = many[299990];
  for (int i = 0; i < 1000; i++) many[100000 + i] = many[7];
  FindDistinct(many.data(), many.size(), &d);
  EXPECT(!d.identity);
  many.assign(300000, 0);
  for (auto& x : many) x = rng();
  many[5] = many[299990];
  FindDistinct(many.data(), many.size(), &d);
  EXPECT(d.identity);
  Pairs got;
  EXPECT(AllPairs(many.data(), many.size(), 5, 3, 2, nullptr, &got).ok());
  EXPECT((got == Pairs{{5, 299990}}));
}

static void CheckIndex(Index& ix, const std::vector<uint64_t>& fps, const std::vector<uint64_t>& ids,
                       const std::vector<bool>& live, const std::vector<uint64_t>& queries, uint32_t k) {
  std::vector<uint64_t> got;
  for (uint64_t q : queries) {
    std::vector<uint64_t> want;
    for (size_t i = 0; i < fps.size(); i++)
      if (live[i] && Dist(fps[i], q) <= static_cast<int>(k)) want.push_back(ids[i]);
    std::sort(want.begin(), want.end());
    ix.FindAll(q, &got);
    EXPECT(got == want);
    uint64_t first = 0;
    const bool f = ix.FindFirst(q, &first);
    EXPECT_EQ(f, !want.empty());
    if (f) EXPECT(std::binary_search(want.begin(), want.end(), first));
  }
}

TEST(index_matches_brute_force) {
  const uint32_t params[][2] = {{6, 3}, {5, 3}, {4, 3}, {3, 1}, {10, 8}, {1, 0}};
  for (auto& mk : params) {
    std::unique_ptr<Index> ix;
    EXPECT(Index::Create(mk[0], mk[1], &ix).ok());
    const auto fps = MakeSet(900, mk[1], mk[0] * 7 + mk[1]);
    std::vector<uint64_t> ids(fps.size());
    for (size_t i = 0; i < ids.size(); i++) ids[i] = 1000 + i * 3;
    std::vector<bool> live(fps.size(), false);
    // Insert in uneven batches: exercises buffer, delta and main runs.
    size_t at = 0;
    const size_t sizes[] = {1, 5, 300, 20, 700, 3, 600};
    for (size_t sz : sizes) {
      sz = std::min(sz, fps.size() - at);
      EXPECT(ix->Insert(ids.data() + at, fps.data() + at, sz, 2).ok());
      for (size_t i = at; i < at + sz; i++) live[i] = true;
      at += sz;
      std::vector<uint64_t> qs(fps.begin(), fps.begin() + std::min<size_t>(at, 200));
      qs.push_back(0);
      qs.push_back(~uint64_t{0});
      CheckIndex(*ix, fps, ids, live, qs, mk[1]);
    }
    EXPECT(ix->Insert(ids.data() + at, fps.data() + at, fps.size() - at, 2).ok());
    for (size_t i = at; i < fps.size(); i++) live[i] = true;
    // Duplicate ids are refused, nothing changes.
    EXPECT(!ix->Insert(ids.data(), fps.data(), 1, 1).ok());
    const uint64_t twice[2] = {5, 5};
    EXPECT(!ix->Insert(twice, fps.data(), 2, 1).ok());
    EXPECT(!ix->Contains(5));
    // Remove a third (tombstones, then compaction past a quarter).
    std::vector<uint64_t> gone;
    for (size_t i = 0; i < fps.size(); i += 3) {
      gone.push_back(ids[i]);
      live[i] = false;
    }
    size_t removed = 0;
    EXPECT(ix->Remove(gone.data(), gone.size() / 5, 2, &removed).ok());
    EXPECT_EQ(removed, gone.size() / 5);
    EXPECT(ix->Stats().tombstones > 0);
    for (size_t i = gone.size() / 5; i < gone.size(); i++) live[(i) * 3] = true;
    std::vector<uint64_t> qs(fps.begin(), fps.begin() + 150);
    CheckIndex(*ix, fps, ids, live, qs, mk[1]);
    for (size_t i = 0; i < gone.size(); i++) live[i * 3] = false;
    EXPECT(ix->Remove(gone.data(), gone.size(), 2, &removed).ok());
    EXPECT_EQ(removed, gone.size() - gone.size() / 5);
    EXPECT_EQ(ix->Stats().tombstones, 0u);  // compacted
    CheckIndex(*ix, fps, ids, live, qs, mk[1]);
    // Batch queries agree with single ones.
    std::vector<uint32_t> off;
    std::vector<uint64_t> all;
    EXPECT(ix->FindAllBatch(qs.data(), qs.size(), 2, nullptr, &off, &all).ok());
    for (size_t i = 0; i < qs.size(); i++) {
      std::vector<uint64_t> one;
      ix->FindAll(qs[i], &one);
      EXPECT(std::vector<uint64_t>(all.begin() + off[i], all.begin() + off[i + 1]) == one);
    }
    const IndexStats st = ix->Stats();
    EXPECT(st.table_bytes <= st.slots * 6 * st.tables + 64 * st.tables);
  }
}

// Ids 0..n-1 inserted in order keep no id array (the slot is the id): every path that leaves that state
// (another id, compaction after removes, save/open) must answer as brute force does.
TEST(index_dense_ids) {
  const uint32_t params[][2] = {{6, 3}, {5, 3}, {3, 1}};
  for (auto& mk : params) {
    const uint32_t k = mk[1];
    std::unique_ptr<Index> ix;
    EXPECT(Index::Create(mk[0], k, &ix).ok());
    const auto fps = MakeSet(1200, k, mk[0] * 11 + k);
    std::vector<uint64_t> ids(fps.size());
    for (size_t i = 0; i < ids.size(); i++) ids[i] = i;
    std::vector<bool> live(fps.size(), false);
    size_t at = 0;
    for (size_t sz : {size_t{3}, size_t{500}, size_t{40}, ~size_t{0}}) {
      sz = std::min(sz, fps.size() - at);
      EXPECT(ix->Insert(ids.data() + at, fps.data() + at, sz, 2).ok());
      for (size_t i = at; i < at + sz; i++) live[i] = true;
      at += sz;
    }
    EXPECT_EQ(at, fps.size());
    EXPECT_EQ(ix->Stats().entry_bytes, fps.size() * 8);  // no id array
    std::vector<uint64_t> qs(fps.begin(), fps.begin() + 300);
    for (size_t i = 0; i < 40; i++) qs.push_back(fps[i * 7] ^ (uint64_t{1} << (i % 64)) ^ (uint64_t{1} << ((i * 5) % 64)));
    qs.push_back(0x0123456789abcdefull);
    CheckIndex(*ix, fps, ids, live, qs, k);
    // Batches (the pipelined path) agree with brute force.
    auto check_batches = [&](const std::vector<uint64_t>& want_ids) {
      std::vector<uint64_t> first;
      std::vector<uint8_t> found;
      EXPECT(ix->FindFirstBatch(qs.data(), qs.size(), 2, nullptr, &first, &found).ok());
      std::vector<uint32_t> off;
      std::vector<uint64_t> all;
      EXPECT(ix->FindAllBatch(qs.data(), qs.size(), 2, nullptr, &off, &all).ok());
      for (size_t qi = 0; qi < qs.size(); qi++) {
        std::vector<uint64_t> want;
        for (size_t i = 0; i < fps.size(); i++)
          if (live[i] && Dist(fps[i], qs[qi]) <= static_cast<int>(k)) want.push_back(want_ids[i]);
        std::sort(want.begin(), want.end());
        EXPECT(std::vector<uint64_t>(all.begin() + off[qi], all.begin() + off[qi + 1]) == want);
        EXPECT_EQ(found[qi] != 0, !want.empty());
        if (found[qi]) EXPECT(std::binary_search(want.begin(), want.end(), first[qi]));
      }
    };
    check_batches(ids);
    // Removes while dense: tombstones, absent and repeated ids ignored.
    std::vector<uint64_t> gone = {4, 4, 9, 100000, 1199};
    size_t removed = 0;
    EXPECT(ix->Remove(gone.data(), gone.size(), 2, &removed).ok());
    EXPECT_EQ(removed, 3u);
    live[4] = live[9] = live[1199] = false;
    EXPECT(!ix->Contains(4) && ix->Contains(5) && !ix->Contains(fps.size()) && !ix->Contains(100000));
    CheckIndex(*ix, fps, ids, live, qs, k);
    // A removed dense id may come back, in a new slot (the index stops being dense).
    const uint64_t back = 9;
    EXPECT(ix->Insert(&back, &fps[9], 1, 1).ok());
    live[9] = true;
    EXPECT(ix->Contains(9));
    EXPECT(!ix->Insert(&back, &fps[9], 1, 1).ok());  // now present
    CheckIndex(*ix, fps, ids, live, qs, k);
    check_batches(ids);
    // Saved and reopened: the file holds the ids.
    const std::string path = TempDir() + "/dense.simh";
    EXPECT(ix->Save(path, 2).ok());
    std::unique_ptr<Index> re;
    EXPECT(Index::Open(path, true, &re).ok());
    CheckIndex(*re, fps, ids, live, qs, k);
    std::remove(path.c_str());
  }
  // Dense until compaction: removing over a quarter compacts, moving slots; the ids must stay put.
  std::unique_ptr<Index> ix;
  EXPECT(Index::Create(5, 3, &ix).ok());
  const auto fps = MakeSet(1000, 3, 99);
  std::vector<uint64_t> ids(fps.size());
  for (size_t i = 0; i < ids.size(); i++) ids[i] = i;
  EXPECT(ix->Insert(ids.data(), fps.data(), fps.size(), 2).ok());
  std::vector<bool> live(fps.size(), true);
  std::vector<uint64_t> gone;
  for (size_t i = 0; i < fps.size(); i += 2) {
    gone.push_back(i);
    live[i] = false;
  }
  size_t removed = 0;
  EXPECT(ix->Remove(gone.data(), gone.size(), 2, &removed).ok());
  EXPECT_EQ(removed, gone.size());
  EXPECT_EQ(ix->Stats().tombstones, 0u);  // compacted
  std::vector<uint64_t> qs(fps.begin(), fps.begin() + 200);
  CheckIndex(*ix, fps, ids, live, qs, 3);
  EXPECT(ix->Contains(1) && !ix->Contains(0));
  // Saved while dense: the file is the one of the same index built with a copy of the id array.
  std::unique_ptr<Index> a, b;
  EXPECT(Index::Create(6, 3, &a).ok());
  EXPECT(Index::Create(6, 3, &b).ok());
  EXPECT(a->Insert(ids.data(), fps.data(), fps.size(), 2).ok());
  std::vector<uint64_t> rev(ids.rbegin(), ids.rend()), rfps(fps.rbegin(), fps.rend());
  EXPECT(b->Insert(rev.data(), rfps.data(), 1, 1).ok());  // the last id first: b is not dense
  EXPECT(b->Insert(ids.data(), fps.data(), fps.size() - 1, 2).ok());
  EXPECT_EQ(a->Stats().entry_bytes * 2, b->Stats().entry_bytes);
  const std::string pa = TempDir() + "/dense-a.simh", pb = TempDir() + "/dense-b.simh";
  EXPECT(a->Save(pa, 2).ok());
  EXPECT(b->Save(pb, 2).ok());
  std::unique_ptr<Index> ra, rb;
  EXPECT(Index::Open(pa, true, &ra).ok());
  EXPECT(Index::Open(pb, true, &rb).ok());
  std::vector<bool> all_live(fps.size(), true);
  CheckIndex(*ra, fps, ids, all_live, qs, 3);
  CheckIndex(*rb, fps, ids, all_live, qs, 3);
  std::remove(pa.c_str());
  std::remove(pb.c_str());
  // Removing everything returns to the empty state, which takes dense ids again.
  EXPECT(ix->Remove(ids.data(), ids.size(), 2, &removed).ok());
  EXPECT_EQ(ix->Stats().size, 0u);
  EXPECT(ix->Insert(ids.data(), fps.data(), 10, 1).ok());
  EXPECT_EQ(ix->Stats().entry_bytes, 80u);
  std::vector<bool> ten(fps.size(), false);
  for (size_t i = 0; i < 10; i++) ten[i] = true;
  CheckIndex(*ix, fps, ids, ten, qs, 3);
}

TEST(index_save_open_and_corruption) {
  const std::string dir = TempDir();
  const std::string path = dir + "/x.simh";
  std::unique_ptr<Index> ix;
  EXPECT(Index::Create(5, 3, &ix).ok());
  const auto fps = MakeSet(3000, 3, 5);
  std::vector<uint64_t> ids(fps.size());
  for (size_t i = 0; i < ids.size(); i++) ids[i] = i * 11 + 1;
  EXPECT(ix->Insert(ids.data(), fps.data(), fps.size(), 2).ok());
  const uint64_t rm[2] = {1, 12};
  EXPECT(ix->Remove(rm, 2, 1, nullptr).ok());
  std::vector<bool> live(fps.size(), true);
  live[0] = live[1] = false;
  EXPECT(ix->Save(path, 2).ok());
  std::unique_ptr<Index> back;
  Status s = Index::Open(path, true, &back);
  EXPECT(s.ok());
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
  EXPECT(back->Stats().mapped);
  std::vector<uint64_t> qs(fps.begin(), fps.begin() + 300);
  CheckIndex(*back, fps, ids, live, qs, 3);
  // Mutating an opened index.
  const uint64_t nid = 999999, nfp = fps[5] ^ 1;
  EXPECT(back->Insert(&nid, &nfp, 1, 1).ok());
  uint64_t got = 0;
  std::vector<uint64_t> all;
  back->FindAll(nfp, &all);
  EXPECT(std::find(all.begin(), all.end(), nid) != all.end());
  (void)got;
  // Empty index round trip.
  std::unique_ptr<Index> empty;
  EXPECT(Index::Create(6, 3, &empty).ok());
  EXPECT(empty->Save(dir + "/e.simh", 1).ok());
  EXPECT(Index::Open(dir + "/e.simh", true, &back).ok());
  EXPECT(!back->FindFirst(0, &got));
  // Corruption: truncation and a flipped byte.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  {
    std::ofstream o(dir + "/t.simh", std::ios::binary);
    o.write(bytes.data(), bytes.size() - 100);
  }
  s = Index::Open(dir + "/t.simh", false, &back);
  EXPECT(!s.ok() && s.code() == Code::kCorrupt);
  EXPECT(s.message().find("t.simh") != std::string::npos);
  std::string bad = bytes;
  bad[64 + 40000] ^= 0x55;
  {
    std::ofstream o(dir + "/c.simh", std::ios::binary);
    o.write(bad.data(), bad.size());
  }
  s = Index::Open(dir + "/c.simh", true, &back);
  EXPECT(!s.ok() && s.code() == Code::kCorrupt);
  // A directory that does not span the entries (structure check, without the CRC).
  bad = bytes;
  const size_t first_dir = 64 + 32 + fps.size() * 16 - 2 * 16 + 8;  // 2 entries were compacted away
  bad[first_dir] = 7;
  {
    std::ofstream o(dir + "/d.simh", std::ios::binary);
    o.write(bad.data(), bad.size());
  }
  s = Index::Open(dir + "/d.simh", false, &back);
  EXPECT(!s.ok() && s.code() == Code::kCorrupt);
  EXPECT(s.message().find("offset") != std::string::npos);
  std::string cmd = "rm -rf " + dir;
  EXPECT_EQ(system(cmd.c_str()), 0);
}

TEST(index_open_random_corruption) {
  // Random byte flips in the payload, opened without the checksum: Open either refuses the file or gives
  // an index that can be queried and mutated without reading out of bounds (ASan would say).
  const std::string dir = TempDir();
  std::unique_ptr<Index> ix;
  EXPECT(Index::Create(4, 2, &ix).ok());
  const auto fps = MakeSet(200, 2, 17);
  std::vector<uint64_t> ids(fps.size());
  for (size_t i = 0; i < ids.size(); i++) ids[i] = i;
  EXPECT(ix->Insert(ids.data(), fps.data(), fps.size(), 1).ok());
  EXPECT(ix->Save(dir + "/ok.simh", 1).ok());
  std::string bytes;
  {
    std::ifstream in(dir + "/ok.simh", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Each structural check, one corruption at a time (offsets into the payload after the 64-byte header).
  const uint64_t n = LoadLe64(reinterpret_cast<const uint8_t*>(bytes.data()) + 64);
  const size_t head = 64, table0 = head + 32 + n * 16;
  const uint32_t d0 = LoadLe32(reinterpret_cast<const uint8_t*>(bytes.data()) + table0);
  const size_t dir0 = table0 + 8, nb = (size_t{1} << d0) + 1;
  const size_t ent0 = dir0 + (nb * 4 + 7) / 8 * 8;
  auto refuses = [&](size_t at, uint32_t value, const char* why) {
    std::string bad = bytes;
    StoreLe32(reinterpret_cast<uint8_t*>(&bad[at]), value);
    {
      std::ofstream o(dir + "/one.simh", std::ios::binary);
      o.write(bad.data(), bad.size());
    }
    std::unique_ptr<Index> back;
    const Status s = Index::Open(dir + "/one.simh", false, &back);
    EXPECT(!s.ok() && s.code() == Code::kCorrupt);
    EXPECT(s.message().find(why) != std::string::npos);
    EXPECT(s.message().find("one.simh") != std::string::npos && s.message().find("offset") != std::string::npos);
    if (s.message().find(why) == std::string::npos) std::fprintf(stderr, "  got: %s\n", s.message().c_str());
  };
  EXPECT(n > 256 && d0 > 0);
  refuses(head + 8, 5, "disagree with the header");
  refuses(head + 16, 7, "table count");
  refuses(head + 20, 31, "slot bits");
  refuses(table0, 31, "bad directory bits");
  refuses(dir0 + (nb - 2) * 4, 0, "not sorted");
  refuses(ent0, 0xffffffffu, "entry refers to slot");
  std::mt19937_64 rng(3);
  size_t refused = 0;
  for (int round = 0; round < 300; round++) {
    std::string bad = bytes;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; f++) bad[64 + rng() % (bad.size() - 64)] ^= static_cast<char>(1 + rng() % 255);
    {
      std::ofstream o(dir + "/bad.simh", std::ios::binary);
      o.write(bad.data(), bad.size());
    }
    std::unique_ptr<Index> back;
    const Status s = Index::Open(dir + "/bad.simh", false, &back);
    if (!s.ok()) {
      EXPECT(s.code() == Code::kCorrupt);
      EXPECT(s.message().find("bad.simh") != std::string::npos);
      refused++;
      continue;
    }
    std::vector<uint64_t> got;
    uint64_t first = 0;
    for (size_t q = 0; q < 20; q++) {
      back->FindAll(fps[q], &got);
      back->FindFirst(fps[q], &first);
    }
    const uint64_t nid = 1u << 20, nfp = fps[0];
    back->Insert(&nid, &nfp, 1, 1);
    size_t removed = 0;
    back->Remove(ids.data(), 100, 1, &removed);
    back->FindAll(fps[150], &got);
  }
  EXPECT(refused > 0);
  std::string cmd = "rm -rf " + dir;
  EXPECT_EQ(system(cmd.c_str()), 0);
}

TEST(pair_lines_format_u64_and_fill_the_buffer) {
  // every digit count, the ends of the range, and random values against std::to_string
  std::vector<uint64_t> a = {0, 1, 9, 10, 99, 100, 4294967295ULL, 4294967296ULL, 9999999999999999999ULL, 10000000000000000000ULL, UINT64_MAX};
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; i++) a.push_back(rng() >> (rng() % 64));
  std::vector<uint64_t> b(a.rbegin(), a.rend());
  std::string want;
  for (size_t i = 0; i < a.size(); i++) want += std::to_string(a[i]) + " " + std::to_string(b[i]) + "\n";
  char digits[20];
  for (uint64_t v : a) EXPECT(std::string(digits, FormatU64(v, digits)) == std::to_string(v));
  // in buffers of every small size (at least one line) and a large one: the same text, whole lines only
  for (size_t cap : {kMaxPairLine, kMaxPairLine + 1, size_t{100}, size_t{4096}, size_t{1} << 20}) {
    std::vector<char> buf(cap);
    std::string got;
    size_t next = 0;
    for (size_t first = 0; first < a.size(); first = next) {
      const size_t n = FormatPairLines(a.data(), b.data(), a.size(), first, buf.data(), cap, &next);
      EXPECT(next > first);
      EXPECT(n > 0 && n <= cap && buf[n - 1] == '\n');
      got.append(buf.data(), n);
    }
    EXPECT(got == want);
  }
  size_t next = 7;
  EXPECT(FormatPairLines(a.data(), b.data(), a.size(), a.size(), digits, 0, &next) == 0 && next == a.size());
}

// The reference rule of a line: trimmed of TAB, LF, VT, FF, CR, space and NBSP; empty: skipped; otherwise 1 to
// 20 digits at most 2^64 - 1, or an error.
static bool RefLine(const std::string& raw, bool* empty, uint64_t* v) {
  auto blank = [](unsigned char c) { return c == 0x20 || (c >= 0x09 && c <= 0x0d) || c == 0xa0; };
  size_t a = 0, b = raw.size();
  while (a < b && blank(raw[a])) a++;
  while (b > a && blank(raw[b - 1])) b--;
  *empty = a == b;
  if (*empty) return true;
  if (b - a > 20) return false;
  unsigned __int128 x = 0;
  for (size_t i = a; i < b; i++) {
    if (raw[i] < '0' || raw[i] > '9') return false;
    x = x * 10 + static_cast<unsigned>(raw[i] - '0');
  }
  if (x > UINT64_MAX) return false;
  *v = static_cast<uint64_t>(x);
  return true;
}

TEST(fingerprint_text_parses_pieces_of_any_size_into_any_room) {
  std::mt19937_64 rng(31);
  const char* blanks[] = {"", " ", "\t", "\r", "  \t", "\xa0"};
  const char* bad[] = {"12 34", "x7", "-5", "18446744073709551616", "123456789012345678901", "1 2", "7a"};
  for (int round = 0; round < 300; round++) {
    std::string text;
    std::vector<uint64_t> want;
    size_t want_lines = 0, bad_at = 0;  // bad_at: the bad line's number (1-based), 0: none
    const int nlines = 1 + static_cast<int>(rng() % 40);
    for (int l = 1; l <= nlines; l++) {
      std::string line;
      const uint64_t r = rng() % 100;
      if (r < 8) {
        line = blanks[rng() % 6];
      } else if (r < 10 && round % 3 == 0) {
        line = std::string(blanks[rng() % 6]) + bad[rng() % 7];
      } else {
        const uint64_t v = rng() % 4 == 0 ? (rng() % 4 == 0 ? UINT64_MAX : rng() % 1000) : rng();
        line = std::string(blanks[rng() % 6]) + (rng() % 10 == 0 ? "00" : "") + std::to_string(v) + blanks[rng() % 6];
      }
      text += line;
      if (l < nlines || rng() % 2) text += '\n';
      if (bad_at) continue;
      bool empty;
      uint64_t v;
      if (!RefLine(line, &empty, &v)) {
        bad_at = static_cast<size_t>(l);
        want_lines++;
      } else if (!empty) {
        want.push_back(v);
        want_lines++;
      }
    }
    // pieces of random sizes, room grown by one value at a time from a random start
    FingerprintLineState st;
    std::memset(&st, 0, sizeof st);
    std::vector<uint64_t> out(rng() % 3);
    size_t count = 0, lines = 0, newlines = 0, off = 0;
    bool failed = false;
    while (!failed) {
      const size_t piece = off < text.size() ? std::min<size_t>(text.size() - off, 1 + rng() % 9) : 0;
      const bool final = off + piece == text.size();
      size_t taken = 0;
      for (;;) {
        FingerprintParse r;
        ParseFingerprintText(reinterpret_cast<const uint8_t*>(text.data()) + off + taken, piece - taken, final, &st,
                             out.data() + count, out.size() - count, &r);
        EXPECT(r.values <= out.size() - count && r.consumed <= piece - taken);
        count += r.values;
        taken += r.consumed;
        lines += r.lines;
        newlines += r.newlines;
        if (r.bad) {
          failed = true;
          break;
        }
        if (taken == piece && !(final && st.started)) break;
        out.resize(out.size() + 1);
      }
      off += piece;
      if (final || failed) break;
    }
    EXPECT(failed == (bad_at != 0));
    if (failed) {
      EXPECT(newlines + 1 == bad_at);
    } else {
      EXPECT(lines == want_lines);
    }
    out.resize(count);
    EXPECT(out == want);
  }
}

TEST(sort_distinct_equals_sort_unique) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> tmp;
  for (int round = 0; round < 200; round++) {
    const size_t n = rng() % 3000;
    std::vector<uint64_t> v(n);
    const int shape = round % 4;  // uniform, few values, shared top bits, shared low bits
    for (auto& x : v) {
      const uint64_t r = rng();
      x = shape == 0 ? r : shape == 1 ? r % 7 : shape == 2 ? (0xabcdef0000000000ULL | (r & 0xffff)) : (r << 40);
    }
    std::vector<uint64_t> want = v;
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    const size_t k = SortDistinct(v.data(), v.size(), &tmp);
    v.resize(k);
    EXPECT(v == want);
  }
}

TEST_MAIN("simhash")
