// Blocks and tables of the k-bit Hamming search (Manku, Jain, Das Sarma 2007), defined exactly as seomoz
// simhash does (see test/fixtures/vectors/README.md):
//   - block i of m covers bits [floor(i*64/m), floor((i+1)*64/m)) (block 0 = the low bits);
//   - one table per combination of m-k blocks, in lexicographic order; a table's permutation puts its
//     chosen blocks (ascending) in the high bits, most significant first, then the other blocks in
//     ascending order.
// Two fingerprints within k bits differ in at most k blocks, so they agree on every chosen block of at
// least one table: that table's "prefix" (its leading p bits) is equal.
//
// Each matching pair is found by every table whose chosen blocks it agrees on; the *canonical* table of a
// pair is the one whose chosen blocks are the first m-k blocks the two agree on (lexicographically the
// smallest), and only that one reports it: results are de-duplicated without a set.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/status.h"

namespace neardup {
namespace simhash {

constexpr uint32_t kMaxDistance = 8;
constexpr uint32_t kMaxTables = 4096;

// m > k, 1 <= m <= 64, k <= 8, C(m, k) <= kMaxTables.
Status ValidateParams(uint32_t blocks, uint32_t distance);
uint64_t Binomial(uint32_t n, uint32_t k);  // saturates at UINT64_MAX

// The number of blocks that minimises the expected work of a query (tables x (1 + candidates per table))
// for n fingerprints and distance k, among valid choices.
uint32_t PickBlocks(uint64_t n, uint32_t distance);

struct Table {
  uint64_t chosen = 0;       // bit b set: block b is chosen
  uint64_t prefix_mask = 0;  // the bits of the chosen blocks, in fingerprint space
  uint32_t prefix_bits = 0;  // p
  // The permutation as runs: out |= ((x >> src) & mask) << dst.
  struct Move {
    uint8_t src, dst;
    uint64_t mask;
  };
  std::vector<Move> moves;
  uint32_t prefix_moves = 0;  // the leading moves that fill the top prefix_bits bits

  uint64_t Permute(uint64_t x) const {
    uint64_t out = 0;
    for (const Move& mv : moves) out |= ((x >> mv.src) & mv.mask) << mv.dst;
    return out;
  }
  // Permute's top prefix_bits bits (the bits below them are unspecified): all a lookup needs.
  uint64_t PermutePrefix(uint64_t x) const {
    uint64_t out = 0;
    for (uint32_t i = 0; i < prefix_moves; i++) out |= ((x >> moves[i].src) & moves[i].mask) << moves[i].dst;
    return out;
  }
};

class Layout {
 public:
  Layout(uint32_t blocks, uint32_t distance);  // params must be valid
  uint32_t blocks() const { return m_; }
  uint32_t distance() const { return k_; }
  size_t tables() const { return tables_.size(); }
  const Table& table(size_t t) const { return tables_[t]; }
  uint64_t block_mask(uint32_t b) const { return block_masks_[b]; }

  // Mask of the blocks on which two fingerprints with x ^ y == diff agree.
  uint64_t EqualBlocks(uint64_t diff) const {
    uint64_t eq = 0;
    for (uint32_t b = 0; b < m_; b++)
      if ((diff & block_masks_[b]) == 0) eq |= uint64_t{1} << b;
    return eq;
  }
  // True when table t is the canonical table of a pair with x ^ y == diff (popcount(diff) <= k, and the
  // pair agrees on table t's chosen blocks).
  bool IsCanonical(size_t t, uint64_t diff) const {
    uint64_t eq = EqualBlocks(diff), first = 0;
    for (uint32_t i = 0; i < m_ - k_ && eq != 0; i++) {
      const uint64_t low = eq & (~eq + 1);
      first |= low;
      eq ^= low;
    }
    return first == tables_[t].chosen;
  }

 private:
  uint32_t m_, k_;
  std::vector<uint64_t> block_masks_;
  std::vector<Table> tables_;
};

}  // namespace simhash
}  // namespace neardup
