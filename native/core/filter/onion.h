// Paragraph dedup with Onion 1.2 semantics (docs/paragraphs.md), over documents given as token hashes.
//
// One document at a time, in corpus order:
//   * n-gram hashes roll over the document's tokens (reset at each document, not at paragraphs):
//     g_i for i >= n-1 combines the token hashes t_{i-n+1..i} (NgramHasher below).
//   * an n-gram is "seen" when the global seen-set holds it (state before this document) or, with
//     within_doc, when it occurred earlier in the same document.
//   * a token of paragraph P is "bad" when a seen n-gram ends at or after it, within n-1 tokens, and inside
//     P (an n-gram counts for the paragraph of its last token only: Onion decides a paragraph when it
//     ends, before later n-grams are known).
//   * P is a duplicate iff bad/total > t, with t rounded to float (Onion stores it as a float; this
//     matters for t = 0.7 and 14 bad tokens of 20). Paragraphs without tokens are never duplicates by
//     themselves.
//   * smoothing: a maximal run of non-duplicate paragraphs with <= max_stub tokens in total, bounded by
//     duplicates or by the document's start/end, is marked duplicate too. With keep_unique_short, a run
//     bounded only by the start and the end (a document without any duplicate paragraph) is left alone.
//   * the document is removed as a whole iff some paragraph is a duplicate and every paragraph that has
//     tokens is a duplicate.
//   * the n-grams of kept paragraphs (by their last token) that the seen-set lacks are added to it.
//
// Drop-all (every copy of a repeated paragraph is removed, the first one too) takes two passes over the
// same input:
//   1. kCollect: decisions as above (keep-first); in addition, the seen n-grams of every paragraph that is a
//      duplicate by its own coverage (before smoothing) go to the "repeated" set R.
//   2. kDropAll (StartDropAllPass): an n-gram is seen iff R holds it (neither the seen-set nor repeats
//      within the document count; nothing is added); coverage, threshold, smoothing and whole-document
//      removal as above. Every paragraph that pass 1 found duplicate by coverage is duplicate again (its
//      seen n-grams are in R), and so is a first copy whose n-grams were seen again later.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "filter/seen_set.h"

namespace neardup {
namespace filter {

// kNeardup: fast64 token hashes, a polynomial n-gram hash finished by Mix64 (no structural collisions).
// kOnion: Onion 1.2's own hashes (filter/onion_hash.h), for `neardup onion`, which must reproduce Onion's
// decisions; the global seen-set then holds the n-gram hashes trimmed to their trim_bits low bits, and with
// duplicate n-grams given (AddDuplicateNgrams, Onion's -f) their 63 high bits of those, as Onion does.
enum class NgramHashKind : uint8_t { kNeardup = 0, kOnion = 1 };

struct OnionOptions {
  uint32_t n = 7;
  NgramHashKind hash = NgramHashKind::kNeardup;
  uint32_t trim_bits = 64;  // kOnion only: 1..64 (Onion's -T)
  float threshold = 0.5f;
  bool smoothing = true;
  uint32_t max_stub = 20;
  bool within_doc = true;
  bool keep_unique_short = false;
};

// Token hash: fast64 of the token's bytes (seed 0).
uint64_t TokenHash(const uint8_t* p, size_t len);

// n-gram hash: H_i = sum_{j=0}^{n-1} t_{i-j} * B^j (mod 2^64), B = 0x9e3779b97f4a7c15 (odd), updated in
// O(1) per token (H_i = H_{i-1} * B + t_i - t_{i-n} * B^n); the n-gram hash is Mix64(H_i ^ n).
class NgramHasher {
 public:
  explicit NgramHasher(uint32_t n);
  // out[i - (n-1)] for i = n-1 .. ntok-1 (nothing if ntok < n).
  void Hash(const uint64_t* tok, size_t ntok, std::vector<uint64_t>* out) const;

 private:
  uint32_t n_;
  uint64_t bn_;  // B^n
};

enum class DedupPhase : uint8_t { kKeepFirst = 0, kCollect, kDropAll };

struct OnionStats {
  uint64_t documents = 0, removed_documents = 0;
  uint64_t paragraphs = 0, duplicate_paragraphs = 0;
  uint64_t tokens = 0, removed_tokens = 0;
};

class Deduper {
 public:
  Deduper(const OnionOptions& o, std::unique_ptr<SeenSet> seen, DedupPhase phase = DedupPhase::kKeepFirst);
  // One document: tok[0..ntok) token hashes; par_end[j] = end (exclusive token index) of paragraph j,
  // non-decreasing, par_end[npar-1] == ntok. Writes dup[j] (0/1) and returns whether the whole document
  // is removed.
  bool Document(const uint64_t* tok, size_t ntok, const uint32_t* par_end, size_t npar, uint8_t* dup);

  const OnionOptions& options() const { return o_; }
  // Onion's -f (kOnion only): hashes of the n-grams that occur more than once in the whole input (from
  // `neardup onion hashgen` + `hashdup`). Once any are given, only those n-grams enter the seen-set (and
  // the seen-set keys lose their lowest bit, as Onion's flag bit). Call before the first document.
  void AddDuplicateNgrams(const uint64_t* hashes, size_t n);
  bool has_duplicate_ngrams() const { return dup_ngrams_ != nullptr; }
  uint64_t duplicate_ngrams() const { return dup_ngrams_ ? dup_ngrams_->size() : 0; }
  // The token hash of this deduper's kind.
  uint64_t HashToken(const uint8_t* p, size_t len) const;
  SeenSet& seen() { return *seen_; }
  void ReplaceSeen(std::unique_ptr<SeenSet> s) { seen_ = std::move(s); }
  const OnionStats& stats() const { return stats_; }
  DedupPhase phase() const { return phase_; }
  // kCollect -> kDropAll: statistics restart; feed the same input again. Returns false in other phases.
  bool StartDropAllPass();
  // The repeated n-grams (drop-all), null in kKeepFirst.
  const SeenSet* repeated() const { return repeated_.get(); }

 private:
  // Per-document hash table: key -> (generation, inserted flag). Returns the slot index.
  size_t LocalFind(uint64_t key, bool* existed);
  // The seen-set key of an n-gram hash.
  uint64_t GlobalKey(uint64_t g) const;
  OnionOptions o_;
  uint64_t trim_mask_ = ~0ull;
  std::unique_ptr<SeenSet> dup_ngrams_;
  std::unique_ptr<SeenSet> seen_;
  DedupPhase phase_;
  std::unique_ptr<SeenSet> repeated_;
  NgramHasher hasher_;
  OnionStats stats_;
  // scratch, reused across documents
  std::vector<uint64_t> grams_, gkeys_, to_insert_, rep_keys_;
  std::vector<uint8_t> dup_found_;
  std::vector<uint8_t> rep_found_;
  std::vector<uint8_t> in_global_, seen_at_;
  std::vector<uint64_t> local_keys_;
  std::vector<uint32_t> local_gen_;
  uint32_t gen_ = 0;
  uint64_t local_mask_ = 0;
};

// Splits text into whitespace-separated words (ASCII space, \t \n \v \f \r) and appends their token hashes.
// kind: whose token hash (kOnion: Onion's, of each word's bytes).
void HashWords(const uint8_t* p, size_t len, std::vector<uint64_t>* out,
               NgramHashKind kind = NgramHashKind::kNeardup);

}  // namespace filter
}  // namespace neardup
