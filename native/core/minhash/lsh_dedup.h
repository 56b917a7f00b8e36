// Corpus deduplication with MinHash LSH, in stages:
//
//   Add (per batch, in order)  sign each document (its shingles once, on the pool) -> band keys -> band runs
//                              (in memory, or spilled to sorted runs under a memory budget); with exact
//                              verification the document's text is kept (a temporary file) for later.
//   Finish                     buckets (documents sharing a band key) -> candidate pairs -> verification ->
//                              clusters (doubri's keep rule, or connected components).
//
// Exact verification works on the candidates only: most documents share no band with any other and are never
// shingled a second time (DecidePairs, pair_verify.h: the same function verifies the staged dedup's pairs).
//
// With an index (DedupOptions::index, lsh_dedup_index.h) each batch's band keys are also looked up in a saved
// index, documents matching an indexed one (verified as the run's own pairs, from the texts kept here) are
// dropped for it before the keep rule, and WriteIndex appends the kept documents to it.
//
// Candidate pairs of a bucket (documents sharing a band key): every pair, however large the bucket (a large
// bucket is not always copies of one text: generated locale files, wrappers, families of manual pages). The
// verified keep rule without pairs lists no pairs at all: it is decided from the buckets' members, each document
// checked against the kept members of its buckets only (DecideKeptExact, pair_verify.h). A document without
// shingles (empty) is in no bucket: an empty set is no near-duplicate of anything.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/temp_names.h"
#include "minhash/lsh.h"
#include "minhash/profiles.h"
#include "minhash/signature.h"
#include "minhash/spill.h"
#include "minhash/union_find.h"
#include "text/docs.h"
#include "text/shingle.h"
#include "util/status.h"

