// Core tests of the decontamination index (filter/decontam.h): small cases worked by hand (n-grams, short
// rows, short documents, normalisation), approx mode without false negatives, misuse as Status.
#include <string>
#include <vector>

#include "check.h"
#include "filter/decontam.h"

using namespace neardup;
using namespace neardup::filter;

namespace {

struct Texts {
  std::vector<std::string> s;
  std::vector<const uint8_t*> p;
  std::vector<size_t> l;
  explicit Texts(std::vector<std::string> v) : s(std::move(v)) {
    for (auto& x : s) {
      p.push_back(reinterpret_cast<const uint8_t*>(x.data()));
      l.push_back(x.size());
    }
  }
  Docs docs() const { return Docs{p.data(), l.data(), p.size()}; }
};

std::unique_ptr<DecontamIndex> Build(bool approx) {
  DecontamOptions o;
  o.n = 3;
  o.min_tokens = 2;
  o.approx = approx;
  std::unique_ptr<DecontamIndex> x;
  EXPECT(DecontamIndex::Create(o, &x).ok());
  Texts bench({"The quick brown fox jumps", "Hello, World!", "lazy dog sleeps here now", "x"});
  const uint32_t rows[] = {0, 1, 2, 3};
  EXPECT(x->Add(bench.docs(), rows, 2, nullptr).ok());
  EXPECT(x->Seal().ok());
  return x;
}

const std::vector<std::string> kCorpus = {
    "a QUICK brown fox!",        // 0: the 3-gram "quick brown fox" of row 0
    "say hello world to me",     // 1: short row 1 inside
    "brown fox",                 // 2: a short document, a part of row 0
    "fox",                       // 3: under min_tokens
    "",                          // 4: empty
    "nothing here at all",       // 5: clean
    "Lazy dog sleeps; hello, WORLD",  // 6: row 2's 3-gram and short row 1
};

}  // namespace

TEST(exact_index_hand_cases) {
  auto x = Build(false);
  EXPECT_EQ(x->short_lengths(), uint64_t(1));  // a short row of 2 tokens (bit 0 = min_tokens)
  Texts c(kCorpus);
  ProbeResult r;
  EXPECT(x->Probe(c.docs(), nullptr, ProbeOptions{}, 2, nullptr, &r).ok());
  const uint32_t tokens[] = {4, 5, 2, 1, 0, 4, 5};
  const uint32_t ngrams[] = {2, 3, 1, 0, 0, 2, 3};
  const uint32_t matched[] = {1, 0, 1, 0, 0, 0, 1};
  const uint32_t shorts[] = {0, 1, 0, 0, 0, 0, 1};
  const uint32_t covered[] = {3, 2, 2, 0, 0, 0, 5};
  for (size_t d = 0; d < kCorpus.size(); d++) {
    EXPECT_EQ(r.tokens[d], tokens[d]);
    EXPECT_EQ(r.ngrams[d], ngrams[d]);
    EXPECT_EQ(r.matched[d], matched[d]);
    EXPECT_EQ(r.short_found[d], shorts[d]);
    EXPECT_EQ(r.covered[d], covered[d]);
  }
  auto rows = [&](size_t d) { return std::vector<uint32_t>(r.rows.begin() + r.row_start[d], r.rows.begin() + r.row_start[d + 1]); };
  EXPECT(rows(0) == std::vector<uint32_t>({0}));
  EXPECT(rows(1) == std::vector<uint32_t>({1}));
  EXPECT(rows(2) == std::vector<uint32_t>({0}));
  EXPECT(rows(5).empty());
  EXPECT(rows(6) == std::vector<uint32_t>({1, 2}));
  EXPECT_EQ(r.rows_total[6], 2u);
  // samples: the normalised spans
  EXPECT_EQ(r.sample_start[1] - r.sample_start[0], 1u);
  const size_t j = r.sample_start[0];
  EXPECT(r.sample_text.substr(r.sample_off[j], r.sample_off[j + 1] - r.sample_off[j]) == "quick brown fox");
}

TEST(approx_index_finds_every_true_match) {
  auto exact = Build(false);
  auto approx = Build(true);
  Texts c(kCorpus);
  ProbeResult a, b;
  EXPECT(exact->Probe(c.docs(), nullptr, ProbeOptions{}, 1, nullptr, &a).ok());
  EXPECT(approx->Probe(c.docs(), nullptr, ProbeOptions{}, 1, nullptr, &b).ok());
  for (size_t d = 0; d < kCorpus.size(); d++) {
    EXPECT(b.matched[d] >= a.matched[d]);
    EXPECT(b.short_found[d] >= a.short_found[d]);
  }
  EXPECT(b.rows.empty());
  EXPECT(approx->fp_bound() > 0 && approx->fp_bound() <= 1e-8 * (1 + 1e-9));
}

TEST(valid_mask_and_misuse) {
  DecontamOptions o;
  std::unique_ptr<DecontamIndex> x;
  o.min_tokens = 14;
  EXPECT(!DecontamIndex::Create(o, &x).ok());
  o.min_tokens = 13;
  EXPECT(DecontamIndex::Create(o, &x).ok());
  Texts c({"a b c"});
  ProbeResult r;
  EXPECT(!x->Probe(c.docs(), nullptr, ProbeOptions{}, 1, nullptr, &r).ok());  // not sealed
  EXPECT(x->Seal().ok());
  const uint32_t rows[] = {0};
  EXPECT(!x->Add(c.docs(), rows, 1, nullptr).ok());  // sealed
  auto y = Build(false);
  Texts d({"a QUICK brown fox!", "a QUICK brown fox!"});
  const uint8_t valid[] = {0, 1};
  EXPECT(y->Probe(d.docs(), valid, ProbeOptions{}, 1, nullptr, &r).ok());
  EXPECT_EQ(r.matched[0], 0u);
  EXPECT_EQ(r.tokens[0], 0u);
  EXPECT_EQ(r.matched[1], 1u);
}

TEST_MAIN("decontam")
