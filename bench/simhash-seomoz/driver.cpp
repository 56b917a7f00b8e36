// The SimHash tables job of bench/simhash-tables.ts, run on seomoz simhash-cpp's Judy tables
// (Simhash::Table, src/simhash.{h,cpp} of its commit a9b21b0, the last one with the Judy table).
// Our driver, built outside the project against that source: bench/simhash-seomoz/build.sh.
//
//   driver M K [N]    -> one JSON line on stdout:
//   {"peer":"seomoz","m":6,"k":3,"n":1000000,"insert":s,"findFirst":s,"findAll":s,"remove":s,
//    "hits":h,"matches":x,"maxRssKb":kb}
//
// The job: N random 64-bit fingerprints (the sfc32 stream of bench/simhash-tables.ts, seed 12345, so both
// sides get the same values), inserted into the C(m, k) tables; N queries, even ones a stored fingerprint
// with 0..3 flipped bits, odd ones fresh random values; find_first (first table with a match wins), find_all
// (every table's matches, de-duplicated), remove of every fingerprint. Times are process CPU seconds
// (CLOCK_PROCESS_CPUTIME_ID) around each phase; maxRssKb is the whole process's peak RSS (getrusage).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "simhash.h"

namespace {

struct Sfc32 {
  uint32_t a, b = 0x9e3779b9u, c = 0x243f6a88u, d = 0xb7e15162u;
  explicit Sfc32(uint32_t seed) : a(seed) {}
  uint32_t operator()() {
    const uint32_t t = a + b + d;
    d = d + 1;
    a = b ^ (b >> 9);
    b = c + (c << 3);
    c = (c << 21) | (c >> 11);
    c = c + t;
    return t;
  }
};

double Cpu() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// Block i of m covers bits [floor(i*64/m), floor((i+1)*64/m)).
uint64_t BlockMask(int i, int m) {
  const int lo = i * 64 / m, hi = (i + 1) * 64 / m;
  const int w = hi - lo;
  return (w == 64 ? ~uint64_t{0} : ((uint64_t{1} << w) - 1)) << lo;
}

// Every (m-k)-subset of the m blocks in lexicographic order: the chosen blocks first, then the others
// (seomoz's Table keys on all but its last k masks).
std::vector<std::vector<Simhash::hash_t>> TableMasks(int m, int k) {
  std::vector<std::vector<Simhash::hash_t>> out;
  const int c = m - k;
  std::vector<int> pick(c);
  for (int i = 0; i < c; i++) pick[i] = i;
  while (true) {
    std::vector<Simhash::hash_t> masks;
    std::vector<bool> chosen(m, false);
    for (int i : pick) {
      masks.push_back(BlockMask(i, m));
      chosen[i] = true;
    }
    for (int i = 0; i < m; i++)
      if (!chosen[i]) masks.push_back(BlockMask(i, m));
    out.push_back(masks);
    int i = c - 1;
    while (i >= 0 && pick[i] == m - c + i) i--;
    if (i < 0) break;
    pick[i]++;
    for (int j = i + 1; j < c; j++) pick[j] = pick[j - 1] + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s M K [N]\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), k = std::atoi(argv[2]);
  const size_t n = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1000000;
  if (m <= k || k < 0 || m > 64 || n == 0) {
    std::fprintf(stderr, "bad M K N\n");
    return 2;
  }
  Sfc32 next(12345);
  std::vector<uint64_t> fps(n), queries(n);
  for (size_t i = 0; i < n; i++) {
    const uint64_t hi = next();
    fps[i] = (hi << 32) | next();
  }
  for (size_t i = 0; i < n; i++) {
    if (i % 2 == 0) {
      uint64_t q = fps[next() % n];
      const uint32_t flips = next() % 4;
      for (uint32_t f = 0; f < flips; f++) q ^= uint64_t{1} << (next() % 64);
      queries[i] = q;
    } else {
      const uint64_t hi = next();
      queries[i] = (hi << 32) | next();
    }
  }

  std::vector<std::unique_ptr<Simhash::Table>> tables;
  for (auto& masks : TableMasks(m, k)) tables.emplace_back(new Simhash::Table(k, masks));

  double t0 = Cpu();
  for (auto& t : tables)
    for (uint64_t f : fps) t->insert(f);
  const double insert = Cpu() - t0;

  t0 = Cpu();
  size_t hits = 0;
  uint64_t sink = 0;
  for (size_t i = 0; i < n; i++) {
    for (auto& t : tables) {
      const Simhash::hash_t r = t->find(queries[i]);
      // seomoz returns 0 for "none"; 0 is also a fingerprint, so a stored 0 would be missed (not in this data)
      if (r != 0) {
        hits++;
        sink += r;
        break;
      }
    }
  }
  const double find_first = Cpu() - t0;

  t0 = Cpu();
  size_t matches = 0;
  std::vector<Simhash::hash_t> found;
  for (size_t i = 0; i < n; i++) {
    found.clear();
    for (auto& t : tables) t->find(queries[i], found);
    std::sort(found.begin(), found.end());
    matches += static_cast<size_t>(std::unique(found.begin(), found.end()) - found.begin());
  }
  const double find_all = Cpu() - t0;

  t0 = Cpu();
  for (auto& t : tables)
    for (uint64_t f : fps) t->remove(f);
  const double remove = Cpu() - t0;

  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "{\"peer\":\"seomoz\",\"m\":%d,\"k\":%d,\"n\":%zu,\"tables\":%zu,\"insert\":%.4f,\"findFirst\":%.4f,"
      "\"findAll\":%.4f,\"remove\":%.4f,\"hits\":%zu,\"matches\":%zu,\"maxRssKb\":%ld,\"sink\":%llu}\n",
      m, k, n, tables.size(), insert, find_first, find_all, remove, hits, matches, ru.ru_maxrss,
      static_cast<unsigned long long>(sink & 1));
  return 0;
}
