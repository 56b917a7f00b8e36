// Timing shared by the core benchmarks: CPU time of the process, and the median rate of repeated runs.
#pragma once
#include <algorithm>
#include <ctime>
#include <vector>

inline double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

// MB of input per CPU-second of fn(), the median of `repeats` runs after one warm-up run (scratch grown,
// pages mapped).
template <typename Fn>
double MedianMbPerCpuSecond(double mb, int repeats, Fn&& fn) {
  fn();
  std::vector<double> rates;
  for (int r = 0; r < repeats; r++) {
    const double t0 = CpuSeconds();
    fn();
    rates.push_back(mb / (CpuSeconds() - t0));
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}
