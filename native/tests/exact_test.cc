// Core tests of exact dedup: representatives equal a brute force (map from text to its first document) in
// memory and when the table spills to sorted runs; normalisation follows the shingle stream's options.
#include <map>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "exact/exact_dedup.h"
#include "exact/exact_index.h"
#include "io/file.h"
#include <cstdio>
#include <unistd.h>

using namespace neardup;
using namespace neardup::exact;

namespace {

std::vector<std::string> RandomTexts(size_t n, size_t distinct, uint64_t seed) {
  std::mt19937_64 r(seed);
  std::vector<std::string> pool;
  for (size_t i = 0; i < distinct; i++) pool.push_back("text " + std::to_string(r()) + (i % 3 ? " x" : ""));
  pool.push_back("");  // an empty text is a text like any other
  std::vector<std::string> out;
  for (size_t i = 0; i < n; i++) out.push_back(pool[r() % pool.size()]);
  return out;
}

std::vector<uint32_t> BruteForce(const std::vector<std::string>& t, const std::vector<uint8_t>& valid) {
  std::map<std::string, uint32_t> first;
  std::vector<uint32_t> rep(t.size());
  for (size_t i = 0; i < t.size(); i++) {
    if (!valid[i]) {
      rep[i] = uint32_t(i);
      continue;
    }
    auto it = first.emplace(t[i], uint32_t(i)).first;
    rep[i] = it->second;
  }
  return rep;
}

// Adds the texts in batches of `batch` and returns Finish's representatives; checks that those Add reported
// are the final ones (or pending).
std::vector<uint32_t> Run(const ExactOptions& o, const std::vector<std::string>& t, const std::vector<uint8_t>& valid,
                          size_t batch, bool* spilled) {
  ExactDedup d(o);
  std::vector<uint32_t> early(t.size());
  for (size_t b = 0; b < t.size(); b += batch) {
    const size_t e = std::min(t.size(), b + batch);
    std::vector<const uint8_t*> p;
    std::vector<size_t> len;
    for (size_t i = b; i < e; i++) {
      p.push_back(reinterpret_cast<const uint8_t*>(t[i].data()));
      len.push_back(t[i].size());
    }
    Docs docs{p.data(), len.data(), e - b};
    Status s = d.Add(docs, valid.data() + b, nullptr, early.data() + b);
    EXPECT(s.ok());
  }
  *spilled = d.spilled();
  std::vector<uint32_t> rep;
  EXPECT(d.Finish(&rep, nullptr).ok());
  size_t dups = 0;
  for (size_t i = 0; i < rep.size(); i++) dups += rep[i] != i;
  EXPECT_EQ(d.stats().duplicates, dups);
  EXPECT_EQ(d.stats().distinct, rep.size() - dups);
  for (size_t i = 0; i < t.size(); i++) EXPECT(early[i] == ExactDedup::kPending || early[i] == rep[i]);
  return rep;
}

}  // namespace

TEST(representatives_equal_brute_force_in_memory) {
  const auto t = RandomTexts(20000, 3000, 1);
  std::vector<uint8_t> valid(t.size(), 1);
  for (size_t i = 0; i < t.size(); i += 97) valid[i] = 0;
  bool spilled = true;
  EXPECT(Run(ExactOptions{}, t, valid, 1000, &spilled) == BruteForce(t, valid));
  EXPECT(!spilled);
}

TEST(representatives_equal_brute_force_when_spilled) {
  const auto t = RandomTexts(200000, 60000, 2);
  std::vector<uint8_t> valid(t.size(), 1);
  for (size_t i = 5; i < t.size(); i += 1001) valid[i] = 0;
  ExactOptions o;
  o.memory_bytes = 1;  // the table spills at its first growth; runs of 1024 records
  o.tmp_dir = "/tmp";
  bool spilled = false;
  EXPECT(Run(o, t, valid, 7000, &spilled) == BruteForce(t, valid));
  EXPECT(spilled);
}

TEST(normalisation_follows_the_shingle_options) {
  const std::vector<std::string> t = {"Hello,  World", "hello world", "HELLO, WORLD", "hello, world", "Hello World!"};
  const std::vector<uint8_t> valid(t.size(), 1);
  bool spilled;
  // as is: all distinct
  EXPECT((Run(ExactOptions{}, t, valid, 2, &spilled) == std::vector<uint32_t>{0, 1, 2, 3, 4}));
  ExactOptions o;
  o.normalize = true;
  o.text.lowercase = true;
  // lower-cased: "HELLO, WORLD" == "hello, world"
  EXPECT((Run(o, t, valid, 2, &spilled) == std::vector<uint32_t>{0, 1, 2, 2, 4}));
  // words (whitespace folded), lower-cased, punctuation stripped: all one text
  o.text.unit = TextUnit::kWord;
  o.text.strip_punct = true;
  EXPECT((Run(o, t, valid, 2, &spilled) == std::vector<uint32_t>{0, 0, 0, 0, 0}));
}

