#include "code/winnow.h"

#include "hash/fast64.h"

namespace neardup {
namespace code {
namespace {
constexpr uint64_t kBase = 0x100000001b3ull * 2 + 1;  // odd
}  // namespace

void KgramHashes(const uint32_t* values, size_t n, uint32_t k, std::vector<uint64_t>* out) {
  if (k == 0 || n < k) return;
  uint64_t top = 1;  // kBase^(k-1)
  for (uint32_t i = 1; i < k; i++) top *= kBase;
  uint64_t h = 0;
  for (uint32_t i = 0; i < k; i++) h = h * kBase + (uint64_t(values[i]) + 1);
  out->reserve(out->size() + n - k + 1);
  out->push_back(fast64::Mix64(h));
  for (size_t p = k; p < n; p++) {
    h = (h - (uint64_t(values[p - k]) + 1) * top) * kBase + (uint64_t(values[p]) + 1);
    out->push_back(fast64::Mix64(h));
  }
}

void Winnow(const uint64_t* hashes, size_t m, uint32_t w, std::vector<Fingerprint>* out) {
  if (m == 0 || w == 0) return;
  if (m < w) w = uint32_t(m);
  // A monotone deque of positions whose hashes increase strictly from front to back: popping every back entry
  // whose hash is >= the new one keeps, among equal minima, the rightmost.
  std::vector<uint32_t> dq(m);
  size_t head = 0, tail = 0;
  size_t last = SIZE_MAX;
  for (size_t p = 0; p < m; p++) {
    while (tail > head && hashes[dq[tail - 1]] >= hashes[p]) tail--;
    dq[tail++] = uint32_t(p);
    if (p + 1 < w) continue;
    const size_t q = p + 1 - w;  // the window [q, p]
    while (dq[head] < q) head++;
    const size_t sel = dq[head];
    if (sel != last) {
      out->push_back(Fingerprint{hashes[sel], uint32_t(sel)});
      last = sel;
    }
  }
}

}  // namespace code
}  // namespace neardup
