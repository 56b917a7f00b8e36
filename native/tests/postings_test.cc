// Posting store: bounded-memory build == in-memory build == a std::map reference; append/delete/merge ==
// a fresh build of the live documents (byte for byte); corrupt and truncated files give errors naming the
// file and an offset. Every test runs for 32-bit and for 64-bit keys.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "check.h"
#include "postings/codec.h"
#include "postings/passages.h"
#include "io/file.h"
#include "postings/store.h"
#include "util/js_number.h"

using namespace neardup;
using namespace neardup::postings;

static std::string TempDir() {
  char tmpl[] = "/tmp/neardup-pst-XXXXXX";
  return std::string(::mkdtemp(tmpl));
}
static void RmRf(const std::string& d) { std::string c = "rm -rf '" + d + "'"; if (std::system(c.c_str())) {} }

template <typename Key>
using Ref = std::map<Key, std::set<uint32_t>>;

// The codecs alone: Rice codes with every parameter and Elias-Fano lists of every density (n = 1 .. U,
// U = 1 .. 2^32) read back what was written, and a list takes exactly EfBits(n, U) bits.
TEST(codec_round_trips) {
  std::mt19937_64 rng(5);
  BitWriter w;
  std::vector<std::pair<uint64_t, unsigned>> rice;
  for (int i = 0; i < 20000; i++) {
    const unsigned k = unsigned(rng() % 65);
    uint64_t v = rng() >> (rng() % 64);
    if (k < 64 && (v >> k) > 200) v = (v & ((uint64_t(1) << k) - 1)) | (uint64_t(rng() % 200) << k);
    if (k == 0) v %= 300;
    rice.push_back({v, k});
    w.Rice(v, k);
  }
  struct List {
    std::vector<uint32_t> ids;
    uint32_t base;
    uint64_t universe, at;
  };
  std::vector<List> lists;
  for (int i = 0; i < 3000; i++) {
    List l;
    const int kind = i % 4;
    l.universe = kind == 0 ? 1 + rng() % 16 : kind == 1 ? 1 + rng() % 5000 : kind == 2 ? (uint64_t(1) << 32) : 1 + (rng() >> 33);
    l.base = uint32_t(rng() % ((uint64_t(1) << 32) - l.universe + 1));
    const uint64_t n = 1 + (kind == 0 ? rng() % l.universe : rng() % std::min<uint64_t>(l.universe, 300));
    std::set<uint64_t> x;
    if (n == l.universe)
      for (uint64_t v = 0; v < n; v++) x.insert(v);
    while (x.size() < n) x.insert(i % 7 == 0 ? l.universe - 1 - rng() % n : rng() % l.universe);
    for (uint64_t v : x) l.ids.push_back(uint32_t(l.base + v));
    l.at = w.bits();
    PutEliasFano(&w, l.ids.data(), l.ids.size(), l.base, l.universe);
    EXPECT_EQ(w.bits() - l.at, EfBits(n, l.universe));
    lists.push_back(std::move(l));
  }
  const uint64_t total = w.bits();
  w.Finish();
  std::vector<uint8_t> bytes = w.bytes();
  bytes.resize(bytes.size() + 8);  // the slack a segment guarantees after its body
  BitReader r(bytes.data(), total);
  uint64_t pos = 0;
  bool same = true;
  for (auto& rv : rice) {
    uint64_t v = 0;
    same &= r.Rice(&pos, total, rv.second, &v) && v == rv.first;
  }
  EXPECT(same);
  for (auto& l : lists) {
    std::vector<uint32_t> got(l.ids.size());
    same &= r.EliasFano(l.at, l.ids.size(), l.universe, l.base, got.data()) && got == l.ids;
  }
  EXPECT(same);
  // a unary code that runs past the limit is refused
  uint64_t q = 0, p0 = 0;
  BitWriter z;
  z.Zeros(100);
  z.Finish();
  std::vector<uint8_t> zb = z.bytes();
  zb.resize(zb.size() + 8);
  EXPECT(!BitReader(zb.data(), 100).Unary(&p0, 100, &q));
}

// A mix of a small key space (long lists), full-width keys and the extremes; 64-bit keys also get keys that
// differ only above bit 31 (a truncation to 32 bits would merge their lists).
template <typename Key>
static std::vector<std::vector<Key>> RandomDocs(std::mt19937& rng, size_t n, uint32_t key_space) {
  std::vector<std::vector<Key>> docs(n);
  for (auto& d : docs) {
    const size_t m = rng() % 40;
    for (size_t i = 0; i < m; i++) {
      const uint32_t r = rng();
      Key k;
      if (r % 5 == 0)
        k = Key(uint64_t(rng()) << 32 | rng());
      else if (r % 7 == 0)
        k = r & 1 ? ~Key(0) : Key(0);
      else
        k = Key(r % key_space);
      if (sizeof(Key) == 8 && r % 3 == 0) k = Key(uint64_t(r % 4) << 40 | (k & 0xffffffffu));
      d.push_back(k);
    }
  }
  return docs;
}

static std::string Slurp(const std::string& p) {
  std::string s;
  io::ReadFile(p, &s);
  return s;
}

template <typename Key>
static bool SameAsRef(const BasicSegment<Key>& seg, const Ref<Key>& ref) {
  if (seg.num_keys() != ref.size()) return false;
  uint64_t i = 0;
  for (const auto& kv : ref) {
    std::vector<uint32_t> got;
    if (!seg.Decode(i, &got).ok() || seg.entry(i).key != kv.first) return false;
    if (got != std::vector<uint32_t>(kv.second.begin(), kv.second.end())) return false;
    if (seg.Find(kv.first) != int64_t(i)) return false;
    i++;
  }
  return true;
}

