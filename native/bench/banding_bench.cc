// (b, r) choice: the exhaustive quadrature scan (A, the former implementation) against the closed-form
// pruned scan (B, minhash/banding.h), alternating A and B in one run, medians of 5; then B alone up to
// numPerm 65536. Usage: banding_bench   (pin it: taskset -c 0 build-core/rel/banding_bench)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../tests/banding_reference.h"
#include "minhash/banding.h"

using namespace neardup;

template <typename F>
static double Ms(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  std::printf("numPerm threshold   A exhaustive ms   B closed form ms   A/B   same (b, r)\n");
  for (uint32_t n : {128u, 256u, 512u}) {
    for (double t : {0.5, 0.8, 0.95}) {
      std::vector<double> a, b;
      uint32_t ab = 0, ar = 0, bb = 0, br = 0;
      for (int rep = 0; rep < 5; rep++) {
        a.push_back(Ms([&] { banding_reference::ExhaustiveOptimal(t, n, 0.5, 0.5, &ab, &ar); }));
        b.push_back(Ms([&] { lsh::OptimalParam(t, n, 0.5, 0.5, &bb, &br); }));
      }
      std::printf("%7u %9.2f %17.2f %18.4f %6.0f   %s\n", n, t, Median(a), Median(b), Median(a) / Median(b),
                  ab == bb && ar == br ? "yes" : "NO");
    }
  }
  std::printf("\nB alone:\nnumPerm threshold   ms      (b, r)\n");
  for (uint32_t n : {1024u, 4096u, 16384u, 65536u}) {
    for (double t : {0.5, 0.8, 0.95}) {
      std::vector<double> b;
      uint32_t bb = 0, br = 0;
      for (int rep = 0; rep < 5; rep++) b.push_back(Ms([&] { lsh::OptimalParam(t, n, 0.5, 0.5, &bb, &br); }));
      std::printf("%7u %9.2f %7.2f   (%u, %u)\n", n, t, Median(b), bb, br);
    }
  }
  return 0;
}
