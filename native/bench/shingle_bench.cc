// Throughput of the shingle stream inside the core, the way engines consume it: each document's hashes go
// to a reused buffer (nothing is materialised for the whole batch). Input: a packed corpus file written by
// bench/pack-corpus.ts (u64 count, count+1 u64 offsets, then the bytes).
//   shingle_bench FILE [threads] [repeats] [case-filter]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/file.h"
#include "packed_corpus.h"
#include "parallel/pool.h"
#include "text/shingle.h"

using namespace neardup;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: shingle_bench PACKED_FILE [threads] [repeats]\n");
    return 2;
  }
  PackedCorpus corpus;
  if (!corpus.Open(argv[1])) return 1;
  const size_t threads = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const uint64_t n = corpus.count;
  const uint64_t* off = corpus.offsets;
  const uint8_t* base = corpus.base;
  const double mb = double(off[n]) / 1e6;
  struct Case {
    const char* name;
    TextUnit unit;
    ShingleHash hash;
  } cases[] = {{"char5 fast64", TextUnit::kChar, ShingleHash::kFast64},
               {"char5 murmur3_32", TextUnit::kChar, ShingleHash::kMurmur3_32},
               {"word5 fast64", TextUnit::kWord, ShingleHash::kFast64}};
  std::printf("| shingles | threads | median s | MB/s | M shingles/s |\n|---|---|---|---|---|\n");
  const char* only = argc > 4 ? argv[4] : nullptr;  // run only the cases whose name contains this
  for (const Case& c : cases) {
    if (only != nullptr && std::strstr(c.name, only) == nullptr) continue;
    TextOptions o;
    o.unit = c.unit;
    o.n = 5;
    std::vector<double> times;
    uint64_t total = 0;
    for (int r = 0; r < repeats; r++) {
      std::vector<uint64_t> sums(threads, 0), counts(threads, 0);
      const auto t0 = std::chrono::steady_clock::now();
      parallel::ParallelFor(n, 64, threads, [&](size_t b, size_t e, size_t slot) {
        Shingler s(o);
        HashDedup dd;
        std::vector<uint64_t> buf;
        uint64_t acc = 0, cnt = 0;
        for (size_t i = b; i < e; i++) {
          s.Reset(base + off[i], off[i + 1] - off[i]);
          if (buf.size() < s.size()) buf.resize(s.size());
          const size_t k = WriteShingleHashes<uint64_t>(s, c.hash, 0, false, &dd, buf.data());
          for (size_t j = 0; j < k; j++) acc ^= buf[j];
          cnt += k;
        }
        sums[slot] ^= acc;
        counts[slot] += cnt;
      });
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      total = 0;
      for (uint64_t x : counts) total += x;
    }
    std::sort(times.begin(), times.end());
    const double med = times[times.size() / 2];
    std::printf("| %s | %zu | %.3f | %.0f | %.1f |\n", c.name, threads, med, mb / med, total / med / 1e6);
  }
  return 0;
}
