// Test and benchmark reference for minhash/banding.h: the FP/FN integrals by composite Gauss-Legendre
// quadrature (exact for these polynomials of degree b*r up to rounding) and datasketch's exhaustive scan
// over every (b, r), as the core computed them before the closed form.
#pragma once
#include <cmath>
#include <cstdint>

namespace banding_reference {
inline double GaussLegendreArea(double lo, double hi, uint32_t b, uint32_t r, bool one_minus) {
  static double x[32], w[32];
  static bool init = false;
  if (!init) {
    for (int i = 0; i < 32; i++) {
      double z = std::cos(M_PI * (i + 0.75) / 32.5), dp = 0;
      for (int it = 0; it < 100; it++) {
        double p0 = 1, p1 = z;
        for (int k = 2; k <= 32; k++) {
          const double p2 = ((2.0 * k - 1) * z * p1 - (k - 1.0) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = 32 * (z * p1 - p0) / (z * z - 1);
        const double dz = p1 / dp;
        z -= dz;
        if (std::fabs(dz) < 1e-16) break;
      }
      x[i] = z;
      w[i] = 2 / ((1 - z * z) * dp * dp);
    }
    init = true;
  }
  const int panels = int(uint64_t(b) * r / 64) + 2;
  const double h = (hi - lo) / panels;
  double total = 0;
  for (int p = 0; p < panels; p++) {
    const double mid = lo + p * h + h / 2;
    for (int i = 0; i < 32; i++) {
      const double q = std::pow(1 - std::pow(mid + h / 2 * x[i], double(r)), double(b));
      total += w[i] * (one_minus ? 1 - q : q) * h / 2;
    }
  }
  return total;
}

inline void ExhaustiveOptimal(double t, uint32_t n, double wfp, double wfn, uint32_t* b, uint32_t* r) {
  double best = INFINITY;
  for (uint32_t bb = 1; bb <= n; bb++)
    for (uint32_t rr = 1; rr <= n / bb; rr++) {
      const double e = wfp * GaussLegendreArea(0, t, bb, rr, true) + wfn * GaussLegendreArea(t, 1, bb, rr, false);
      if (e < best) best = e, *b = bb, *r = rr;
    }
}
}  // namespace banding_reference
