// Driver for the SimHash table rows of bench/peers.ts: seomoz simhash-cpp's Judy table (Simhash::Table, the
// library as it was before it dropped libJudy, commit a9b21b0) doing the same job as neardup's SimhashIndex
// in bench/peers/simhash-table.cjs. Our code: it only calls the library's public API.
//
//   seomoz-table BLOCKS DISTANCE FINGERPRINTS QUERIES
//
// FINGERPRINTS and QUERIES are files of u64 little-endian values. One table per combination of
// BLOCKS - DISTANCE leading blocks (block i of m covers bits [i*64/m, (i+1)*64/m)), each Table given the
// chosen blocks first and the others after, in ascending order. Then, timed one after the other with the
// process's CPU clock: insert every fingerprint into every table; find_first for every query (the tables in
// order, the first hit wins); find_all for every query (the hits of all tables, deduplicated per query);
// remove every fingerprint from every table. Prints one JSON line: the four CPU times in seconds, the
// number of queries with a hit, the number of (query, match) pairs and an order-free checksum of them.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <memory>
#include <vector>

#include "simhash.h"

namespace {

std::vector<uint64_t> ReadU64(const char* path) {
  std::vector<uint64_t> v;
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) {
    std::perror(path);
    std::exit(1);
  }
  uint64_t buf[4096];
  size_t n;
  while ((n = std::fread(buf, sizeof(uint64_t), 4096, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  return v;
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

uint64_t BlockMask(int i, int m) {
  int lo = i * 64 / m, hi = (i + 1) * 64 / m;
  uint64_t width_mask = hi - lo == 64 ? ~0ULL : ((1ULL << (hi - lo)) - 1);
  return width_mask << lo;
}

// Every combination of `keep` blocks out of m, lexicographic, as the permutation masks a Table takes.
std::vector<std::vector<Simhash::hash_t>> Permutations(int m, int keep) {
  std::vector<std::vector<Simhash::hash_t>> out;
  std::vector<int> pick(keep);
  for (int i = 0; i < keep; i++) pick[i] = i;
  while (true) {
    std::vector<Simhash::hash_t> masks;
    std::vector<bool> used(m, false);
    for (int b : pick) {
      masks.push_back(BlockMask(b, m));
      used[b] = true;
    }
    for (int b = 0; b < m; b++)
      if (!used[b]) masks.push_back(BlockMask(b, m));
    out.push_back(masks);
    int i = keep - 1;
    while (i >= 0 && pick[i] == m - keep + i) i--;
    if (i < 0) break;
    pick[i]++;
    for (int j = i + 1; j < keep; j++) pick[j] = pick[j - 1] + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s BLOCKS DISTANCE FINGERPRINTS QUERIES\n", argv[0]);
    return 2;
  }
  int m = std::atoi(argv[1]), k = std::atoi(argv[2]);
  if (k < 0 || k >= m || m > 64) {
    std::fprintf(stderr, "need 0 <= DISTANCE < BLOCKS <= 64\n");
    return 2;
  }
  std::vector<uint64_t> fps = ReadU64(argv[3]);
  std::vector<uint64_t> queries = ReadU64(argv[4]);
  std::vector<std::vector<Simhash::hash_t>> perms = Permutations(m, m - k);
  std::vector<std::unique_ptr<Simhash::Table>> tables;
  for (auto& p : perms) tables.emplace_back(new Simhash::Table(k, p));

  double t0 = CpuSeconds();
  for (auto& t : tables)
    for (uint64_t f : fps) t->insert(f);
  double t1 = CpuSeconds();
  uint64_t hits = 0;
  for (uint64_t q : queries) {
    for (auto& t : tables) {
      if (t->find(q) != 0) {
        hits++;
        break;
      }
    }
  }
  double t2 = CpuSeconds();
  uint64_t matches = 0, checksum = 0;
  std::vector<Simhash::hash_t> found;
  for (size_t qi = 0; qi < queries.size(); qi++) {
    found.clear();
    for (auto& t : tables) t->find(queries[qi], found);
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    matches += found.size();
    for (Simhash::hash_t f : found) checksum += f * (2 * qi + 1);
  }
  double t3 = CpuSeconds();
  for (auto& t : tables)
    for (uint64_t f : fps) t->remove(f);
  double t4 = CpuSeconds();
  std::printf(
      "{\"tables\": %zu, \"insert\": %.4f, \"find_first\": %.4f, \"find_all\": %.4f, \"remove\": %.4f, "
      "\"hits\": %llu, \"matches\": %llu, \"checksum\": \"%llu\"}\n",
      tables.size(), t1 - t0, t2 - t1, t3 - t2, t4 - t3, static_cast<unsigned long long>(hits),
      static_cast<unsigned long long>(matches), static_cast<unsigned long long>(checksum));
  return 0;
}