namespace neardup {
namespace lsh {

// Buckets larger than this are reported as groups to the staged buckets stage (want_groups); pairs are not capped.
constexpr size_t kAllPairsBucket = 100;

// Candidate pairs held at once (then sorted and spilled to runs in the spill folder, PairRuns): memory_bytes /
// kBytesPerBufferedPair under a budget (a quarter of it at ~40 bytes per pair while a chunk is verified: the
// pair, its decision, estimate and exact value, the documents' order), else kDefaultPairBuffer.
constexpr uint64_t kBytesPerBufferedPair = 160;
constexpr uint64_t kDefaultPairBuffer = uint64_t(1) << 23;

// Shingle sets held at once while verifying, when no memory budget is given.
constexpr uint64_t kDefaultVerifyBytes = uint64_t(64) << 20;

class IndexHook;  // lsh_dedup_index.h
class SignatureSource;  // pair_verify.h
class TextSource;
// DedupResult::rep of a document dropped for an entry of the prior index (IndexHook::matches() names it).
constexpr uint32_t kIndexRep = UINT32_MAX;

// Shingle sets as exact verification builds them: the fast64 hashes (seed 0) of a document's shingles, sorted
// and distinct. SetScratch is one thread's scratch; BuildSet writes the set to out (room for
// ShingleBoundOfLength(len) values) and returns its size. The index hook builds its entries' sets the same way.
// A TextSource's own per-thread scratch, kept in SetScratch::source (the source makes it on first use).
struct SourceScratch {
  virtual ~SourceScratch() = default;
};
struct SetScratch {
  explicit SetScratch(const TextOptions& o) : shingler(o) {}
  Shingler shingler;
  std::unique_ptr<SourceScratch> source;
  std::vector<uint8_t> text;
  std::vector<uint64_t> work, tmp, set;  // hashes being sorted; radix scratch; a set built outside the arena
  std::vector<uint32_t> cnt;
  Status status;
};
// Shingles of a document of `len` bytes, at most (code points and words never outnumber bytes, also after
// normalisation: text/shingle.h), without reading it.
uint64_t ShingleBoundOfLength(const TextOptions& o, uint64_t len);
size_t BuildSet(const uint8_t* text, size_t len, SetScratch* sc, uint64_t* out);

enum class Verify { kNone = 0, kEstimate = 1, kExact = 2 };

// How reported pairs become dropped documents. kKept (doubri's rule): documents are decided in order, and one
// is dropped only for an earlier *kept* document it matches (without verification: shares a band key with;
// with verification: a kept pair), which is its representative. kComponents: connected components of the
// pairs (all band buckets without verification), the first member kept; chains can join documents below the
// threshold.
enum class Clustering { kKept = 0, kComponents = 1 };

struct DedupOptions {
  Params params;
  // How Add(Docs) signs documents (profile, num_perm, seed, shingles); its text options are also those of the
  // exact verification's shingle sets. num_perm must equal params.num_perm.
  minhash::Config minhash;
  double threshold = 0.8;  // for verification
  Verify verify = Verify::kNone;
  Clustering clustering = Clustering::kKept;
  bool want_pairs = false;
  uint64_t max_pairs = UINT64_MAX;  // want_pairs: more reported pairs fail with kTooManyResults, before they are copied
  uint64_t memory_bytes = 0;  // 0: band keys and signatures in memory, shingle sets within kDefaultVerifyBytes
  bool spill_texts = true;    // Verify::kExact: texts go to a temporary file (false: kept in memory)
  // Verify::kNone with Clustering::kKept: also report the band buckets of more than kAllPairsBucket documents
  // (DedupResult::group_*), whose pairs alone do not carry doubri's rule (stage buckets, docs/scale.md).
  bool want_groups = false;
  bool want_estimates = true;   // want_pairs: with the signatures' estimates (false: pair_estimate stays empty)
  bool want_candidates = false;  // DedupResult::candidates: every distinct candidate pair (verified or not; listed
                                 // also without verification or pairs: the staged buckets stage)
  // want_pairs: the reported pairs go to a temporary file in the spill folder (DedupResult::pairs_path; 16-byte
  // records u32 a, u32 b, f32 estimate, f32 exact, in the machine's byte order; max_pairs does not apply)
  // instead of pair_a .. pair_exact.
  bool pairs_file = false;
  // Candidate pairs held at once before they are sorted and spilled to runs (0: memory_bytes /
  // kBytesPerBufferedPair, at least 4096; kDefaultPairBuffer without a budget). Tests make it small.
  uint64_t pair_buffer = 0;
  std::string tmp_dir = ".";  // spilled files go to a folder tmp_dir/neardup-spill-PID-XXXXXX (io::SpillDir)
  IndexHook* index = nullptr;  // against / into an index (lsh_dedup_index.h); outlives the session
};

struct DedupResult {
  std::vector<uint32_t> rep;  // per document: the kept document it is dropped for (itself when kept)
  std::vector<uint32_t> pair_a, pair_b;  // reported pairs (verified when verifying), a < b, sorted
  std::vector<float> pair_estimate, pair_exact;  // exact only with Verify::kExact
  uint64_t candidate_pairs = 0;  // distinct candidate pairs examined (0 when pairs were not needed)
  uint64_t kept_pairs = 0;
  uint64_t duplicates = 0;       // documents that are not their cluster's representative
  uint64_t clusters = 0;         // clusters of 2 or more documents
  uint64_t spilled_bytes = 0;    // band runs, signatures and texts written to temporary files
  uint64_t runs = 0;
  uint64_t pair_runs = 0;        // sorted runs of candidate pairs spilled (their bytes are in spilled_bytes)
  std::string pairs_path;        // DedupOptions::pairs_file: the reported pairs (removed with the session)
  // Exact verification, for benchmarks and tests: documents in candidate pairs, shingle sets built (a
  // document whose partners fall in another block is built again), and blocks.
  uint64_t verify_docs = 0, verify_sets = 0, verify_blocks = 0;
  // The keep rule verified alone (Verify::kExact, Clustering::kKept, no pairs nor candidates wanted:
  // DecideKeptExact): pairs_complete is false, kept_pairs counts only the pairs of each dropped document with
  // its representative, and verify_checked the pairs compared by their sets.
  bool pairs_complete = true;
  uint64_t verify_checked = 0;
  // want_groups: the documents of each bucket of more than kAllPairsBucket documents, bucket after bucket
  // (group g = group_docs[group_ends[g-1] .. group_ends[g]), ascending).
  std::vector<uint32_t> group_docs;
  std::vector<uint64_t> group_ends;
  std::vector<uint64_t> candidates;  // want_candidates: a << 32 | b, sorted, distinct
};

class Dedup {
 public:
  explicit Dedup(const DedupOptions& o);
  Status Init();
  // Adds n documents in order: signed with options().minhash on the pool; valid (nullable; 0 = a skipped
  // line that never matches).
  Status Add(const Docs& docs, const uint8_t* valid, size_t slots, const std::atomic<bool>* stop);
  // The same with signatures computed elsewhere (n x params.signature_bytes()); `texts` (the documents
  // themselves) is needed for Verify::kExact and ignored otherwise.
  Status AddSigned(const uint8_t* sigs, size_t n, const uint8_t* valid, const Docs* texts, size_t slots,
                   const std::atomic<bool>* stop);
  // Signs n documents as Add does, without adding them: n x num_perm values and n x b band keys (the
  // sharded signatures stage). A skipped document (valid[i] = 0) gets all-ones values and keys it never uses.
  // crcs (nullable): each text's CRC-32C (skipped documents too), taken while its bytes are in cache.
  Status Sign(const Docs& docs, const uint8_t* valid, size_t slots, const std::atomic<bool>* stop,
              std::vector<uint8_t>* sigs, std::vector<uint64_t>* keys, std::vector<uint32_t>* crcs = nullptr);
  // Adds n documents by their band keys (n x params.b, computed elsewhere: the buckets stage gives the keys
  // of a range of bands); `sigs` (n x signature_bytes) is needed when estimates are (pairs or
  // Verify::kEstimate), `texts` for Verify::kExact.
  Status AddKeys(const uint64_t* keys, const uint8_t* sigs, size_t n, const uint8_t* valid, const Docs* texts,
                 size_t slots, const std::atomic<bool>* stop);
  Status Finish(size_t slots, const std::atomic<bool>* stop, DedupResult* out);
  // After Finish, with an index hook that writes: the prior index and this run's kept documents, to `path`.
  Status WriteIndex(const std::string& path, const std::string& meta, size_t slots, const std::atomic<bool>* stop,
                    uint64_t* entries);
  uint64_t docs() const { return docs_; }
  const DedupOptions& options() const { return o_; }

