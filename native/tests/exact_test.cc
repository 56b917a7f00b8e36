// Core tests of exact dedup: representatives equal a brute force (map from text to its first document) in
// memory and when the table spills to sorted runs; normalisation follows the shingle stream's options.
#include <map>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "exact/exact_dedup.h"

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

TEST_MAIN("exact")
