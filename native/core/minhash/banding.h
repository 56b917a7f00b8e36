// The banding arithmetic of MinHash LSH: for b bands of r rows, two signatures with Jaccard s share a band
// with probability P(s) = 1 - (1 - s^r)^b. For a threshold t:
//   false-positive area FP(b, r) = int_0^t P(s) ds,   false-negative area FN(b, r) = int_t^1 1 - P(s) ds,
// both in closed form: with u = s^r, int_0^t (1 - s^r)^b ds = (1/r) B(t^r; 1/r, b + 1) (incomplete beta),
// evaluated by its continued fraction in O(sqrt(b)) steps (not O(b * r) quadrature points).
#pragma once
#include <cstdint>

#include "util/status.h"

namespace neardup {
namespace lsh {

// Both areas of one (b, r) at threshold t in (0, 1), absolute error ~1e-15.
void BandingAreas(double t, uint32_t b, uint32_t r, double* fp, double* fn);
double FalsePositiveArea(double threshold, uint32_t b, uint32_t r);
double FalseNegativeArea(double threshold, uint32_t b, uint32_t r);

// datasketch's _optimal_param: minimises fp_weight*FP + fn_weight*FN over b = 1..num_perm,
// r = 1..floor(num_perm/b), the first minimum in that order winning. The same answer as the exhaustive
// scan, which visits ~num_perm*ln(num_perm) pairs; this one skips the pairs whose error provably exceeds
// the best so far (FP grows with b and falls with r, FN the reverse), so num_perm = 65536 takes
// milliseconds. num_perm at most 2^20.
Status OptimalParam(double threshold, uint32_t num_perm, double fp_weight, double fn_weight, uint32_t* b,
                    uint32_t* r);

}  // namespace lsh
}  // namespace neardup
