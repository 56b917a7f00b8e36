// Single-thread throughput of the MinHash signers inside the core, with a breakdown of the datasketch
// profile (shingling, SHA-1 of every shingle, permutations). Prints a checksum of all signatures so that a
// kernel change can be checked for bit-identical output. Input: a packed corpus (bench/pack-corpus.ts).
//   minhash_bench FILE [repeats] [docs] [case-filter]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "hash/fast64.h"
#include "io/file.h"
#include "packed_corpus.h"
#include "minhash/sha1_shingle.h"
#include "minhash/signature.h"

using namespace neardup;
using namespace neardup::minhash;

namespace {

double Now() {
  timespec ts;  // thread CPU time: robust on a shared machine
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: minhash_bench PACKED_FILE [repeats] [docs] [case-filter]\n");
    return 2;
  }
  PackedCorpus corpus;
  if (!corpus.Open(argv[1])) return 1;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  uint64_t n = corpus.count;
  if (argc > 3 && std::atoll(argv[3]) > 0) n = std::min<uint64_t>(n, std::strtoull(argv[3], nullptr, 10));
  const char* only = argc > 4 ? argv[4] : nullptr;
  const uint64_t* off = corpus.offsets;
  const uint8_t* base = corpus.base;
  const double mb = double(off[n]) / 1e6;

  struct Case {
    const char* name;
    Profile profile;
    TextUnit unit;
    bool lowercase;
  } cases[] = {{"datasketch word5", Profile::kDatasketch, TextUnit::kWord, false},
               {"datasketch char5", Profile::kDatasketch, TextUnit::kChar, false},
               {"fast char5", Profile::kFast, TextUnit::kChar, false},
               {"fast char5 lower-cased (dedup's default)", Profile::kFast, TextUnit::kChar, true},
               {"doubri char5", Profile::kDoubriV1, TextUnit::kChar, false}};
  std::printf("%llu docs, %.2f MB\n", static_cast<unsigned long long>(n), mb);
  std::printf("| case | median s | docs/s | MB/s | checksum |\n|---|---:|---:|---:|---|\n");
  for (const Case& c : cases) {
    if (only != nullptr && std::strstr(c.name, only) == nullptr) continue;
    Config cfg = DefaultConfig(c.profile);
    cfg.text.unit = c.unit;
    cfg.text.lowercase = c.lowercase;
    std::shared_ptr<const Plan> plan;
    if (!Plan::Create(cfg, &plan).ok()) return 1;
    Signer s(plan);
    std::vector<uint32_t> sig(plan->k()), all(n * plan->k());
    std::vector<double> times;
    uint64_t check = 0;
    for (int r = 0; r < repeats; r++) {
      // Only the signing is timed; the checksum is taken after.
      const double t0 = Now();
      for (size_t i = 0; i < n; i++) s.Sign(base + off[i], off[i + 1] - off[i], all.data() + i * plan->k());
      times.push_back(Now() - t0);
      check = 0;
      for (uint32_t v : all) check = fast64::Mix64(check ^ v);
    }
    const double med = Median(times);
    std::printf("| %s | %.3f | %.0f | %.1f | %016llx |\n", c.name, med, n / med, mb / med,
                static_cast<unsigned long long>(check));

    if (c.profile != Profile::kDatasketch || c.unit != TextUnit::kWord) continue;
    // Breakdown: shingling alone; SHA-1 over every shingle (no dedup); permutations over those hashes.
    Shingler sh(cfg.text);
    std::vector<std::string_view> views;
    std::vector<uint32_t> h;
    std::vector<double> t_sh, t_sha, t_perm;
    size_t shingles = 0, bytes = 0, distinct = 0, long_ = 0;
    for (int r = 0; r < repeats; r++) {
      double a = 0, b = 0, p = 0;
      shingles = bytes = 0;
      for (size_t i = 0; i < n; i++) {
        const double t0 = Now();
        sh.Reset(base + off[i], off[i + 1] - off[i]);
        const double t1 = Now();
        views.resize(sh.size());
        for (size_t j = 0; j < sh.size(); j++) views[j] = sh[j], bytes += views[j].size();
        h.resize(views.size());
        Sha1Le32Many(views.data(), views.size(), h.data());
        const double t2 = Now();
        DatasketchMin(h.data(), h.size(), plan->a(), plan->b(), plan->k(), sig.data());
        const double t3 = Now();
        a += t1 - t0, b += t2 - t1, p += t3 - t2;
        shingles += sh.size();
        if (r == 0) {
          std::sort(h.begin(), h.end());
          distinct += std::unique(h.begin(), h.end()) - h.begin();
          size_t hist_i = 0;
          for (const auto& v : views) hist_i += v.size() > 55;
          long_ += hist_i;
        }
      }
      t_sh.push_back(a), t_sha.push_back(b), t_perm.push_back(p);
    }
    std::printf("  breakdown (all shingle occurrences: %zu, mean %.1f bytes): shingling %.3f s, SHA-1 %.3f s "
                "(%.1f ns each), permutations %.3f s (%.1f ns each)\n",
                shingles, double(bytes) / shingles, Median(t_sh), Median(t_sha), Median(t_sha) / shingles * 1e9,
                Median(t_perm), Median(t_perm) / shingles * 1e9);
    std::printf("  distinct hashes per document, summed: %zu; shingles over 55 bytes: %zu\n", distinct, long_);
  }
  return 0;
}