template <typename Key>
static void BuildBoundedEqualsInMemoryAndReference() {
  const std::string dir = TempDir();
  std::mt19937 rng(7);
  for (int round = 0; round < 4; round++) {
    auto docs = RandomDocs<Key>(rng, 300 + round * 500, round % 2 ? 1000 : 1u << 30);
    Ref<Key> ref;
    for (uint32_t d = 0; d < docs.size(); d++)
      for (Key k : docs[d]) ref[k].insert(d * 3 + round);  // ids not dense
    // budgets: none, small (many runs), medium, none with docs in order, tiny (runs merged in groups first);
    // key_bits hints right, too small (keys beyond the hint share the last bucket) and too large.
    constexpr int kBuilds = 5;
    std::string bytes[kBuilds];
    const uint64_t budgets[kBuilds] = {0, 4096 * 16, 200000, 0, 16384};
    const unsigned full = 8 * sizeof(Key), hints[kBuilds] = {full, round % 2 ? 10u : 30u, 12, round % 2 ? 10u : full, 8};
    for (int b = 0; b < kBuilds; b++) {
      BasicSegmentBuilder<Key> sb(budgets[b], dir, hints[b]);
      // add in a shuffled doc order: the result must not depend on it
      std::vector<uint32_t> order(docs.size());
      for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
      if (b != 3) std::shuffle(order.begin(), order.end(), rng);  // b == 3: docs in order (radix sort path)
      for (uint32_t d : order) EXPECT(sb.Add(d * 3 + round, docs[d].data(), docs[d].size()).ok());
      if ((b == 1 || b == 4) && round >= 2) EXPECT(sb.runs() > 4);
      const std::string p = dir + "/s" + std::to_string(b);
      EXPECT(sb.Finish(p).ok());
      if (budgets[b]) EXPECT(sb.peak_bytes() <= budgets[b]);
      if (b == 4 && round >= 2) EXPECT(sb.merge_passes() > 0);
      BasicSegment<Key> seg;
      EXPECT(seg.Open(p, true).ok());
      EXPECT(SameAsRef(seg, ref));
      bytes[b] = Slurp(p);
    }
    for (int b = 1; b < kBuilds; b++) EXPECT(bytes[0] == bytes[b]);
  }
  // no temporary files left
  EXPECT_EQ(std::system(("test $(ls -A '" + dir + "' | grep -c neardup-) -eq 0").c_str()), 0);
  RmRf(dir);
}
TEST(build_bounded_equals_in_memory_and_reference) { BuildBoundedEqualsInMemoryAndReference<uint32_t>(); }
TEST(build_bounded_equals_in_memory_and_reference_64) { BuildBoundedEqualsInMemoryAndReference<uint64_t>(); }

template <typename Key>
static void AppendDeleteMergeEqualsFreshBuild() {
  std::mt19937 rng(11);
  for (int round = 0; round < 6; round++) {
    const std::string dir = TempDir();
    const std::string idx = dir + "/idx";
    EXPECT(BasicPostingIndex<Key>::Create(idx).ok());
    BasicPostingIndex<Key> x;
    EXPECT(x.Open(idx, true).ok());
    std::map<uint32_t, std::vector<Key>> live;  // id -> keys
    for (int step = 0; step < 8; step++) {
      const int op = rng() % 4;
      if (op == 3) {
        // a streaming append that is abandoned (refusing other edits while open) leaves the index as it was
        std::unique_ptr<typename BasicPostingIndex<Key>::Appender> a;
        EXPECT(x.StartAppend(4096 * 8, dir, 12, &a).ok());
        auto docs = RandomDocs<Key>(rng, 1 + rng() % 30, 500);
        for (auto& d : docs) {
          uint32_t id = 0;
          EXPECT(a->Add(d.data(), d.size(), &id).ok());
        }
        std::unique_ptr<typename BasicPostingIndex<Key>::Appender> b;
        EXPECT(!x.StartAppend(0, dir, 32, &b).ok());
        EXPECT(!x.Merge().ok());
        std::vector<uint32_t> ids;
        EXPECT(!x.Append(docs, 0, dir, &ids).ok());
        if (!live.empty()) EXPECT(!x.Delete({live.begin()->first}).ok());
        a.reset();
        EXPECT_EQ(std::system(("test $(ls -A '" + dir + "' | grep -c neardup-) -eq 0").c_str()), 0);
      } else if (op == 0 || live.empty()) {
        auto docs = RandomDocs<Key>(rng, rng() % 60, 500);
        std::vector<uint32_t> ids;
        if (rng() % 2) {
          EXPECT(x.Append(docs, (rng() % 2) ? 4096 * 8 : 0, dir, &ids).ok());
        } else {
          std::unique_ptr<typename BasicPostingIndex<Key>::Appender> a;
          EXPECT(x.StartAppend((rng() % 2) ? 16384 : 0, dir, 4 + rng() % 60, &a).ok());
          for (auto& d : docs) {
            uint32_t id = 0;
            EXPECT(a->Add(d.data(), d.size(), &id).ok());
            ids.push_back(id);
          }
          EXPECT(a->Commit().ok());
        }
        EXPECT_EQ(ids.size(), docs.size());
        for (size_t i = 0; i < ids.size(); i++) {
          EXPECT(live.count(ids[i]) == 0);
          live[ids[i]] = docs[i];
        }
      } else if (op == 1) {
        std::vector<uint32_t> del;
        for (auto& kv : live)
          if (rng() % 4 == 0) del.push_back(kv.first);
        EXPECT(x.Delete(del).ok());
        for (uint32_t d : del) live.erase(d);
        if (!del.empty()) EXPECT(!x.Delete({del[0]}).ok());  // already deleted
      } else {
        EXPECT(x.Merge().ok());
        EXPECT(x.tombstones().empty());
        EXPECT_EQ(x.num_segments(), 1u);
      }
      // queries equal the reference at every step, also after reopening
      Ref<Key> ref;
      for (auto& kv : live)
        for (Key k : kv.second) ref[k].insert(kv.first);
      BasicPostingIndex<Key> y;
      EXPECT(y.Open(idx, true).ok());
      for (BasicPostingIndex<Key>* z : {&x, &y}) {
        size_t seen = 0;
        bool same = true;
        Status s = z->ForEach([&](Key key, const std::vector<uint32_t>& d) {
          auto it = ref.find(key);
          same &= it != ref.end() && std::vector<uint32_t>(it->second.begin(), it->second.end()) == d;
          seen++;
          return Status::Ok();
        });
        EXPECT(s.ok());
        EXPECT(same);
        EXPECT_EQ(seen, ref.size());
        std::vector<uint32_t> got;
        for (auto& kv : ref) {
          EXPECT(z->Lookup(kv.first, &got).ok());
          same &= got == std::vector<uint32_t>(kv.second.begin(), kv.second.end());
        }
        EXPECT(same);
        EXPECT_EQ(z->live_docs(), live.size());
      }
    }
    // merged index == fresh build of the live documents with the same ids
    EXPECT(x.Merge().ok());
    BasicSegmentBuilder<Key> fresh(0, dir);
    for (auto& kv : live) EXPECT(fresh.Add(kv.first, kv.second.data(), kv.second.size()).ok());
    EXPECT(fresh.Finish(dir + "/fresh").ok());
    EXPECT(Slurp(dir + "/fresh") == Slurp(x.segment(0).path()));
    // freed ids are reused by the next append, lowest first
    const std::vector<uint32_t> fr = x.free_ids();
    std::vector<uint32_t> ids;
    EXPECT(x.Append({{1, 2}, {3}}, 0, dir, &ids).ok());
    if (fr.size() >= 2) {
      EXPECT_EQ(ids[0], fr[0]);
      EXPECT_EQ(ids[1], fr[1]);
    }
    EXPECT_EQ(std::system(("test $(ls -A '" + idx + "' | grep -vc '^seg-[0-9]*.pst$') -eq 1").c_str()), 0);
    RmRf(dir);
  }
}
TEST(append_delete_merge_equals_fresh_build) { AppendDeleteMergeEqualsFreshBuild<uint32_t>(); }
TEST(append_delete_merge_equals_fresh_build_64) { AppendDeleteMergeEqualsFreshBuild<uint64_t>(); }

