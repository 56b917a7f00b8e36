#include "simhash/layout.h"

#include <cmath>
#include <string>

namespace neardup {
namespace simhash {

uint64_t Binomial(uint32_t n, uint32_t k) {
  if (k > n) return 0;
  if (k > n - k) k = n - k;
  unsigned __int128 r = 1;
  for (uint32_t i = 1; i <= k; i++) {
    r = r * (n - k + i) / i;
    if (r > UINT64_MAX) return UINT64_MAX;
  }
  return static_cast<uint64_t>(r);
}

Status ValidateParams(uint32_t m, uint32_t k) {
  if (k > kMaxDistance)
    return Status(Code::kInvalidArgument, "distance must be from 0 to " + std::to_string(kMaxDistance) + ", got " + std::to_string(k));
  if (m < 1 || m > 64) return Status(Code::kInvalidArgument, "blocks must be from 1 to 64, got " + std::to_string(m));
  if (m <= k)
    return Status(Code::kInvalidArgument, "blocks must be greater than distance (got blocks " + std::to_string(m) +
                                              ", distance " + std::to_string(k) + ")");
  const uint64_t t = Binomial(m, k);
  if (t > kMaxTables)
    return Status(Code::kInvalidArgument, "blocks " + std::to_string(m) + " with distance " + std::to_string(k) + " needs " +
                                              std::to_string(t) + " tables; at most " + std::to_string(kMaxTables) + " are allowed");
  return Status::Ok();
}

uint32_t PickBlocks(uint64_t n, uint32_t k) {
  if (k > kMaxDistance) k = kMaxDistance;
  uint32_t best = k + 1;
  double best_cost = INFINITY;
  for (uint32_t m = k + 1; m <= 64; m++) {
    if (!ValidateParams(m, k).ok()) break;  // table counts only grow with m from here
    const double tables = static_cast<double>(Binomial(m, k));
    // The shortest prefix among the tables (blocks differ in width by at most one bit).
    const double p = std::floor(64.0 * (m - k) / m);
    const double cost = tables * (1.0 + static_cast<double>(n) * std::pow(2.0, -p));
    if (cost < best_cost) {
      best_cost = cost;
      best = m;
    }
  }
  return best;
}

Layout::Layout(uint32_t m, uint32_t k) : m_(m), k_(k) {
  std::vector<uint32_t> lo(m + 1);
  for (uint32_t i = 0; i <= m; i++) lo[i] = static_cast<uint32_t>(uint64_t{i} * 64 / m);
  block_masks_.resize(m);
  for (uint32_t i = 0; i < m; i++) {
    const uint32_t w = lo[i + 1] - lo[i];
    block_masks_[i] = (w == 64 ? ~uint64_t{0} : ((uint64_t{1} << w) - 1)) << lo[i];
  }
  const uint32_t c = m - k;
  std::vector<uint32_t> comb(c);
  for (uint32_t i = 0; i < c; i++) comb[i] = i;
  while (true) {
    Table t;
    for (uint32_t b : comb) {
      t.chosen |= uint64_t{1} << b;
      t.prefix_mask |= block_masks_[b];
    }
    t.prefix_bits = static_cast<uint32_t>(__builtin_popcountll(t.prefix_mask));
    std::vector<uint32_t> order(comb.begin(), comb.end());
    for (uint32_t b = 0; b < m; b++)
      if (!((t.chosen >> b) & 1)) order.push_back(b);
    uint32_t top = 64;
    for (uint32_t b : order) {
      const uint32_t w = lo[b + 1] - lo[b];
      const uint64_t mask = block_masks_[b] >> lo[b];
      top -= w;
      // Merge with the previous move when this block sits right below it in both spaces.
      if (!t.moves.empty()) {
        Table::Move& prev = t.moves.back();
        if (prev.src == lo[b] + w && prev.dst == top + w) {
          prev.src = static_cast<uint8_t>(lo[b]);
          prev.dst = static_cast<uint8_t>(top);
          prev.mask = (prev.mask << w) | mask;
          continue;
        }
      }
      t.moves.push_back({static_cast<uint8_t>(lo[b]), static_cast<uint8_t>(top), mask});
    }
    // Moves are in descending destination order: the leading ones reaching into the top prefix_bits bits.
    while (t.prefix_moves < t.moves.size() &&
           t.moves[t.prefix_moves].dst + static_cast<uint32_t>(__builtin_popcountll(t.moves[t.prefix_moves].mask)) >
               64 - t.prefix_bits)
      t.prefix_moves++;
    tables_.push_back(std::move(t));
    // Next combination in lexicographic order.
    int i = static_cast<int>(c) - 1;
    while (i >= 0 && comb[i] == m - c + i) i--;
    if (i < 0) break;
    comb[i]++;
    for (uint32_t j = i + 1; j < c; j++) comb[j] = comb[j - 1] + 1;
  }
}

}  // namespace simhash
}  // namespace neardup
