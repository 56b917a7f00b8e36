// Chunk similarity (chunks/index.h): the index agrees with brute force over exact chunk sets (strings, no
// hashing; 64-bit ids rule out collisions); parts, memory budgets and staged runs give the same table as one
// in-memory run; incremental runs give the table of a full run on the same final documents (random edit
// sequences with id reuse); corrupt and truncated files are refused with the file named.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "chunks/index.h"
#include "hash/fast64.h"
#include "io/file.h"
#include "io/os.h"
#include "postings/store.h"

using namespace neardup;
using namespace neardup::chunks;

static std::string TempDir() {
  char tmpl[] = "/tmp/neardup-chunks-XXXXXX";
  return std::string(::mkdtemp(tmpl));
}
static void RmRf(const std::string& d) {
  std::string c = "rm -rf '" + d + "'";
  if (std::system(c.c_str())) {
  }
}

using Corpus = std::map<std::string, std::string>;  // external id (JSON text) -> text
struct Row {
  std::string other;
  uint32_t shared;
  bool operator==(const Row& o) const { return other == o.other && shared == o.shared; }
};
using Table = std::map<std::string, std::vector<Row>>;

static std::vector<std::string> Words(const std::string& t) {
  std::vector<std::string> w;
  std::string cur;
  for (char c : t) {
    if (c == ' ') {
      if (!cur.empty()) w.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) w.push_back(cur);
  return w;
}

// Exact chunk sets: the n-word sequences as strings (a shorter non-empty text: one chunk of all its words).
static std::set<std::string> ExactChunks(const std::string& t, uint32_t n) {
  const auto w = Words(t);
  std::set<std::string> out;
  if (w.empty()) return out;
  if (w.size() < n) {
    std::string s;
    for (size_t i = 0; i < w.size(); i++) s += (i ? " " : "") + w[i];
    out.insert(s);
    return out;
  }
  for (size_t i = 0; i + n <= w.size(); i++) {
    std::string s;
    for (size_t j = 0; j < n; j++) s += (j ? " " : "") + w[i + j];
    out.insert(s);
  }
  return out;
}

// Brute force: every pair's exact shared count, ranked as the index ranks (shared desc, the other's chunk
// count asc, its id asc), floors applied, top `limit` (default K).
static Table BruteForce(const Corpus& c, const IndexParams& p, size_t limit = 0) {
  std::map<std::string, std::set<std::string>> ch;
  for (const auto& d : c) ch[d.first] = ExactChunks(d.second, p.chunk.text.n);
  Table t;
  for (const auto& a : ch) {
    std::vector<std::pair<std::string, uint32_t>> v;
    for (const auto& b : ch) {
      if (a.first == b.first) continue;
      uint32_t s = 0;
      for (const auto& x : a.second) s += b.second.count(x);
      if (s == 0 || s < p.min_shared || double(s) / double(a.second.size()) < p.min_similarity) continue;
      v.push_back({b.first, s});
    }
    std::sort(v.begin(), v.end(), [&](const auto& x, const auto& y) {
      if (x.second != y.second) return x.second > y.second;
      if (ch[x.first].size() != ch[y.first].size()) return ch[x.first].size() < ch[y.first].size();
      return x.first < y.first;
    });
    if (v.size() > (limit ? limit : p.top_k)) v.resize(limit ? limit : p.top_k);
    auto& rows = t[a.first];
    for (const auto& x : v) rows.push_back(Row{x.first, x.second});
  }
  return t;
}

// The table: the first K entries of every list.
static Table TableOf(const State& s) {
  Table t;
  const Directory& d = s.directory();
  std::vector<TopEntry> top;
  for (uint32_t id = 0; id < d.slots(); id++) {
    if (!d.entry(id).live()) continue;
    Status st = s.Top(id, &top);
    EXPECT(st.ok());
    if (top.size() > s.params().top_k) top.resize(s.params().top_k);
    auto& rows = t[std::string(d.ext(id))];
    for (const auto& e : top) rows.push_back(Row{std::string(d.ext(e.other)), e.shared});
  }
  return t;
}

// Every stored list (K and more) is the exact start of the brute-force ranking, at least K long unless it
// is complete, and a complete one holds every document passing the floors. After a full run (`fresh`) a
// list is complete exactly when no more than keep documents pass.
static void CheckLists(const State& s, const Corpus& c, bool fresh = false) {
  const Table all = BruteForce(c, s.params(), SIZE_MAX);
  const Directory& d = s.directory();
  std::vector<TopEntry> top;
  for (uint32_t id = 0; id < d.slots(); id++) {
    if (!d.entry(id).live()) continue;
    EXPECT(s.Top(id, &top).ok());
    auto it = all.find(std::string(d.ext(id)));
    const std::vector<Row> want = it == all.end() ? std::vector<Row>() : it->second;
    const bool complete = d.entry(id).complete();
    EXPECT(top.size() <= s.params().keep());
    if (fresh) EXPECT(complete == (want.size() <= s.params().keep()));
    EXPECT(complete ? top.size() == want.size() : top.size() >= std::min<size_t>(s.params().top_k, want.size()));
    bool prefix = top.size() <= want.size();
    for (size_t i = 0; prefix && i < top.size(); i++)
      prefix = want[i] == Row{std::string(d.ext(top[i].other)), top[i].shared};
    EXPECT(prefix);
    if (!prefix || (complete && top.size() != want.size())) {
      std::fprintf(stderr, "  list of %s (%s, %zu entries, %zu wanted)\n", std::string(d.ext(id)).c_str(),
                   complete ? "complete" : "partial", top.size(), want.size());
      return;
    }
  }
}

struct Batch {
  std::vector<std::string> ext, text;
  std::vector<bool> del;
};

static Status AddTo(Builder* b, const Corpus& c) {
  std::vector<std::string_view> ext;
  std::vector<const uint8_t*> ptr;
  std::vector<size_t> len;
  for (const auto& d : c) {
    ext.push_back(d.first);
    ptr.push_back(reinterpret_cast<const uint8_t*>(d.second.data()));
    len.push_back(d.second.size());
  }
  size_t bad = 0;
  return b->Add(ext, Docs{ptr.data(), len.data(), ptr.size()}, &bad);
}

static std::shared_ptr<State> Build(const std::string& dir, const Corpus& c, const IndexParams& p, uint64_t memory = 0) {
  Builder b;
  RunOptions o;
  o.memory = memory;
  Status s = b.Create(dir, p, o);
  EXPECT(s.ok());
  if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
  s = AddTo(&b, c);
  EXPECT(s.ok());
  std::shared_ptr<State> pending;
  s = b.Finish(&pending);
  if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
  EXPECT(s.ok());
  EXPECT(CommitPending(dir).ok());
  std::shared_ptr<State> st;
  s = State::Open(dir, kManifestName, true, &st);
  if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
  EXPECT(s.ok());
  return st;
}

static std::shared_ptr<State> Update(const std::shared_ptr<State>& base, const Batch& b, bool compact,
                                     UpdateSummary* sum, uint64_t memory = 0) {
  RunOptions o;
  o.memory = memory;
  Updater u(base, o);
  std::vector<std::string_view> ext(b.ext.begin(), b.ext.end());
  std::vector<const uint8_t*> ptr;
  std::vector<size_t> len;
  for (size_t i = 0; i < b.ext.size(); i++) {
    ptr.push_back(b.del[i] ? nullptr : reinterpret_cast<const uint8_t*>(b.text[i].data()));
    len.push_back(b.text[i].size());
  }
  size_t bad = 0;
  Status s = u.Add(ext, Docs{ptr.data(), len.data(), ptr.size()}, &bad);
  if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
  EXPECT(s.ok());
  std::shared_ptr<State> pending;
  s = u.Prepare(compact, sum, &pending);
  if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
  EXPECT(s.ok());
  if (!pending) return base;
  EXPECT(CommitPending(base->dir()).ok());
  std::shared_ptr<State> st;
  s = State::Open(base->dir(), kManifestName, true, &st);
  if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
  EXPECT(s.ok());
  return st;
}

static std::string RandomText(std::mt19937& rng, size_t vocab, size_t max_words) {
  static const char* kWords[] = {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa",
                                 "lam", "mu", "nu", "xi", "omi", "pi", "rho", "sig", "tau", "ups"};
  const size_t n = rng() % (max_words + 1);
  std::string t;
  for (size_t i = 0; i < n; i++) t += (i ? " " : "") + std::string(kWords[rng() % vocab]);
  return t;
}

static Corpus RandomCorpus(std::mt19937& rng, size_t docs, size_t vocab, size_t max_words) {
  Corpus c;
  std::vector<std::string> texts;
  for (size_t i = 0; i < docs; i++) {
    std::string t = RandomText(rng, vocab, max_words);
    if (!texts.empty() && rng() % 4 == 0) t += " " + texts[rng() % texts.size()];  // a copied passage
    if (!texts.empty() && rng() % 10 == 0) t = texts[rng() % texts.size()];        // a duplicate
    texts.push_back(t);
    c["\"d" + std::to_string(i) + "\""] = t;
  }
  return c;
}

static void ExpectSame(const Table& got, const Table& want, const char* what) {
  if (got == want) return;
  EXPECT(got == want);
  std::fprintf(stderr, "  %s: tables differ\n", what);
  for (const auto& w : want) {
    auto it = got.find(w.first);
    if (it == got.end()) {
      std::fprintf(stderr, "    %s missing\n", w.first.c_str());
      continue;
    }
    if (it->second == w.second) continue;
    std::fprintf(stderr, "    %s: want", w.first.c_str());
    for (const auto& r : w.second) std::fprintf(stderr, " %s:%u", r.other.c_str(), r.shared);
    std::fprintf(stderr, "\n    %s: got ", w.first.c_str());
    for (const auto& r : it->second) std::fprintf(stderr, " %s:%u", r.other.c_str(), r.shared);
    std::fprintf(stderr, "\n");
    break;
  }
}

static IndexParams SmallParams(uint32_t k, uint32_t bits) {
  IndexParams p;
  p.chunk.text.n = 3;
  p.chunk.bits = bits;
  p.top_k = k;
  return p;
}

// ------------------------------------------------------------------------------------------------- tests

TEST(chunker_matches_a_reference) {
  ChunkOptions o;  // 5 words, nonword split, lower-case, 64 bits (the default)
  EXPECT_EQ(o.bits, 64u);
  o.bits = 32;
  Chunker c(o);
  std::vector<uint64_t> got;
  const std::string t = "The quick, brown fox -- jumps over THE lazy dog.";
  c.Run(reinterpret_cast<const uint8_t*>(t.data()), t.size(), &got);
  const std::vector<std::string> w = {"the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"};
  std::set<uint64_t> want;
  for (size_t i = 0; i + 5 <= w.size(); i++) {
    std::string s = w[i];
    for (size_t j = 1; j < 5; j++) s += " " + w[i + j];
    want.insert(fast64::Hash(s.data(), s.size()) >> 32);
  }
  EXPECT(got == std::vector<uint64_t>(want.begin(), want.end()));
  {
    Chunker c64{ChunkOptions()};
    std::vector<uint64_t> got64;
    c64.Run(reinterpret_cast<const uint8_t*>(t.data()), t.size(), &got64);
    std::set<uint64_t> want64;
    for (size_t i = 0; i + 5 <= w.size(); i++) {
      std::string s = w[i];
      for (size_t j = 1; j < 5; j++) s += " " + w[i + j];
      want64.insert(fast64::Hash(s.data(), s.size()));
    }
    EXPECT((got64 == std::vector<uint64_t>(want64.begin(), want64.end())));
  }
  o.bits = 28;
  Chunker c28(o);
  std::vector<uint64_t> got28;
  c28.Run(reinterpret_cast<const uint8_t*>(t.data()), t.size(), &got28);
  EXPECT_EQ(got28.size(), got.size());
  for (uint64_t x : got28) EXPECT(x < (uint64_t(1) << 28));
  ChunkOptions bad;
  bad.bits = 33;
  EXPECT(!ValidateChunkOptions(bad).ok());
  bad.bits = 27;
  EXPECT(!ValidateChunkOptions(bad).ok());
}

TEST(part_ranges_cover_the_space) {
  for (uint32_t bits : {28u, 32u, 64u}) {
    for (uint32_t parts : {1u, 2u, 3u, 7u, 64u}) {
      uint64_t prev_hi = 0;
      for (uint32_t p = 0; p < parts; p++) {
        uint64_t lo, hi;
        PartRange(bits, parts, p, &lo, &hi);
        EXPECT(p == 0 ? lo == 0 : lo == prev_hi + 1);
        EXPECT(PartOf(bits, parts, lo) == p);
        EXPECT(PartOf(bits, parts, hi) == p);
        prev_hi = hi;
      }
      EXPECT(prev_hi == (bits == 64 ? UINT64_MAX : (uint64_t(1) << bits) - 1));
    }
  }
}

TEST(full_run_equals_brute_force) {
  std::mt19937 rng(7);
  for (int round = 0; round < 6; round++) {
    const Corpus c = RandomCorpus(rng, 30 + rng() % 40, 4 + rng() % 6, 25);
    IndexParams p = SmallParams(round % 2 ? 3 : 100, 64);
    if (round == 4) p.min_shared = 2;
    if (round == 5) p.min_similarity = 0.3;
    const std::string dir = TempDir() + "/ix";
    auto st = Build(dir, c, p);
    if (st) {
      ExpectSame(TableOf(*st), BruteForce(c, p), "full run");
      CheckLists(*st, c, true);
    }
    RmRf(dir.substr(0, dir.size() - 3));
  }
}

TEST(parts_budgets_and_stages_give_the_same_table) {
  std::mt19937 rng(11);
  const Corpus c = RandomCorpus(rng, 80, 5, 30);
  for (uint32_t bits : {32u, 64u}) {
    IndexParams p = SmallParams(4, bits);
    const std::string root = TempDir();
    auto one = Build(root + "/one", c, p);
    const Table want = TableOf(*one);
    if (bits == 64) ExpectSame(want, BruteForce(c, p), "one part vs brute force");
    auto small = Build(root + "/small", c, p, 4096);  // several ranges: pair files summed
    ExpectSame(TableOf(*small), want, "tiny memory");
    p.parts = 3;
    auto three = Build(root + "/three", c, p);
    ExpectSame(TableOf(*three), want, "three parts");
    // Staged: docs, then each part on its own (own pairs file), then the merge.
    {
      Builder b;
      EXPECT(b.Create(root + "/staged", p, RunOptions()).ok());
      EXPECT(AddTo(&b, c).ok());
      EXPECT(b.FinishDocs().ok());
      std::vector<std::string> pairs;
      for (uint32_t part : {2u, 0u, 1u}) {
        pairs.push_back(root + "/pairs-" + std::to_string(part));
        RunOptions o;
        o.memory = part == 1 ? 4096 : 0;
        Status s = StagePart(root + "/staged", part, 3, pairs.back(), o);
        if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
        EXPECT(s.ok());
      }
      EXPECT(!StagePart(root + "/staged", 0, 4, root + "/wrong", RunOptions()).ok());
      std::shared_ptr<State> pending;
      EXPECT(!StageFinish(root + "/staged", {pairs[0], pairs[1]}, RunOptions(), &pending).ok());  // a part missing
      EXPECT(!StageFinish(root + "/staged", {pairs[0], pairs[1], pairs[1]}, RunOptions(), &pending).ok());
      Status s = StageFinish(root + "/staged", pairs, RunOptions(), &pending);
      if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
      EXPECT(s.ok());
      if (pending) ExpectSame(TableOf(*pending), want, "staged");
      // Pairs from another build are refused.
      EXPECT(!StageFinish(root + "/staged", {pairs[0], pairs[1], root + "/nonexistent"}, RunOptions(), &pending).ok());
    }
    RmRf(root);
  }
}

TEST(incremental_equals_full_on_random_edit_sequences) {
  std::mt19937 rng(3);
  for (int round = 0; round < 8; round++) {
    Corpus c = RandomCorpus(rng, 20 + rng() % 30, 4 + rng() % 4, 20);
    IndexParams p = SmallParams(round % 3 == 0 ? 100 : 2 + round % 3, round % 2 ? 64 : 32);
    if (round == 5) p.min_shared = 2;
    if (round == 6) p.parts = 3;
    if (round == 7) p.min_similarity = 0.25;
    const std::string root = TempDir();
    auto st = Build(root + "/inc", c, p);
    int next = 1000;
    for (int step = 0; step < 8 && st; step++) {
      Batch b;
      const size_t changes = 1 + rng() % 6;
      for (size_t i = 0; i < changes; i++) {
        const int kind = rng() % 3;
        if (kind == 0 || c.empty()) {  // add (a new id, sometimes a copy of another text)
          std::string t = RandomText(rng, 6, 20);
          if (!c.empty() && rng() % 2) t = std::next(c.begin(), rng() % c.size())->second + " " + t;
          const std::string id = "\"n" + std::to_string(next++) + "\"";
          b.ext.push_back(id);
          b.text.push_back(t);
          b.del.push_back(false);
          c[id] = t;
        } else {
          auto it = std::next(c.begin(), rng() % c.size());
          const std::string id = it->first;
          b.ext.push_back(id);
          if (kind == 1) {  // modify
            std::string t = RandomText(rng, 6, 20);
            if (rng() % 2) t = it->second + " " + t;
            b.text.push_back(t);
            b.del.push_back(false);
            c[id] = t;
          } else {  // delete
            b.text.push_back("");
            b.del.push_back(true);
            c.erase(id);
          }
        }
      }
      UpdateSummary sum;
      st = Update(st, b, step == 5, &sum, step == 3 ? 4096 : 0);
      if (!st) break;
      const Table got = TableOf(*st);
      const std::string fresh = root + "/full-" + std::to_string(step);
      auto full = Build(fresh, c, p);
      if (full) ExpectSame(got, TableOf(*full), "incremental vs full");
      if (p.chunk.bits == 64) {
        ExpectSame(got, BruteForce(c, p), "incremental vs brute force");
        CheckLists(*st, c);
      }
      RmRf(fresh);
    }
    RmRf(root);
  }
}

TEST(deleted_ids_are_reused_and_segments_merge) {
  std::mt19937 rng(5);
  Corpus c = RandomCorpus(rng, 20, 5, 20);
  IndexParams p = SmallParams(3, 64);
  const std::string root = TempDir();
  auto st = Build(root + "/ix", c, p);
  const int64_t id3 = st->directory().Find("\"d3\""), id7 = st->directory().Find("\"d7\"");
  EXPECT(id3 >= 0 && id7 >= 0);
  Batch del;
  del.ext = {"\"d3\"", "\"d7\""};
  del.text = {"", ""};
  del.del = {true, true};
  c.erase("\"d3\"");
  c.erase("\"d7\"");
  UpdateSummary sum;
  st = Update(st, del, false, &sum);
  EXPECT_EQ(sum.deleted, 2u);
  EXPECT_EQ(sum.removed.size(), size_t(2));
  EXPECT_EQ(st->directory().slots(), size_t(20));
  Batch add;
  add.ext = {"\"x1\"", "\"x2\"", "\"x3\""};
  add.text = {c["\"d1\""], "alpha beta gamma delta", "beta beta beta"};
  add.del = {false, false, false};
  for (size_t i = 0; i < 3; i++) c[add.ext[i]] = add.text[i];
  st = Update(st, add, false, &sum);
  EXPECT_EQ(sum.added, 3u);
  EXPECT_EQ(st->directory().slots(), size_t(21));  // ids 3 and 7 reused, then 20
  EXPECT_EQ(st->directory().Find("\"x1\""), std::min(id3, id7));  // the freed ids, ascending
  EXPECT_EQ(st->directory().Find("\"x2\""), std::max(id3, id7));
  EXPECT_EQ(st->directory().Find("\"x3\""), int64_t(20));
  ExpectSame(TableOf(*st), BruteForce(c, p), "after reuse");
  // Many small updates: segments are merged to at most a handful per part, tombstones dropped.
  for (int i = 0; i < 12; i++) {
    Batch b;
    auto it = std::next(c.begin(), rng() % c.size());
    b.ext = {it->first};
    b.text = {RandomText(rng, 5, 15)};
    b.del = {false};
    c[it->first] = b.text[0];
    st = Update(st, b, false, &sum);
  }
  EXPECT(st->manifest().segments.size() <= 9);
  ExpectSame(TableOf(*st), BruteForce(c, p), "after many updates");
  Batch none;
  st = Update(st, none, true, &sum);
  EXPECT(sum.merged);
  EXPECT_EQ(st->manifest().segments.size(), size_t(1));
  EXPECT(st->manifest().tombstones.empty());
  EXPECT_EQ(st->manifest().doc_files.size(), size_t(1));
  ExpectSame(TableOf(*st), BruteForce(c, p), "after compaction");
  RmRf(root);
}

// A list that loses more entries than its slack (keep - K) cannot be refilled from what is stored: the
// document is recounted. Document "hub" shares 1..30 chunks with 30 others; K = 2 keeps 10 entries.
TEST(lists_that_lose_their_slack_are_recounted) {
  Corpus c;
  std::string hub;
  for (int i = 0; i < 40; i++) hub += "w" + std::to_string(i) + " ";
  c["\"hub\""] = hub;
  for (int j = 1; j <= 30; j++) {
    std::string t;
    for (int i = 0; i < j + 2; i++) t += "w" + std::to_string(i) + " ";  // j chunks of 3 words shared with hub
    c["\"p" + std::to_string(100 + j) + "\""] = t + " x" + std::to_string(j);
  }
  IndexParams p = SmallParams(2, 64);
  const std::string root = TempDir();
  auto st = Build(root + "/ix", c, p);
  EXPECT(!st->directory().entry(uint32_t(st->directory().Find("\"hub\""))).complete());
  Batch b;
  for (int j = 30; j > 21; j--) {  // the nine best partners of hub go
    b.ext.push_back("\"p" + std::to_string(100 + j) + "\"");
    b.text.push_back("");
    b.del.push_back(true);
    c.erase(b.ext.back());
  }
  UpdateSummary sum;
  st = Update(st, b, false, &sum);
  EXPECT(sum.recounted >= 1);
  ExpectSame(TableOf(*st), BruteForce(c, p), "after losing the slack");
  CheckLists(*st, c);
  // New documents that rank above an incomplete list's tail enter it; one below it does not make it.
  Batch add;
  add.ext = {"\"big\"", "\"tiny\""};
  add.text = {hub + " extra words here", "w0 w1 w2"};
  add.del = {false, false};
  for (size_t i = 0; i < 2; i++) c[add.ext[i]] = add.text[i];
  st = Update(st, add, false, &sum);
  ExpectSame(TableOf(*st), BruteForce(c, p), "after additions");
  CheckLists(*st, c);
  RmRf(root);
}

// Lookups (interpolation over the key table) find exactly what the store's binary search finds.
TEST(lookups_agree_with_the_store) {
  std::mt19937 rng(21);
  const Corpus c = RandomCorpus(rng, 200, 12, 40);
  const std::string root = TempDir();
  for (uint32_t bits : {28u, 32u, 64u}) {
    IndexParams p = SmallParams(3, bits);
    auto st = Build(root + "/b" + std::to_string(bits), c, p);
    const auto& seg_ref = st->manifest().segments.at(0);
    const std::string path = root + "/b" + std::to_string(bits) + "/" + SegmentName(0, seg_ref.file);
    std::vector<uint32_t> got, want;
    auto check = [&](auto& seg, uint64_t key) {
      want.clear();
      const int64_t i = seg.Find(static_cast<decltype(seg.entry(0).key)>(key));
      if (i >= 0) EXPECT(seg.Decode(uint64_t(i), &want).ok());
      EXPECT(st->postings().Lookup(key, &got).ok());
      EXPECT(got == want);
    };
    auto run = [&](auto& seg) {
      EXPECT(seg.Open(path, true).ok());
      for (uint64_t i = 0; i < seg.num_keys(); i++) {
        const uint64_t k = seg.entry(i).key;
        check(seg, k);
        check(seg, k + 1);
        if (k > 0) check(seg, k - 1);
      }
      for (int i = 0; i < 2000; i++) check(seg, bits == 64 ? (uint64_t(rng()) << 32 | rng()) : rng() >> (32 - bits));
      check(seg, 0);
    };
    if (bits == 64) {
      postings::Segment64 seg;
      run(seg);
    } else {
      postings::Segment seg;
      run(seg);
    }
  }
  RmRf(root);
}

TEST(update_errors) {
  std::mt19937 rng(9);
  Corpus c = RandomCorpus(rng, 10, 5, 10);
  const std::string root = TempDir();
  auto st = Build(root + "/ix", c, SmallParams(3, 32));
  Updater u(st, RunOptions());
  std::vector<std::string_view> ext = {"\"nope\""};
  const uint8_t* ptr[] = {nullptr};
  size_t len[] = {0};
  size_t bad = 99;
  Status s = u.Add(ext, Docs{ptr, len, 1}, &bad);
  EXPECT(!s.ok() && s.code() == Code::kInvalidInput && bad == 0);
  // Add then delete in one run: nothing happens.
  const std::string t = "alpha beta gamma";
  const uint8_t* p2[] = {reinterpret_cast<const uint8_t*>(t.data()), nullptr};
  size_t l2[] = {t.size(), 0};
  std::vector<std::string_view> e2 = {"\"new\"", "\"new\""};
  EXPECT(u.Add(e2, Docs{p2, l2, 2}, &bad).ok());
  UpdateSummary sum;
  std::shared_ptr<State> pending;
  EXPECT(u.Prepare(false, &sum, &pending).ok());
  EXPECT(!pending);
  // A repeated id in a build.
  Builder b;
  EXPECT(b.Create(root + "/dup", SmallParams(3, 32), RunOptions()).ok());
  std::vector<std::string_view> e3 = {"\"a\"", "\"b\"", "\"a\""};
  const uint8_t* p3[] = {p2[0], p2[0], p2[0]};
  size_t l3[] = {t.size(), t.size(), t.size()};
  s = b.Add(e3, Docs{p3, l3, 3}, &bad);
  EXPECT(!s.ok() && bad == 2);
  // An index is not built over another.
  Builder b2;
  EXPECT(!b2.Create(root + "/ix", SmallParams(3, 32), RunOptions()).ok());
  RmRf(root);
}

static void Flip(const std::string& path, uint64_t at) {
  std::string s;
  io::ReadFile(path, &s);
  if (at < s.size()) s[at] ^= 0x40;
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(s.data(), 1, s.size(), f);
  std::fclose(f);
}

static void Truncate(const std::string& path, uint64_t size) {
  std::string s;
  io::ReadFile(path, &s);
  s.resize(std::min<uint64_t>(size, s.size()));
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(s.data(), 1, s.size(), f);
  std::fclose(f);
}

// Opens the index fully (verify) and reads every chunk list and top list: the first error.
static Status ReadAll(const std::string& dir) {
  std::shared_ptr<State> st;
  Status s = State::Open(dir, kManifestName, true, &st);
  if (!s.ok()) return s;
  std::vector<uint64_t> ch;
  std::vector<TopEntry> top;
  for (uint32_t id = 0; id < st->directory().slots(); id++) {
    if (!st->directory().entry(id).live()) continue;
    if (!(s = st->Chunks(id, &ch)).ok()) return s;
    if (!(s = st->Top(id, &top)).ok()) return s;
  }
  return Status::Ok();
}

TEST(corrupt_and_truncated_files_are_refused) {
  std::mt19937 rng(13);
  const Corpus c = RandomCorpus(rng, 30, 5, 20);
  const std::string root = TempDir();
  auto st = Build(root + "/ix", c, SmallParams(3, 32));
  const std::vector<std::string> files = [&] {
    auto f = st->Files();
    f.push_back(kManifestName);
    return f;
  }();
  st.reset();
  std::string cmd = "cp -r '" + root + "/ix' '" + root + "/orig'";
  EXPECT(std::system(cmd.c_str()) == 0);
  for (const auto& name : files) {
    for (uint64_t at : {uint64_t(3), uint64_t(40), uint64_t(70), uint64_t(200)}) {
      RmRf(root + "/ix");
      cmd = "cp -r '" + root + "/orig' '" + root + "/ix'";
      EXPECT(std::system(cmd.c_str()) == 0);
      std::string size;
      io::ReadFile(root + "/ix/" + name, &size);
      if (at >= size.size()) continue;
      Flip(root + "/ix/" + name, at);
      Status s = ReadAll(root + "/ix");
      EXPECT(!s.ok());
      if (!s.ok() && s.message().find(name) == std::string::npos)
        std::fprintf(stderr, "  %s@%llu: %s\n", name.c_str(), (unsigned long long)at, s.message().c_str());
      EXPECT(s.message().find(name) != std::string::npos);
    }
    RmRf(root + "/ix");
    cmd = "cp -r '" + root + "/orig' '" + root + "/ix'";
    EXPECT(std::system(cmd.c_str()) == 0);
    Truncate(root + "/ix/" + name, 100);
    Status s = ReadAll(root + "/ix");
    EXPECT(!s.ok() && s.message().find(name) != std::string::npos);
  }
  RmRf(root);
}

int main() { return check::RunAll("chunks"); }