// The same parts put together by key ranges (WriteKeyRange of R ranges, then AppendKeyRanges) onto an index
// holding `before`: the same segments and manifest as AppendIndexes wrote into `want`; and the refusals: a
// corrupt range file, one written for other first ids, ranges out of order.
template <typename Key>
static void ExpectKeyRangesEqual(std::mt19937& rng, const std::string& dir, const std::vector<std::string>& parts,
                                 const std::vector<std::vector<Key>>& before, const BasicPostingIndex<Key>& want) {
  const uint32_t first = uint32_t(before.size());
  uint64_t documents = 0;
  for (const std::string& p : parts) {
    BasicPostingIndex<Key> x;
    EXPECT(x.Open(p, false).ok());
    documents += x.next_id();
  }
  for (uint32_t ranges : {1u, 2u, 3u, 1u + uint32_t(rng() % 9)}) {
    const std::string d = dir + "/kr", ix = d + "/ix";
    RmRf(d);
    EXPECT_EQ(std::system(("mkdir '" + d + "'").c_str()), 0);
    EXPECT(BasicPostingIndex<Key>::Create(ix).ok());
    BasicPostingIndex<Key> x;
    EXPECT(x.Open(ix, false).ok());
    std::vector<uint32_t> ids;
    if (!before.empty()) EXPECT(x.Append(before, 0, d, &ids).ok());
    std::vector<std::string> files;
    uint64_t posts = 0;
    for (uint32_t r = 0; r < ranges; r++) {
      files.push_back(d + "/range-" + std::to_string(r) + ".pst");
      uint64_t k = 0, p = 0;
      EXPECT(BasicPostingIndex<Key>::WriteKeyRange(parts, first, r, ranges, files.back(), d, nullptr, &k, &p).ok());
      posts += p;
    }
    EXPECT(!BasicPostingIndex<Key>::WriteKeyRange(parts, first, ranges, ranges, d + "/bad.pst", d, nullptr, &posts, &posts).ok());
    if (ranges > 1) {  // out of order: refused unless the ranges before are empty
      std::vector<std::string> swapped = files;
      std::swap(swapped[0], swapped[ranges - 1]);
      BasicSegment<Key> s0, s1;
      EXPECT(s0.Open(files[0], true).ok());
      EXPECT(s1.Open(files[ranges - 1], true).ok());
      if (s0.num_keys() > 0 && s1.num_keys() > 0) {
        Status s = x.AppendKeyRanges(swapped, documents);
        EXPECT(!s.ok());
        EXPECT(s.message().find("do not come after") != std::string::npos);
      }
    }
    if (documents > 0) {
      Status s = x.AppendKeyRanges(files, documents + 1);  // other ids
      EXPECT(!s.ok());
      EXPECT(s.message().find("another put-together") != std::string::npos);
      const std::string bad = d + "/corrupt.pst";  // one flipped bit in a list
      std::string bytes = Slurp(files[0]);
      if (bytes.size() > 64 + 48 + 16) {
        bytes[64] ^= 0x10;
        std::FILE* f = std::fopen(bad.c_str(), "wb");
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
        std::vector<std::string> with_bad = files;
        with_bad[0] = bad;
        s = x.AppendKeyRanges(with_bad, documents);
        EXPECT(!s.ok());
        EXPECT(s.code() == Code::kCorrupt);
        EXPECT(s.message().find("corrupt.pst") != std::string::npos);
      }
      EXPECT_EQ(x.num_segments(), before.empty() ? 0u : 1u);  // the refusals added nothing
    }
    EXPECT(x.AppendKeyRanges(files, documents).ok());
    EXPECT_EQ(x.num_segments(), want.num_segments());
    EXPECT_EQ(x.next_id(), want.next_id());
    for (size_t i = 0; i < x.num_segments(); i++) EXPECT(Slurp(x.segment(i).path()) == Slurp(want.segment(i).path()));
    EXPECT(Slurp(ix + "/MANIFEST") == Slurp(want.dir() + "/MANIFEST"));
    RmRf(d);
  }
}