 private:
  Status SignBatch(const Docs& docs, const uint8_t* valid, bool store_texts, size_t slots,
                   const std::atomic<bool>* stop, std::vector<uint8_t>* sigs, std::vector<uint64_t>* keys,
                   std::vector<uint32_t>* crcs = nullptr);
  Status Store(std::vector<uint8_t>* mem, TempFile* file, const void* data, size_t bytes);
  Status Insert(const uint8_t* sigs, const uint64_t* keys, size_t n, const uint8_t* valid, const Docs* texts,
                size_t slots, const std::atomic<bool>* stop);
  Status StoreTexts(const Docs& docs, const uint8_t* valid);
  Status Candidates(size_t slots, const std::atomic<bool>* stop, PairRuns* cand, UnionFind* uf,
                    DedupResult* out, std::vector<uint64_t>* member, uint64_t* buckets);
  // The verified keep rule alone (no pairs nor candidates wanted): decided from the buckets by DecideKeptExact.
  bool LazyKept() const {
    return o_.verify == Verify::kExact && o_.clustering == Clustering::kKept && !o_.want_pairs && !o_.want_candidates;
  }
  uint64_t PairBuffer() const;
  Status SpillPath(std::string* dir);  // the spill folder, created on first use
  Status DecideStream(PairRuns* cand, const SignatureSource* sigs, const TextSource* texts, size_t slots,
                      const std::atomic<bool>* stop, UnionFind* uf, DedupResult* out);
  friend class EngineDocs;

  DedupOptions o_;
  std::shared_ptr<const minhash::Plan> plan_;
  io::SpillDir spill_dir_;  // declared before what lives in it: destroyed (removed) after it
  BandRuns runs_;
  uint64_t docs_ = 0;
  bool spill_ = false;
  bool keep_sigs_ = false;  // signatures are needed in Finish (estimates)
  std::vector<uint8_t> sigs_mem_, text_mem_;
  std::unique_ptr<TempFile> sigs_file_, text_file_, pairs_file_;
  std::vector<uint64_t> text_off_{0};  // Verify::kExact: byte offsets of each document's text, documents + 1
  // Add's scratch (Add calls are serialised by the caller): per-slot signers, a batch's signatures and keys.
  std::vector<std::unique_ptr<minhash::Signer>> signers_;
  std::vector<uint8_t> batch_sigs_;
  std::vector<uint8_t> empty_mask_;  // Insert: a batch's valid documents minus those without shingles
  std::vector<uint64_t> batch_keys_;
};

}  // namespace lsh
}  // namespace neardup