namespace {

std::string TmpPath(const char* name) { return std::string("/tmp/neardup-exact-test-") + std::to_string(getpid()) + name; }

// Runs texts through an ExactDedup against `prior` (nullable) and writes the index of what it kept.
std::vector<uint32_t> RunAndSave(const ExactOptions& o, const std::vector<std::string>& t, const ExactIndex* prior,
                                 const std::string& path, uint64_t first_doc, bool* spilled, std::vector<std::pair<uint32_t, uint64_t>>* matches) {
  ExactDedup d(o);
  d.SetIndex(prior);
  d.KeepForIndex();
  std::vector<const uint8_t*> p;
  std::vector<size_t> len;
  std::vector<std::string> ids;
  std::vector<const uint8_t*> id_ptr;
  std::vector<size_t> id_len;
  for (size_t i = 0; i < t.size(); i++) {
    p.push_back(reinterpret_cast<const uint8_t*>(t[i].data()));
    len.push_back(t[i].size());
    ids.push_back("\"id" + std::to_string(first_doc + i) + "\"");
  }
  for (const auto& x : ids) {
    id_ptr.push_back(reinterpret_cast<const uint8_t*>(x.data()));
    id_len.push_back(x.size());
  }
  EXPECT(d.Add(Docs{p.data(), len.data(), t.size()}, nullptr, nullptr, nullptr).ok());
  *spilled = d.spilled();
  std::vector<uint32_t> rep;
  EXPECT(d.Finish(&rep, nullptr).ok());
  *matches = d.index_matches();
  IndexWrite w;
  w.meta = "{\"settings\":1}";
  w.documents = first_doc + t.size();
  w.first_doc = first_doc;
  w.prior = prior;
  w.with_ids = true;
  w.ids = Docs{id_ptr.data(), id_len.data(), ids.size()};
  Status s = d.SaveIndex(path, w);
  EXPECT(s.ok());
  return rep;
}

std::string ReadAll(const std::string& path) {
  std::string s;
  EXPECT(io::ReadFile(path, &s).ok());
  return s;
}

}  // namespace

TEST(index_of_a_run_holds_its_kept_documents_and_a_later_run_matches_them) {
  const auto all = RandomTexts(30000, 8000, 3);
  const std::vector<std::string> a(all.begin(), all.begin() + 20000), b(all.begin() + 20000, all.end());
  const std::vector<uint8_t> valid(all.size(), 1);
  const auto truth = BruteForce(all, valid);
  const std::string pa = TmpPath("a.exix"), pa2 = TmpPath("a2.exix"), pb = TmpPath("b.exix"), pb2 = TmpPath("b2.exix");
  bool spilled = false;
  std::vector<std::pair<uint32_t, uint64_t>> m;
  RunAndSave(ExactOptions{}, a, nullptr, pa, 0, &spilled, &m);
  EXPECT(!spilled);
  ExactOptions sp;
  sp.memory_bytes = 1;
  sp.tmp_dir = "/tmp";
  RunAndSave(sp, a, nullptr, pa2, 0, &spilled, &m);
  EXPECT(spilled);
  EXPECT(ReadAll(pa) == ReadAll(pa2));  // in memory or spilled: the same bytes
  ExactIndex ia;
  EXPECT(ia.Load(pa).ok());
  EXPECT_EQ(ia.documents(), 20000u);
  EXPECT(ia.meta() == "{\"settings\":1}");
  size_t kept_a = 0;
  for (size_t i = 0; i < a.size(); i++) kept_a += truth[i] == i;
  EXPECT_EQ(ia.size(), kept_a);
  // the second part against the index: a document whose text is in part one gets kIndexMatch and the entry
  // of that text's first document; the others as a run over both parts would give them
  for (int mode = 0; mode < 2; mode++) {
    std::vector<std::pair<uint32_t, uint64_t>> matches;
    const auto rep = RunAndSave(mode ? sp : ExactOptions{}, b, &ia, mode ? pb2 : pb, 20000, &spilled, &matches);
    EXPECT(spilled == (mode == 1));
    size_t k = 0;
    for (size_t i = 0; i < b.size(); i++) {
      const uint32_t want = truth[20000 + i];
      if (want < 20000) {
        EXPECT_EQ(rep[i], ExactDedup::kIndexMatch);
        EXPECT(k < matches.size() && matches[k].first == i && ia.doc(matches[k].second) == want &&
               ia.id(matches[k].second) == "\"id" + std::to_string(want) + "\"");
        k++;
      } else {
        EXPECT_EQ(uint64_t(rep[i]) + 20000, uint64_t(want));
      }
    }
    EXPECT_EQ(k, matches.size());
  }
  EXPECT(ReadAll(pb) == ReadAll(pb2));
  ExactIndex ib;
  EXPECT(ib.Load(pb).ok());
  size_t kept = 0;
  for (size_t i = 0; i < all.size(); i++) kept += truth[i] == i;
  EXPECT_EQ(ib.size(), kept);
  EXPECT_EQ(ib.documents(), 30000u);
  // every kept document is found, with its number and id
  for (size_t i = 0; i < all.size(); i++) {
    if (truth[i] != i) continue;
    uint64_t e;
    EXPECT(ib.Find(HashText(ExactOptions{}, reinterpret_cast<const uint8_t*>(all[i].data()), all[i].size(), nullptr), &e) && ib.doc(e) == i);
  }
  // a flipped byte anywhere is refused (header or payload CRC), a cut file too
  const std::string bytes = ReadAll(pb);
  for (size_t at : {size_t(9), size_t(70), bytes.size() / 2, bytes.size() - 1}) {
    std::string c = bytes;
    c[at] ^= 0x40;
    const std::string pc = TmpPath("c.exix");
    std::FILE* f = std::fopen(pc.c_str(), "wb");
    std::fwrite(c.data(), 1, at == bytes.size() - 1 ? c.size() - 7 : c.size(), f);
    std::fclose(f);
    ExactIndex ic;
    const Status s = ic.Load(pc);
    EXPECT(!s.ok() && (s.code() == Code::kCorrupt || s.code() == Code::kUnsupported) && s.message().find(pc) != std::string::npos);
    std::remove(pc.c_str());
  }
  for (const auto& p : {pa, pa2, pb, pb2}) std::remove(p.c_str());
}

TEST_MAIN("exact")