// AppendIndexes (a build cut into parts, each indexed apart): the segment it writes is byte for byte the one
// a single append of the parts' documents in order writes, onto an empty index and onto one with documents
// (merged afterwards: the same bytes as merging after that single append); parts without documents add
// nothing; an index with free ids and a part with deleted documents are refused.
template <typename Key>
static void AppendIndexesEqualsOneAppend() {
  std::mt19937 rng(23);
  for (int round = 0; round < 6; round++) {
    const std::string dir = TempDir();
    const int nparts = 1 + rng() % 4;
    std::vector<std::string> parts;
    std::vector<std::vector<Key>> all;
    for (int p = 0; p < nparts; p++) {
      const std::string pd = dir + "/part" + std::to_string(p);
      EXPECT(BasicPostingIndex<Key>::Create(pd).ok());
      BasicPostingIndex<Key> x;
      EXPECT(x.Open(pd, true).ok());
      auto docs = RandomDocs<Key>(rng, (p == 1) ? 0 : rng() % 80, 400);  // part 1: no documents
      if (!docs.empty() && rng() % 2) docs.back().clear();                // a last document without keys
      std::vector<uint32_t> ids;
      if (!docs.empty()) EXPECT(x.Append(docs, (rng() % 2) ? 4096 : 0, dir, &ids).ok());
      all.insert(all.end(), docs.begin(), docs.end());
      parts.push_back(pd);
    }
    const std::vector<std::vector<Key>> before = round % 2 ? RandomDocs<Key>(rng, 1 + rng() % 30, 400) : std::vector<std::vector<Key>>();
    // A: the documents before, then every part's, each as one append; B: the documents before, then the parts
    const std::string a = dir + "/a", b = dir + "/b";
    BasicPostingIndex<Key> xa, xb;
    for (auto* d : {&a, &b}) EXPECT(BasicPostingIndex<Key>::Create(*d).ok());
    EXPECT(xa.Open(a, true).ok());
    EXPECT(xb.Open(b, true).ok());
    std::vector<uint32_t> ids;
    if (!before.empty()) {
      EXPECT(xa.Append(before, 0, dir, &ids).ok());
      EXPECT(xb.Append(before, 0, dir, &ids).ok());
    }
    if (!all.empty()) EXPECT(xa.Append(all, 0, dir, &ids).ok());
    EXPECT(xb.AppendIndexes(parts).ok());
    EXPECT_EQ(xa.num_segments(), xb.num_segments());
    EXPECT_EQ(xa.next_id(), xb.next_id());
    for (size_t i = 0; i < xa.num_segments(); i++) EXPECT(Slurp(xa.segment(i).path()) == Slurp(xb.segment(i).path()));
    EXPECT(Slurp(a + "/MANIFEST") == Slurp(b + "/MANIFEST"));
    ExpectKeyRangesEqual<Key>(rng, dir, parts, before, xb);
    EXPECT(xa.Merge().ok());
    EXPECT(xb.Merge().ok());
    EXPECT(Slurp(xa.segment(0).path()) == Slurp(xb.segment(0).path()));
    BasicPostingIndex<Key> yb;
    EXPECT(yb.Open(b, true).ok());  // reopened and verified
    EXPECT_EQ(yb.next_id(), uint32_t(before.size() + all.size()));
    // refusals: free ids here (deleted and merged), deleted documents in a part
    if (xb.next_id() > 0) {
      EXPECT(xb.Delete({0}).ok());
      EXPECT(xb.Merge().ok());
      Status s = xb.AppendIndexes(parts);
      EXPECT(!s.ok());
      EXPECT(s.message().find("free ids") != std::string::npos);
    }
    BasicPostingIndex<Key> p0;
    EXPECT(p0.Open(parts[0], true).ok());
    if (p0.next_id() > 0) {
      EXPECT(p0.Delete({0}).ok());
      BasicPostingIndex<Key> c;
      EXPECT(BasicPostingIndex<Key>::Create(dir + "/c").ok());
      EXPECT(c.Open(dir + "/c", true).ok());
      Status s = c.AppendIndexes(parts);
      EXPECT(!s.ok());
      EXPECT(s.message().find("deleted documents") != std::string::npos);
      EXPECT_EQ(c.num_segments(), 0u);
    }
    EXPECT(!xa.AppendIndexes({dir + "/missing"}).ok());
    RmRf(dir);
  }
}
TEST(append_indexes_equals_one_append) { AppendIndexesEqualsOneAppend<uint32_t>(); }
TEST(append_indexes_equals_one_append_64) { AppendIndexesEqualsOneAppend<uint64_t>(); }

// Large enough that the merge hands many batches of lists from its decoding thread to its encoding one (and,
// with NEARDUP_THREADS=1, runs both in turn): AppendIndexes == one append, and a merge after deletions == a
// fresh build of the live documents.
// An append without a spill folder spills its sorted runs into the index folder, not the working directory.
TEST(append_spills_into_the_index_folder) {
  const std::string dir = TempDir();
  EXPECT(PostingIndex::Create(dir + "/ix").ok());
  PostingIndex x;
  EXPECT(x.Open(dir + "/ix", false).ok());
  std::unique_ptr<PostingIndex::Appender> a;
  EXPECT(x.StartAppend(4096, "", 32, &a).ok());
  std::mt19937 rng(3);
  auto docs = RandomDocs<uint32_t>(rng, 3000, 1u << 30);
  for (auto& d : docs) {
    uint32_t id = 0;
    EXPECT(a->Add(d.data(), d.size(), &id).ok());
  }
  EXPECT(a->builder().runs() > 0);
  EXPECT_EQ(std::system(("test $(ls -A '" + dir + "/ix' | grep -c '^neardup-pst-run-') -gt 0").c_str()), 0);
  EXPECT_EQ(std::system("test $(ls -A . | grep -c '^neardup-pst-run-') -eq 0"), 0);
  EXPECT(a->Commit().ok());
  EXPECT_EQ(std::system(("test $(ls -A '" + dir + "/ix' | grep -c '^neardup-pst-') -eq 0").c_str()), 0);
  RmRf(dir);
}

// Commit data: written with the commit that gives it (manifest version 3), kept by delete and merge, read back by
// Open; without any, the manifest stays version 2; a length that does not fill the manifest is refused.
TEST(commit_data_round_trips) {
  const std::string dir = TempDir(), ix = dir + "/ix";
  EXPECT(PostingIndex::Create(ix).ok());
  auto version = [&] {
    std::string m;
    EXPECT(io::ReadFile(ix + "/MANIFEST", &m).ok());
    return m.size() >= 16 ? uint32_t(uint8_t(m[12])) : 0u;
  };
  EXPECT_EQ(version(), 2u);
  PostingIndex x;
  EXPECT(x.Open(ix, false).ok());
  EXPECT(x.commit_data().empty());
  std::vector<uint32_t> ids;
  EXPECT(x.Append({{1, 2}, {2, 3}}, 0, "", &ids).ok());
  EXPECT_EQ(version(), 2u);
  std::unique_ptr<PostingIndex::Appender> a;
  EXPECT(x.StartAppend(0, "", 32, &a).ok());
  uint32_t id = 0;
  const uint32_t keys[] = {2, 5};
  EXPECT(a->Add(keys, 2, &id).ok());
  const std::string data = "{\"meta\":\"x\"}";
  EXPECT(a->Commit(nullptr, &data).ok());
  EXPECT_EQ(version(), 3u);
  EXPECT(x.commit_data() == data);
  EXPECT(x.Delete({0}).ok());
  EXPECT(x.Merge().ok());
  PostingIndex y;
  EXPECT(y.Open(ix, true).ok());
  EXPECT(y.commit_data() == data);
  EXPECT_EQ(y.next_id(), 3u);
  std::vector<uint32_t> l;
  EXPECT(y.Lookup(2, &l).ok());
  EXPECT(l == std::vector<uint32_t>({1, 2}));
  // the manifest cut by one byte of its commit data (CRCs fixed by rewriting it through a copy is not possible
  // here): a truncated file fails its header's payload size
  std::string m;
  EXPECT(io::ReadFile(ix + "/MANIFEST", &m).ok());
  {
    FILE* f = std::fopen((ix + "/MANIFEST").c_str(), "wb");
    std::fwrite(m.data(), 1, m.size() - 1, f);
    std::fclose(f);
  }
  PostingIndex z;
  EXPECT(!z.Open(ix, false).ok());
  RmRf(dir);
}

