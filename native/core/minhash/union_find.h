// Union-find over dense indices 0..n-1 whose root is always the smallest index of its set, so the
// representative of a cluster is its first occurrence whatever order the unions come in.
#pragma once
#include <cstdint>
#include <vector>

namespace neardup {

class UnionFind {
 public:
  explicit UnionFind(size_t n = 0) { Reset(n); }
  void Reset(size_t n) {
    parent_.resize(n);
    for (size_t i = 0; i < n; i++) parent_[i] = static_cast<uint32_t>(i);
  }
  size_t size() const { return parent_.size(); }
  uint32_t Find(uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];  // path halving
      x = parent_[x];
    }
    return x;
  }
  // Returns true when a and b were in different sets.
  bool Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return false;
    if (a < b) parent_[b] = a; else parent_[a] = b;
    return true;
  }
  // roots[i] = smallest index of i's set.
  void Roots(std::vector<uint32_t>* roots) {
    roots->resize(parent_.size());
    for (size_t i = 0; i < parent_.size(); i++) (*roots)[i] = Find(static_cast<uint32_t>(i));
  }

 private:
  std::vector<uint32_t> parent_;
};

}  // namespace neardup
