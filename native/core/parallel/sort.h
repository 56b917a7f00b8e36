// Sorting a vector on the pool: parts sorted in parallel, then merged pairwise (the last merge is one linear
// pass on the calling thread and at most one other). The same order as std::sort; a stop between parts leaves
// the vector permuted but unsorted (the caller then reports the cancellation).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <vector>

#include "parallel/pool.h"

namespace neardup {
namespace parallel {

// `min_part`: the smallest part worth a task of its own (tests lower it).
template <typename T>
void SortOnPool(std::vector<T>* v, size_t slots, const std::atomic<bool>* stop = nullptr, size_t min_part = 65536) {
  const size_t n = v->size();
  const size_t parts = std::min<size_t>(std::max<size_t>(slots, 1), n / std::max<size_t>(min_part, 1) + 1);
  if (parts <= 1) {
    std::sort(v->begin(), v->end());
    return;
  }
  std::vector<size_t> cut(parts + 1);
  for (size_t i = 0; i <= parts; i++) cut[i] = n * i / parts;
  ParallelFor(parts, 1, slots, [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; i++) std::sort(v->begin() + cut[i], v->begin() + cut[i + 1]);
  }, stop);
  for (size_t w = 1; w < parts; w *= 2) {
    std::vector<size_t> left;
    for (size_t i = 0; i + w < parts; i += 2 * w) left.push_back(i);
    ParallelFor(left.size(), 1, slots, [&](size_t b, size_t e, size_t) {
      for (size_t k = b; k < e; k++) {
        const size_t i = left[k];
        std::inplace_merge(v->begin() + cut[i], v->begin() + cut[i + w], v->begin() + cut[std::min(i + 2 * w, parts)]);
      }
    }, stop);
  }
}

}  // namespace parallel
}  // namespace neardup