TEST(merge_in_batches_equals_fresh_build) {
  std::mt19937 rng(5);
  const std::string dir = TempDir();
  std::vector<std::string> parts;
  std::vector<std::vector<uint32_t>> all;
  for (int p = 0; p < 3; p++) {
    parts.push_back(dir + "/part" + std::to_string(p));
    EXPECT(PostingIndex::Create(parts.back()).ok());
    PostingIndex x;
    EXPECT(x.Open(parts.back(), false).ok());
    auto docs = RandomDocs<uint32_t>(rng, 12000, 1u << 30);  // ~240k keys a part, mostly held by one document
    std::vector<uint32_t> ids;
    EXPECT(x.Append(docs, 0, dir, &ids).ok());
    all.insert(all.end(), docs.begin(), docs.end());
  }
  PostingIndex a, b;
  EXPECT(PostingIndex::Create(dir + "/a").ok());
  EXPECT(PostingIndex::Create(dir + "/b").ok());
  EXPECT(a.Open(dir + "/a", false).ok());
  EXPECT(b.Open(dir + "/b", false).ok());
  std::vector<uint32_t> ids;
  EXPECT(a.Append(all, 0, dir, &ids).ok());
  EXPECT(b.AppendIndexes(parts).ok());
  EXPECT(a.segment(0).num_keys() > 300000);
  EXPECT(Slurp(a.segment(0).path()) == Slurp(b.segment(0).path()));
  ExpectKeyRangesEqual<uint32_t>(rng, dir, parts, {}, b);
  std::vector<uint32_t> del;
  for (uint32_t d = 0; d < all.size(); d++)
    if (rng() % 3 == 0) del.push_back(d);
  EXPECT(b.Append({all[0], all[1]}, 0, dir, &ids).ok());  // a second segment
  EXPECT(b.Delete(del).ok());
  EXPECT(b.Merge().ok());
  SegmentBuilder fresh(0, dir);
  for (uint32_t d = 0; d < all.size() + 2; d++)
    if (!std::binary_search(del.begin(), del.end(), d)) EXPECT(fresh.Add(d, all[d < all.size() ? d : d - all.size()].data(), all[d < all.size() ? d : d - all.size()].size()).ok());
  EXPECT(fresh.Finish(dir + "/fresh").ok());
  EXPECT(Slurp(dir + "/fresh") == Slurp(b.segment(0).path()));
  RmRf(dir);
}

// An index or a segment of one key width is refused by the reader of the other.
TEST(key_width_is_checked) {
  const std::string dir = TempDir();
  EXPECT(PostingIndex64::Create(dir + "/i64").ok());
  PostingIndex64 a;
  EXPECT(a.Open(dir + "/i64", true).ok());
  std::vector<uint32_t> ids;
  EXPECT(a.Append({{1ull << 40, 7}}, 0, dir, &ids).ok());
  PostingIndex b;
  Status s = b.Open(dir + "/i64", true);
  EXPECT(!s.ok() && s.message().find("64-bit keys") != std::string::npos);
  Segment seg32;
  s = seg32.Open(a.segment(0).path(), true);
  EXPECT(!s.ok() && s.message().find("64-bit keys") != std::string::npos);
  Segment64 seg64;
  EXPECT(seg64.Open(a.segment(0).path(), true).ok());
  EXPECT_EQ(seg64.Find(1ull << 40), 1);
  EXPECT_EQ(seg64.Find(0), -1);
  RmRf(dir);
}

template <typename Key>
static void CorruptAndTruncatedSegmentsAreRefused() {
  const std::string dir = TempDir();
  std::mt19937 rng(3);
  auto docs = RandomDocs<Key>(rng, 200, 300);
  BasicSegmentBuilder<Key> sb(0, dir);
  for (uint32_t d = 0; d < docs.size(); d++) sb.Add(d, docs[d].data(), docs[d].size());
  const std::string p = dir + "/seg";
  EXPECT(sb.Finish(p).ok());
  const std::string good = Slurp(p);
  const std::string bad = dir + "/bad";
  auto write = [&](const std::string& b) {
    FILE* f = std::fopen(bad.c_str(), "wb");
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  };
  int refused = 0, named = 0, trials = 0;
  for (size_t cut : {size_t(0), size_t(10), size_t(63), size_t(64), good.size() / 2, good.size() - 1}) {
    write(good.substr(0, cut));
    BasicSegment<Key> s;
    Status st = s.Open(bad, false);
    trials++;
    refused += !st.ok();
    named += st.message().find(bad) != std::string::npos;
  }
  for (int i = 0; i < 300; i++) {
    std::string b = good;
    const size_t at = rng() % b.size();
    b[at] ^= char(1u << (rng() % 8));
    write(b);
    BasicSegment<Key> s;
    Status st = s.Open(bad, true);
    trials++;
    refused += !st.ok();
    named += st.message().find(bad) != std::string::npos && st.code() == Code::kCorrupt;
    // Without the payload checksum, structural damage is still found (at open or while decoding) and the
    // error names the file and the offset; a flip that keeps the structure valid decodes to other ids.
    BasicSegment<Key> u;
    Status su = u.Open(bad, false);
    std::vector<uint32_t> ids;
    for (uint64_t k = 0; su.ok() && k < u.num_keys(); k++) su = u.Decode(k, &ids);
    if (!su.ok() && su.message().find("at offset") == std::string::npos && su.message().find("checksum") == std::string::npos &&
        su.message().find("header") == std::string::npos && su.message().find("magic") == std::string::npos) {
      std::fprintf(stderr, "  no offset: %s\n", su.message().c_str());
      check::Failures()++;
    }
  }
  EXPECT_EQ(refused, trials);
  EXPECT_EQ(named, trials);
  RmRf(dir);
}
TEST(corrupt_and_truncated_segments_are_refused) { CorruptAndTruncatedSegmentsAreRefused<uint32_t>(); }
TEST(corrupt_and_truncated_segments_are_refused_64) { CorruptAndTruncatedSegmentsAreRefused<uint64_t>(); }

