// The dedup engine alone (lsh::Dedup: signing, band keys, buckets, candidate pairs, verification,
// clustering) on a packed corpus (bench/pack-corpus.ts), in batches of ~4 MiB as the API feeds it. Prints wall
// and process CPU seconds of Add (all batches) and Finish, and the counts that drive the cost.
//   dedup_bench FILE [threads] [setting] [memory-bytes]
// setting: defaults (verified: lower-cased char 5-grams, 16 x 6, exact) | fast (9 x 13, no verification) |
//          old (case kept, 9 x 13, no verification, components)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "minhash/lsh_dedup.h"
#include "packed_corpus.h"
#include "parallel/pool.h"

using namespace neardup;

namespace {

double Cpu() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double Wall() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dedup_bench PACKED_FILE [threads] [defaults|fast|old] [memory-bytes]\n");
    return 2;
  }
  PackedCorpus corpus;
  if (!corpus.Open(argv[1])) return 1;
  const size_t threads = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1;
  const std::string setting = argc > 3 ? argv[3] : "defaults";
  parallel::SetConcurrency(threads);

  lsh::DedupOptions o;
  o.params.profile = lsh::Profile::kFast;
  o.params.value_bytes = 4;
  o.params.num_perm = 128;
  o.minhash = minhash::DefaultConfig(minhash::Profile::kFast);
  o.minhash.text.lowercase = setting != "old";
  if (setting == "defaults") {
    o.params.b = 16, o.params.r = 6;
    o.verify = lsh::Verify::kExact;
  } else if (setting == "fast" || setting == "old") {
    o.params.b = 9, o.params.r = 13;
    o.clustering = setting == "old" ? lsh::Clustering::kComponents : lsh::Clustering::kKept;
  } else {
    std::fprintf(stderr, "unknown setting '%s'\n", setting.c_str());
    return 2;
  }
  o.memory_bytes = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0;
  o.tmp_dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";

  lsh::Dedup d(o);
  Status s = d.Init();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  const uint64_t n = corpus.count;
  std::vector<const uint8_t*> ptr(n);
  std::vector<size_t> len(n);
  for (uint64_t i = 0; i < n; i++) {
    ptr[i] = corpus.base + corpus.offsets[i];
    len[i] = corpus.offsets[i + 1] - corpus.offsets[i];
  }
  const double mb = double(corpus.offsets[n] - corpus.offsets[0]) / 1e6;
  const size_t slots = parallel::MaxSlots();
  const double w0 = Wall(), c0 = Cpu();
  for (uint64_t i = 0; i < n;) {
    uint64_t j = i, bytes = 0;
    while (j < n && j - i < 4096 && bytes < (4u << 20)) bytes += len[j++];
    s = d.Add(Docs{ptr.data() + i, len.data() + i, j - i}, nullptr, slots, nullptr);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    i = j;
  }
  const double w1 = Wall(), c1 = Cpu();
  lsh::DedupResult r;
  s = d.Finish(slots, nullptr, &r);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  const double w2 = Wall(), c2 = Cpu();
  std::printf("%s, %zu threads: %llu docs, %.1f MB; add %.2f s wall / %.2f s CPU, finish %.2f / %.2f; total %.2f s "
              "wall, %.2f CPU-s = %.1f MB per CPU-s; duplicates %llu, candidate pairs %llu, kept %llu, verified docs "
              "%llu, sets built %llu, pairs compared by sets %llu, blocks %llu, spilled %.1f MB\n",
              setting.c_str(), threads, static_cast<unsigned long long>(n), mb, w1 - w0, c1 - c0, w2 - w1, c2 - c1,
              w2 - w0, c2 - c0, mb / (c2 - c0), static_cast<unsigned long long>(r.duplicates),
              static_cast<unsigned long long>(r.candidate_pairs), static_cast<unsigned long long>(r.kept_pairs),
              static_cast<unsigned long long>(r.verify_docs), static_cast<unsigned long long>(r.verify_sets), static_cast<unsigned long long>(r.verify_checked),
              static_cast<unsigned long long>(r.verify_blocks), r.spilled_bytes / 1e6);
  return 0;
}
