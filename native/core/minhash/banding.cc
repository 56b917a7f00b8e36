#include "minhash/banding.h"

#include <cmath>
#include <string>

namespace neardup {
namespace lsh {
namespace {

// The continued fraction of the incomplete beta function (modified Lentz): B(x; a, b) =
// x^a (1-x)^b / a * BetaCf(a, b, x), converging fast for x < (a + 1) / (a + b + 2).
double BetaCf(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-16;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 100000; m++) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

// int_0^1 (1 - s^r)^b ds = B(a, b + 1) / r with a = 1/r, which is prod_{k=1..b} k / (k + a).
double FullArea(uint32_t b, double a) {
  if (b <= 64) {
    double log_sum = 0;
    for (uint32_t k = 1; k <= b; k++) log_sum += std::log1p(a / k);
    return std::exp(-log_sum);
  }
  // ln Gamma(z + a) - ln Gamma(z) for z = b + 1 >= 66 from Stirling's series (next term < 1e-16), written
  // so that no two large logarithms cancel; then prod = Gamma(1 + a) Gamma(z) / Gamma(z + a).
  const double z = double(b) + 1;
  auto s = [](double w) { return 1 / (12 * w) - 1 / (360 * w * w * w) + 1 / (1260 * w * w * w * w * w); };
  const double diff = (z - 0.5) * std::log1p(a / z) + a * std::log(z + a) - a + (s(z + a) - s(z));
  return std::exp(std::lgamma(1 + a) - diff);
}

}  // namespace

void BandingAreas(double t, uint32_t b, uint32_t r, double* fp, double* fn) {
  // G = int_0^t (1 - s^r)^b ds = (1/r) int_0^x u^(a-1) (1-u)^b du with x = t^r, a = 1/r; x^a = t exactly.
  const double a = 1.0 / r, x = std::pow(t, double(r)), bb = double(b) + 1;
  const double front = std::exp(bb * std::log1p(-x));  // (1-x)^(b+1)
  double g, h;  // g: int_0^t (1-s^r)^b ds, h: int_t^1 (1-s^r)^b ds
  if (double(b) * x < 0.25) {
    // FP is tiny here (P(t) < 0.25) and t - g would lose it to rounding: sum its alternating series
    // FP = t * sum_k>=1 (-1)^(k+1) C(b, k) x^k / (r k + 1) instead; the terms shrink by b*x < 1/4.
    double term = double(b) * x, sum = 0;
    for (uint32_t k = 1; k <= b && term > 1e-18 * std::fabs(sum); k++) {
      sum += (k % 2 ? term : -term) / (double(r) * k + 1);
      term *= double(b - k) / (k + 1) * x;
    }
    *fp = t * sum;
    *fn = FullArea(b, a) - (t - *fp);
    return;
  }
  if (x < (a + 1) / (a + bb + 2)) {
    g = t * front * BetaCf(a, bb, x);  // x^a (1-x)^bb / a * cf / r, with x^a / (a r) = t
    h = FullArea(b, a) - g;
  } else {
    h = t * front / (r * bb) * BetaCf(bb, a, 1 - x);  // (1/r) B(1-x; b+1, a)
    g = FullArea(b, a) - h;
  }
  *fp = t - g;
  *fn = h;
}

double FalsePositiveArea(double t, uint32_t b, uint32_t r) {
  double fp, fn;
  BandingAreas(t, b, r, &fp, &fn);
  return fp;
}

double FalseNegativeArea(double t, uint32_t b, uint32_t r) {
  double fp, fn;
  BandingAreas(t, b, r, &fp, &fn);
  return fn;
}

Status OptimalParam(double threshold, uint32_t num_perm, double fp_weight, double fn_weight, uint32_t* b,
                    uint32_t* r) {
  if (!(threshold > 0 && threshold < 1)) return Status(Code::kInvalidArgument, "threshold must be in (0, 1)");
  if (num_perm == 0 || num_perm > (1u << 20))
    return Status(Code::kInvalidArgument, "num_perm must be from 1 to " + std::to_string(1u << 20));
  if (!(fp_weight >= 0 && fn_weight >= 0) || std::fabs(fp_weight + fn_weight - 1.0) > 1e-9)
    return Status(Code::kInvalidArgument, "the weights must be non-negative and sum to 1");
  // A pair is skipped only when a lower bound of its error exceeds the best error so far by more than the
  // evaluation error (1e-13 here; datasketch's own quadrature tolerance is 1.49e-8), so the first minimum
  // of the exhaustive scan is never skipped:
  //  - FP(b, r) grows with b: the smallest useful r for b (r_lo) never decreases as b grows, and once
  //    r_lo > num_perm / b no larger b has a useful r;
  //  - FN(b, r) grows with r: for a given b, once fn_weight * FN exceeds the best, larger r are no better.
  const double kSlack = 1e-13;
  double best = INFINITY;
  *b = 1;
  *r = num_perm;
  uint32_t r_lo = 1;
  for (uint32_t bb = 1; bb <= num_perm; bb++) {
    const uint32_t max_r = num_perm / bb;
    if (r_lo > max_r) break;
    for (uint32_t rr = r_lo; rr <= max_r; rr++) {
      double fp, fn;
      BandingAreas(threshold, bb, rr, &fp, &fn);
      if (fp_weight * fp > best + kSlack) {
        if (rr == r_lo) r_lo++;
        continue;
      }
      if (fn_weight * fn > best + kSlack) break;
      const double err = fp_weight * fp + fn_weight * fn;
      if (err < best) {
        best = err;
        *b = bb;
        *r = rr;
      }
    }
  }
  return Status::Ok();
}

}  // namespace lsh
}  // namespace neardup