// Every text's blots (Key: uint32_t, or uint64_t with bo.bits = 64).
template <typename Key = uint32_t>
static std::vector<std::vector<Key>> BlotAll(const BlotOptions& bo, const std::vector<std::string>& texts) {
  Blotter bl(bo);
  std::vector<std::vector<Key>> keys;
  for (auto& t : texts) {
    bl.Run(reinterpret_cast<const uint8_t*>(t.data()), t.size());
    if constexpr (sizeof(Key) == 8)
      keys.push_back(bl.blots64());
    else
      keys.push_back(bl.blots());
  }
  return keys;
}

// Aligned runs against the brute force of their definition, and the passage functions on a small random
// index (under the sanitizers; their results are compared with a brute-force reference in
// test/passages.test.ts).
template <typename Key>
static void AlignedRunsAndPassages() {
  std::mt19937 rng(21);
  for (int round = 0; round < 200; round++) {
    std::vector<uint64_t> x(rng() % 40), y(rng() % 40);
    const uint32_t alpha = 1 + rng() % 6;
    for (auto& v : x) v = rng() % alpha;
    for (auto& v : y) v = rng() % alpha;
    std::vector<Run> got, want;
    AlignedRuns(x.data(), x.size(), y.data(), y.size(), &got);
    std::map<uint64_t, size_t> seen;
    std::vector<bool> allowed(y.size());
    for (size_t j = 0; j < y.size(); j++) allowed[j] = ++seen[y[j]] <= kMaxRepeat;
    for (size_t i = 0; i < x.size(); i++)
      for (size_t j = 0; j < y.size(); j++) {
        if (x[i] != y[j] || !allowed[j] || (i > 0 && j > 0 && x[i - 1] == y[j - 1])) continue;
        uint32_t len = 1;
        while (i + len < x.size() && j + len < y.size() && x[i + len] == y[j + len]) len++;
        want.push_back(Run{uint32_t(i), uint32_t(j), len});
      }
    EXPECT(got == want);
  }
  const std::string dir = TempDir();
  const std::string idx = dir + "/idx";
  EXPECT(BasicPostingIndex<Key>::Create(idx).ok());
  BasicPostingIndex<Key> ix;
  EXPECT(ix.Open(idx, true).ok());
  std::vector<std::string> texts;
  const char* words[] = {"a", "b", "c", "d", "e", "f"};
  for (int d = 0; d < 40; d++) {
    std::string t;
    for (int w = rng() % 60; w > 0; w--) t += std::string(words[rng() % 6]) + " ";
    texts.push_back(t);
  }
  BlotOptions bo;
  bo.seq_len = 3;
  bo.bits = 8 * sizeof(Key);
  Blotter bl(bo);
  std::vector<std::vector<Key>> keys = BlotAll<Key>(bo, texts);
  if (sizeof(Key) == 8) {  // 64-bit blots: some beyond 32 bits
    bool wide = false;
    for (const auto& k : keys)
      for (Key b : k) wide |= uint64_t(b) > 0xFFFFFFFFull;
    EXPECT(wide);
  }
  std::vector<uint32_t> ids;
  EXPECT(ix.Append(keys, 0, dir, &ids).ok());
  TextFn fn = [&](uint32_t d, const uint8_t** t, size_t* n) {
    *t = reinterpret_cast<const uint8_t*>(texts[d].data());
    *n = texts[d].size();
    return Status::Ok();
  };
  std::vector<uint64_t> all;
  EXPECT(ix.ForEach([&](Key k, const std::vector<uint32_t>& d) {
    if (d.size() >= 2) all.push_back(k);
    return Status::Ok();
  }).ok());
  std::vector<Passage> ps;
  EXPECT(ExtractPassages(ix, all, bo, fn, 2, nullptr, &ps).ok());
  EXPECT(!ps.empty());
  // The bounded extract (cut-off 2, the keys above) gives the same passages whatever its cap: a tiny cap
  // spills every sort, splits the key -> set table into partitions and keeps the occurrences in a file.
  auto same_passages = [](const std::vector<Passage>& a, const std::vector<Passage>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++) {
      if (a[i].windows != b[i].windows || a[i].first_blot != b[i].first_blot || a[i].docs.size() != b[i].docs.size()) return false;
      for (size_t k = 0; k < a[i].docs.size(); k++)
        if (a[i].docs[k].doc != b[i].docs[k].doc || a[i].docs[k].begin != b[i].docs[k].begin || a[i].docs[k].end != b[i].docs[k].end)
          return false;
    }
    return true;
  };
  for (uint64_t memory : {uint64_t(0), uint64_t(1), uint64_t(40000), uint64_t(1) << 30}) {
    PassageExtractor x;
    ExtractOptions eo;
    eo.memory = memory;
    eo.tmp_dir = dir;
    eo.slots = 2;
    EXPECT(x.Start(ix, 2, bo, fn, eo, nullptr).ok());
    std::vector<Passage> got;
    for (bool done = false; !done;) EXPECT(x.Next(3, &got, &done).ok());
    EXPECT(same_passages(got, ps));
    EXPECT(x.counters().passages == ps.size() && x.counters().chosen_keys == all.size());
    if (memory == 1) EXPECT(x.counters().spilled_bytes > 0 && x.counters().partitions > 1);
    if (memory == 0 || memory == (uint64_t(1) << 30)) EXPECT(x.counters().spilled_bytes == 0 && x.counters().partitions == 1);
  }
  {  // the spill folders went with their extractors
    size_t spill = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      spill += e.path().filename().string().rfind("neardup-spill-", 0) == 0;
    EXPECT(spill == 0);
  }
  CutOff cut;
  EXPECT(ExtractCutOff(ix, 0, 2, nullptr, &cut).ok());
  EXPECT(cut.keys > 0 && cut.threshold >= 2 && cut.mean >= 1);
  for (const auto& p : ps)
    for (const auto& o : p.docs) EXPECT(o.begin < o.end && o.end <= texts[o.doc].size());
  std::vector<PairSummary> pairs;
  EXPECT(PassagePairs(ix, bo, fn, 1, 1000, 2, nullptr, &pairs).ok());
  EXPECT(!pairs.empty());
  Windows q;
  WindowsOf(&bl, reinterpret_cast<const uint8_t*>(texts[3].data()), texts[3].size(), &q);
  std::vector<QueryMatch> m;
  EXPECT(QueryPassages(ix, q, bo, fn, 1, 1000, &m).ok());
  EXPECT(q.size() == 0 || (!m.empty() && m[0].doc == 3));
  // A cache shared by many queries (and one too small to keep everything) gives the uncached results.
  auto same = [](const std::vector<QueryMatch>& a, const std::vector<QueryMatch>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++) {
      if (a[i].doc != b[i].doc || a[i].windows != b[i].windows || a[i].spans.size() != b[i].spans.size()) return false;
      for (size_t k = 0; k < a[i].spans.size(); k++) {
        const QuerySpan &x = a[i].spans[k], &y = b[i].spans[k];
        if (x.windows != y.windows || x.q_begin != y.q_begin || x.q_end != y.q_end || x.d_begin != y.d_begin || x.d_end != y.d_end)
          return false;
      }
    }
    return true;
  };
  WindowsCache big(size_t(1) << 20), tiny(200);
  size_t matched = 0;
  for (int d = 0; d < 40; d++) {
    WindowsOf(&bl, reinterpret_cast<const uint8_t*>(texts[d].data()), texts[d].size(), &q);
    std::vector<QueryMatch> plain, cached, capped;
    EXPECT(QueryPassages(ix, q, bo, fn, 1, 1000, &plain).ok());
    EXPECT(QueryPassages(ix, q, bo, fn, 1, 1000, &cached, &big).ok());
    EXPECT(QueryPassages(ix, q, bo, fn, 1, 1000, &capped, &tiny).ok());
    EXPECT(same(plain, cached) && same(plain, capped));
    matched += plain.size();
  }
  EXPECT(matched > 40);
  RmRf(dir);
}
TEST(aligned_runs_and_passages) { AlignedRunsAndPassages<uint32_t>(); }
TEST(aligned_runs_and_passages_64) { AlignedRunsAndPassages<uint64_t>(); }

