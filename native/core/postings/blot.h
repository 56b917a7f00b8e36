// Blots: hashes of windows of words (dupi's scheme, docs/FORMAT.md section 11), and the pieces of dupi's
// extract order (Go 1.19's sort.Slice on 65,536 counts, and the per-shard merge).
//
// Two profiles. kDupi reproduces go-air/dupi exactly: its Unicode 13 word tables, invalid UTF-8 = no
// tokens, the last code point dropped, word 0 never counted (windows end at word k >= S*I), XOR window.
// kNeardup fixes those: current Unicode word characters (text::IsWord), invalid bytes act as separators,
// every word counts (window j = words j..j+S-1), and by default an order-sensitive window hash (kOrdered)
// so that swapped words differ and repeated words do not cancel.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup {
namespace postings {

enum class BlotProfile { kDupi, kNeardup };
enum class WindowHash { kXor, kOrdered };

struct BlotOptions {
  BlotProfile profile = BlotProfile::kNeardup;
  WindowHash hash = WindowHash::kOrdered;
  uint32_t seq_len = 10;    // words per ring (dupi BlotConfig.SeqLen)
  uint32_t interleave = 1;  // rings (dupi BlotConfig.Interleave); a window spans seq_len * interleave words
  // 32: blots() (FNV-1 32 words; dupi's width, and passage indexes written before 64-bit blots); 64 (neardup
  // profile only): blots64() (FNV-1 64 words, each mixed, then a 64-bit window hash).
  uint32_t bits = 32;
};

struct Token {
  uint32_t begin, end;
  bool word;
};

// FNV-1 32 (not 1a) of bytes.
inline uint32_t Fnv1(const uint8_t* p, size_t n, uint32_t h = 0x811C9DC5u) {
  for (size_t i = 0; i < n; i++) h = (h * 0x01000193u) ^ p[i];
  return h;
}

// FNV-1 64 of bytes.
inline uint64_t Fnv1_64(const uint8_t* p, size_t n, uint64_t h = 0xCBF29CE484222325ull) {
  for (size_t i = 0; i < n; i++) h = (h * 0x100000001B3ull) ^ p[i];
  return h;
}

// dupi's Unicode 13 classes (Go 1.19 tables).
bool DupiIsWord(uint32_t c);
uint32_t DupiLower(uint32_t c);

class Blotter {
 public:
  explicit Blotter(const BlotOptions& o) : o_(o) {}
  // Tokenises and blots one document; results stay valid until the next call.
  void Run(const uint8_t* d, size_t n);
  // The blots alone (tokens(), words() and the text ranges are left empty): what an index build needs.
  void RunBlots(const uint8_t* d, size_t n);
  const std::vector<Token>& tokens() const { return tokens_; }
  // Token index of each word.
  const std::vector<uint32_t>& words() const { return words_; }
  // With bits = 32: the blots; with 64, blots64() (and blots() is empty).
  const std::vector<uint32_t>& blots() const { return blots_; }
  const std::vector<uint64_t>& blots64() const { return blots64_; }
  size_t num_blots() const { return o_.bits == 64 ? blots64_.size() : blots_.size(); }
  // Words [first, last] of blot j's text: dupi: k-S*I .. k (the word before the window, then the window,
  // as dupi's unblot/like print it); neardup: exactly the hashed words.
  uint32_t first_word(size_t j) const;
  uint32_t last_word(size_t j) const;
  // Byte range of blot j's text.
  uint32_t text_begin(size_t j) const { return tokens_[words_[first_word(j)]].begin; }
  uint32_t text_end(size_t j) const { return tokens_[words_[last_word(j)]].end; }
  const BlotOptions& options() const { return o_; }

 private:
  void Tokenise(const uint8_t* d, size_t n, bool spans);
  template <bool kSpans, bool kWide>
  const uint8_t* Hash(const uint8_t* d, const uint8_t* end);
  void Windows64();
  BlotOptions o_;
  std::vector<Token> tokens_;
  std::vector<uint32_t> words_, hashes_, blots_;
  std::vector<uint64_t> hashes64_, blots64_;
  std::vector<uint8_t> lower_;
};

// Go 1.19 sort.Slice(perm, func(i, j) { return counts[perm[i]] > counts[perm[j]] }) with perm = 0..n-1:
// pattern-defeating quicksort, not stable; the tie order is whatever Go's algorithm leaves.
void GoSortByCountDesc(const uint32_t* counts, uint32_t n, std::vector<uint32_t>* perm);

// dupi's index statistics and extract order over its reduced blots: counts[s][v] = documents of in-shard
// value v of shard s (shards x 65536 blots). mean = posts / blots, sd over all blots (zeros included);
// the order merges the shards' Go-sorted values by count (ties: lowest shard), skips counts <= 1 and
// stops at the first count below round(mean + sigma * sd) (half away from zero). Order entries are
// reduced blots v * shards + s.
struct DupiStats {
  uint64_t posts = 0;
  double mean = 0, sigma = 0;
};
void DupiExtractOrder(const std::vector<std::vector<uint32_t>>& counts, double sigma, std::vector<uint32_t>* order,
                      DupiStats* stats);

}  // namespace postings
}  // namespace neardup
