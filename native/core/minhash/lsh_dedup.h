// Corpus deduplication with MinHash LSH: documents are added in order (signatures, and shingle sets when
// pairs are verified exactly); Finish() groups them by band keys (in memory, or spilled to sorted runs under a
// memory budget: identical result), optionally verifies candidate pairs, and returns clusters whose
// representative is the first occurrence.
//
// Candidate pairs of a bucket (documents sharing a band key): every pair when the bucket has at most
// kAllPairsBucket documents; beyond that, each document with the bucket's first and with its predecessor
// (a bucket that large is almost always copies of one text; this keeps the work linear).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/file.h"
#include "io/temp_names.h"
#include "minhash/lsh.h"
#include "minhash/spill.h"
#include "util/status.h"

namespace neardup {
namespace lsh {

constexpr size_t kAllPairsBucket = 100;

enum class Verify { kNone = 0, kEstimate = 1, kExact = 2 };

// How reported pairs become dropped documents. kKept (doubri's rule): documents are decided in order, and one
// is dropped only for an earlier *kept* document it matches (without verification: shares a band key with;
// with verification: a kept pair), which is its representative. kComponents: connected components of the
// pairs (all band buckets without verification), the first member kept; chains can join documents below the
// threshold.
enum class Clustering { kKept = 0, kComponents = 1 };

struct DedupOptions {
  Params params;
  double threshold = 0.8;  // for verification
  Verify verify = Verify::kNone;
  Clustering clustering = Clustering::kKept;
  bool want_pairs = false;
  uint64_t max_pairs = UINT64_MAX;  // want_pairs: more reported pairs fail with kTooManyResults, before they are copied
  uint64_t memory_bytes = 0;  // 0: everything in memory (except shingle sets when spill_shingles)
  bool spill_shingles = true;  // Verify::kExact: shingle sets go to a temporary file, read back per pair
  std::string tmp_dir = ".";  // spilled files go to a folder tmp_dir/neardup-spill-PID-XXXXXX (io::SpillDir)
};

struct DedupResult {
  std::vector<uint32_t> rep;  // per document: the kept document it is dropped for (itself when kept)
  std::vector<uint32_t> pair_a, pair_b;  // reported pairs (verified when verifying), a < b, sorted
  std::vector<float> pair_estimate, pair_exact;  // exact only with Verify::kExact
  uint64_t candidate_pairs = 0;  // distinct candidate pairs examined (0 when pairs were not needed)
  uint64_t kept_pairs = 0;
  uint64_t duplicates = 0;       // documents that are not their cluster's representative
  uint64_t clusters = 0;         // clusters of 2 or more documents
  uint64_t spilled_bytes = 0;    // band runs, signatures and shingle sets written to temporary files
  uint64_t runs = 0;
};

class Dedup {
 public:
  explicit Dedup(const DedupOptions& o);
  Status Init();
  // n documents: signatures (n x signature_bytes), valid (nullable; 0 = a skipped line that never matches),
  // and for Verify::kExact their shingle hashes (any order, repeats allowed; each document's range is sorted in
  // place): doc i is shingles[offsets[i] .. offsets[i+1]).
  Status Add(const uint8_t* sigs, size_t n, const uint8_t* valid, uint64_t* shingles, const uint32_t* offsets,
             size_t slots, const std::atomic<bool>* stop);
  Status Finish(size_t slots, const std::atomic<bool>* stop, DedupResult* out);
  uint64_t docs() const { return docs_; }

 private:
  Status Store(std::vector<uint8_t>* mem, TempFile* file, const void* data, size_t bytes);
  void KeptFromPairs(const std::vector<uint64_t>& pairs, DedupResult* out) const;
  DedupOptions o_;
  io::SpillDir spill_dir_;  // declared before what lives in it: destroyed (removed) after it
  BandRuns runs_;
  uint64_t docs_ = 0;
  std::vector<uint8_t> sigs_mem_, sh_mem_;
  std::unique_ptr<TempFile> sigs_file_, sh_file_;
  std::vector<uint64_t> sh_off_{0};  // entries, per document + 1
  bool spill_ = false;
};

}  // namespace lsh
}  // namespace neardup