// The pairs as main computed them before PassagePairFinder (every eligible key in a hash map, every
// occurrence and every pair in memory), kept as the reference of the bounded version: serial here.
static uint64_t RefUnionBytes(std::vector<std::pair<uint32_t, uint32_t>>* r) {
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
template <typename Key>
static std::vector<PairSummary> RefPassagePairs(const BasicPostingIndex<Key>& ix, const BlotOptions& bo, const TextFn& text,
                                                uint32_t min_passages, uint32_t max_docs) {
  std::unordered_map<uint64_t, uint32_t> eligible;
  EXPECT(ix.ForEach([&](Key key, const std::vector<uint32_t>& d) {
    if (d.size() >= 2 && d.size() <= max_docs) eligible.emplace(key, uint32_t(eligible.size()));
    return Status::Ok();
  }).ok());
  struct Occ {
    uint32_t key, doc, pos, begin, end;
  };
  std::vector<Occ> occ;
  Blotter bl(bo);
  Windows w;
  for (uint32_t doc = 0; doc < ix.next_id(); doc++) {
    if (!ix.IsLive(doc)) continue;
    const uint8_t* t = nullptr;
    size_t n = 0;
    EXPECT(text(doc, &t, &n).ok());
    WindowsOf(&bl, t, n, &w);
    std::vector<std::pair<uint32_t, uint32_t>> firsts;
    for (size_t i = 0; i < w.size(); i++) {
      auto it = eligible.find(w.blots[i]);
      if (it != eligible.end()) firsts.push_back({it->second, uint32_t(i)});
    }
    std::sort(firsts.begin(), firsts.end());
    for (size_t k = 0; k < firsts.size(); k++) {
      if (k > 0 && firsts[k].first == firsts[k - 1].first) continue;
      const uint32_t i = firsts[k].second;
      occ.push_back(Occ{firsts[k].first, doc, i, w.begin[i], w.end[i]});
    }
  }
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
  std::vector<size_t> doc_start;
  for (size_t i = 0; i < by_doc.size(); i++)
    if (i == 0 || occ[by_doc[i]].doc != occ[by_doc[i - 1]].doc) doc_start.push_back(i);
  doc_start.push_back(by_doc.size());
  struct Match {
    uint32_t b;
    int64_t diag;
    uint32_t i, jb;
  };
  std::vector<PairSummary> out;
  std::vector<Match> m;
  std::vector<std::pair<uint32_t, uint32_t>> ra, rb;
  for (size_t g = 0; g + 1 < doc_start.size(); g++) {
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
        size_t r = l + 1;
        while (r < m.size() && m[r].b == p.b && m[r].diag == m[l].diag && occ[m[r].i].pos == occ[m[r - 1].i].pos + 1) r++;
        p.passages++;
        p.windows += uint32_t(r - l);
        ra.push_back({occ[m[l].i].begin, occ[m[r - 1].i].end});
        rb.push_back({occ[m[l].jb].begin, occ[m[r - 1].jb].end});
        l = r;
      }
      if (p.passages >= min_passages) {
        p.bytes_a = RefUnionBytes(&ra);
        p.bytes_b = RefUnionBytes(&rb);
        out.push_back(p);
      }
      k = l;
    }
  }
  std::sort(out.begin(), out.end(), [](const PairSummary& x, const PairSummary& y) {
    if (x.passages != y.passages) return x.passages > y.passages;
    if (x.windows != y.windows) return x.windows > y.windows;
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  return out;
}

static bool SamePairs(const std::vector<PairSummary>& x, const std::vector<PairSummary>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); i++)
    if (x[i].a != y[i].a || x[i].b != y[i].b || x[i].passages != y[i].passages || x[i].windows != y[i].windows ||
        x[i].bytes_a != y[i].bytes_a || x[i].bytes_b != y[i].bytes_b)
      return false;
  return true;
}

