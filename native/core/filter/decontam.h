// Benchmark decontamination: a read-only index of the word n-grams of benchmark rows, probed by corpus
// documents (docs/decontaminate.md).
//
// Normalisation (both sides, the shingle stream's word unit, text/shingle.h): Unicode lower-casing
// (text::Lower, full mappings), \p{P} punctuation deleted (it does not split a word: "don't" -> "dont"),
// tokens split on whitespace (Python's str.split()). No NFKC: compatibility forms (full-width letters,
// ligatures) are not folded. An n-gram is its tokens joined by single spaces (Python's " ".join).
//
// Keys: the 128-bit MurmurHash3_x64_128 of an n-gram's normalised text. Lookups go by a 64-bit fingerprint
// first, Mix64 of a polynomial over the tokens' fast64 hashes (rolled along the document: O(1) a position),
// and the 128-bit key is computed and compared only when the fingerprint is in the table; a match is the
// 128-bit key's. Exact mode keeps the keys in an open-addressing table (by fingerprint), each mapping to the
// benchmark rows that hold it; approx mode keeps the fingerprints in the project's blocked Bloom chain (filter::ApproxSeenSet; built at Seal() with one stage sized for
// every key, so a lookup costs one cache line; Add holds 8 bytes per key until then) and knows no rows.
//
// What is indexed for a benchmark text of k tokens (n = the n-gram length, m = min_tokens <= n):
//   every L-gram for m <= L <= min(n, k)  (L = n: the n-grams; L < n: parts, for short documents)
//   a text with m <= k < n tokens: its whole (an L-gram with L = k) is also marked a "short row".
// What a corpus document of T tokens is probed with:
//   T >= n: its T - n + 1 n-grams (any n-gram of the index matches)
//   m <= T < n: its whole token sequence, one "n-gram" (matches when it occurs in a benchmark text)
//   for every length L of a short row (m <= L < n, L < T or T >= n): its L-grams, which match short rows only
// So a benchmark row shorter than n is found where it occurs whole (GPT-3's shorter length), and a document
// shorter than n where it occurs whole in a benchmark text; texts under m tokens are never matched.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "filter/seen_set.h"
#include "text/docs.h"
#include "text/shingle.h"
#include "util/status.h"

namespace neardup {
namespace filter {

struct DecontamOptions {
  uint32_t n = 13;          // n-gram length in word tokens, 1..kMaxN
  uint32_t min_tokens = 8;  // the shortest text matched whole (1..n; n: n-grams only)
  bool approx = false;      // Bloom chain instead of the exact table
  double fp_rate = 1e-8;    // approx: the false-positive bound of each of its two sets, (0, 0.5]
};

// The word stream both sides go through (unit word, n = 1, whitespace split, lower-case, strip \p{P}).
TextOptions DecontamTextOptions();

// The 128-bit key of a normalised n-gram's bytes ((0, 0) is never returned: it marks an empty slot).
struct Key128 {
  uint64_t lo = 0, hi = 0;
};
Key128 DecontamKey(const char* data, size_t len);

struct ProbeOptions {
  uint32_t max_rows = 16;    // benchmark rows listed per document (exact mode; the total is counted)
  uint32_t max_samples = 3;  // matched n-grams given as text per document
};

// Per corpus document (all vectors have one entry per document; CSR arrays have count + 1 starts).
struct ProbeResult {
  std::vector<uint32_t> tokens;   // tokens after normalisation
  std::vector<uint32_t> ngrams;   // n-gram positions (T - n + 1; 1 for m <= T < n; 0 below m)
  std::vector<uint32_t> matched;  // of those, found in the index
  std::vector<uint32_t> short_found;  // occurrences of short benchmark rows
  std::vector<uint32_t> covered;  // tokens inside any matched span
  std::vector<uint32_t> rows_total;   // distinct benchmark rows matched (exact mode)
  std::vector<uint32_t> row_start, rows;  // the first max_rows of them, ascending
  std::vector<uint32_t> sample_start, sample_off;  // samples of doc i: sample_start[i]..; text bytes sample_off[j]..
  std::string sample_text;
};

class DecontamIndex {
 public:
  static Status Create(const DecontamOptions& o, std::unique_ptr<DecontamIndex>* out);

  // Adds benchmark texts; text i belongs to row rows[i] (a row may have several texts: each is indexed on
  // its own). Tokenising and hashing run on the pool. Fails once sealed.
  Status Add(const Docs& texts, const uint32_t* rows, size_t slots, const std::atomic<bool>* stop);
  // Builds the lookup table; no Add after it, Probe only after it.
  Status Seal();
  // Probes documents (valid[i] == 0: a skipped slot, all counts 0; valid may be null).
  Status Probe(const Docs& docs, const uint8_t* valid, const ProbeOptions& po, size_t slots,
               const std::atomic<bool>* stop, ProbeResult* out) const;

  const DecontamOptions& options() const { return o_; }
  bool sealed() const { return sealed_; }
  uint64_t keys() const;             // distinct keys (approx: insertions)
  uint64_t texts() const { return texts_; }
  uint64_t memory_bytes() const;
  uint64_t short_lengths() const { return short_mask_; }  // bit L: a short row of L tokens exists
  double fp_bound() const;           // approx: the larger bound of its two sets; exact: 0

  // Exact lookup of a key with its fingerprint: the entry (bit 31: a short row) or -1.
  int64_t Find(uint64_t fp, const Key128& k) const;

 private:
  explicit DecontamIndex(const DecontamOptions& o) : o_(o) {}
  struct Rec {
    uint64_t lo, hi, fp;
    uint32_t row;
    uint32_t flags;
  };
  struct Slot {
    uint64_t fp;
    uint32_t entry;  // kNoEntry: empty
  };
  DecontamOptions o_;
  bool sealed_ = false;
  uint64_t texts_ = 0;
  uint64_t short_mask_ = 0;
  std::vector<Rec> recs_;  // exact, until Seal()
  // exact, after Seal(): open addressing (linear probing) on the fingerprints; a slot's entry indexes keys_
  // and the row lists (bit 31: a short row)
  std::vector<Slot> slots_;
  std::vector<Key128> keys_;
  uint64_t mask_ = 0;
  uint64_t entries_ = 0;
  std::vector<uint32_t> row_start_, rows_;
  // approx: every key, and the short rows' keys (the low 64 bits, collected until Seal() builds the chains)
  std::vector<uint64_t> approx_keys_, approx_short_;
  std::unique_ptr<ApproxSeenSet> all_, short_;
};

}  // namespace filter
}  // namespace neardup