// The bounded pairs (PassagePairFinder) == the reference above on random corpora full of copied pieces,
// whatever the cap (a tiny one spills the output sort, splits the eligible keys into partitions, keeps the
// occurrences in a file, joins one document per block and splits the matches of a document), over one or
// several segments with deleted documents; the spill folder is gone afterwards.
template <typename Key>
static void PairsBoundedEqualsReference() {
  std::mt19937 rng(77);
  const char* words[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
  size_t split_runs = 0;  // runs whose eligible keys were split into partitions
  for (int round = 0; round < 6; round++) {
    const std::string dir = TempDir();
    const std::string idx = dir + "/idx";
    EXPECT(BasicPostingIndex<Key>::Create(idx).ok());
    BasicPostingIndex<Key> ix;
    EXPECT(ix.Open(idx, true).ok());
    const int ndocs = 30 + int(rng() % 60);
    const size_t vocab = 4 + rng() % 8;
    std::vector<std::vector<std::string>> w;
    for (int d = 0; d < ndocs; d++) {
      std::vector<std::string> doc;
      for (int k = rng() % 80; k > 0; k--) doc.push_back(words[rng() % vocab]);
      for (int c = rng() % 4; c > 0 && d > 0; c--) {  // pieces copied from earlier documents
        const auto& src = w[rng() % d];
        if (src.empty()) continue;
        const size_t at = rng() % src.size(), len = 1 + rng() % 30;
        std::vector<std::string> piece(src.begin() + long(at), src.begin() + long(std::min(src.size(), at + len)));
        doc.insert(doc.begin() + long(doc.empty() ? 0 : rng() % doc.size()), piece.begin(), piece.end());
        if (rng() % 8 == 0) doc.insert(doc.end(), piece.begin(), piece.end());
      }
      w.push_back(doc);
    }
    std::vector<std::string> texts;
    for (const auto& doc : w) {
      std::string t;
      for (const auto& x : doc) t += x + (rng() % 5 ? " " : ", ");
      texts.push_back(t);
    }
    BlotOptions bo;
    bo.seq_len = 2 + rng() % 3;
    bo.bits = 8 * sizeof(Key);
    std::vector<std::vector<Key>> keys = BlotAll<Key>(bo, texts);
    // one segment, or three with some documents deleted
    std::vector<uint32_t> ids;
    if (round % 2 == 0) {
      EXPECT(ix.Append(keys, 0, dir, &ids).ok());
    } else {
      const size_t third = keys.size() / 3;
      for (size_t part = 0; part < 3; part++) {
        std::vector<std::vector<Key>> k(keys.begin() + long(part * third), part == 2 ? keys.end() : keys.begin() + long((part + 1) * third));
        EXPECT(ix.Append(k, 0, dir, &ids).ok());
      }
      std::vector<uint32_t> del;
      for (uint32_t d = 0; d < keys.size(); d++)
        if (rng() % 7 == 0) del.push_back(d);
      if (!del.empty()) EXPECT(ix.Delete(del).ok());
    }
    TextFn fn = [&](uint32_t d, const uint8_t** t, size_t* n) {
      *t = reinterpret_cast<const uint8_t*>(texts[d].data());
      *n = texts[d].size();
      return Status::Ok();
    };
    for (uint32_t min_passages : {1u, 2u}) {
      for (uint32_t max_docs : {1000u, 3u}) {
        const std::vector<PairSummary> want = RefPassagePairs(ix, bo, fn, min_passages, max_docs);
        if (min_passages == 1 && max_docs == 1000) EXPECT(!want.empty());
        for (uint64_t memory : {uint64_t(0), uint64_t(1), uint64_t(4096), uint64_t(40000), uint64_t(1) << 30}) {
          for (size_t slots : {size_t(1), size_t(3)}) {
            PassagePairFinder f;
            PairsOptions o;
            o.memory = memory;
            o.tmp_dir = dir;
            o.slots = slots;
            EXPECT(f.Start(ix, bo, fn, min_passages, max_docs, o, nullptr).ok());
            std::vector<PairSummary> got;
            for (bool done = false; !done;) EXPECT(f.Next(1 + rng() % 5, &got, &done).ok());
            EXPECT(SamePairs(got, want));
            EXPECT(f.counters().pairs == want.size());
            if (memory == 1 && !want.empty()) {
              EXPECT(f.counters().spilled_bytes > 0 && f.counters().blocks > 1);
              EXPECT(f.counters().partitions > 1 || f.counters().eligible_keys <= 170);
              split_runs += f.counters().partitions > 1;
            }
            if (memory == 0 || memory == (uint64_t(1) << 30)) EXPECT(f.counters().spilled_bytes == 0 && f.counters().blocks <= 1);
          }
        }
        std::vector<PairSummary> all;
        EXPECT(PassagePairs(ix, bo, fn, min_passages, max_docs, 2, nullptr, &all).ok());
        EXPECT(SamePairs(all, want));
      }
    }
    size_t spill = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      spill += e.path().filename().string().rfind("neardup-spill-", 0) == 0;
    EXPECT(spill == 0);
    // a cancelled run leaves nothing behind either
    {
      std::atomic<bool> stop{true};
      PassagePairFinder f;
      PairsOptions o;
      o.memory = 1;
      o.tmp_dir = dir;
      EXPECT(f.Start(ix, bo, fn, 1, 1000, o, &stop).code() == Code::kCancelled);
    }
    spill = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      spill += e.path().filename().string().rfind("neardup-spill-", 0) == 0;
    EXPECT(spill == 0);
    RmRf(dir);
  }
  EXPECT(split_runs > 0);
}
TEST(pairs_bounded_equals_reference) { PairsBoundedEqualsReference<uint32_t>(); }
TEST(pairs_bounded_equals_reference_64) { PairsBoundedEqualsReference<uint64_t>(); }

// FormatJsNumber == JavaScript's JSON.stringify (the strings below were printed by Node for the same doubles).
TEST(js_numbers) {
  const std::pair<double, const char*> v[] = {
      {0.5, "0.5"}, {1, "1"}, {0, "0"}, {-0.0, "0"}, {1.0000000000000000e+21, "1e+21"}, {9.9999999999999995e-8, "1e-7"},
      {123456789012345683968.0, "123456789012345680000"}, {9.9999999999999995e-7, "0.000001"},
      {0.33333333333333331, "0.3333333333333333"}, {-1.5000000000000000e-10, "-1.5e-10"}, {4.9406564584124654e-324, "5e-324"},
      {1.7976931348623157e+308, "1.7976931348623157e+308"}, {0.30000000000000004, "0.30000000000000004"},
      {0.66666666666666663, "0.6666666666666666"}, {0.0000015, "0.0000015"}, {100, "100"}, {1e20, "100000000000000000000"},
      {123.456, "123.456"}, {-42, "-42"}, {0.99999999999999989, "0.9999999999999999"}, {4.3499999999999996, "4.35"},
      {1.0000000000000000e-300, "1e-300"}, {7.7777777777777782e-8, "7.777777777777778e-8"}, {12345678.9, "12345678.9"},
      {std::nan(""), "null"}};
  char buf[40];
  for (const auto& x : v) EXPECT(std::string(buf, FormatJsNumber(x.first, buf)) == x.second);
}

TEST_MAIN("postings")
