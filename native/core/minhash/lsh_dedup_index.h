// Dedup against a saved index, and the index a dedup run writes (docs/lsh.md, "Against an index").
//
// The engine (lsh_dedup.h) consults this hook at three points and otherwise runs as usual:
//   Add      each batch's band keys are looked up in the prior index: (document, entry) candidates;
//   Finish   candidates are verified as the engine verifies its own pairs (exact Jaccard of the shingle sets, both
//            built from the texts (the engine's and the index's) by the engine's BuildSet and decided by its
//            JaccardAtLeast; or the signature estimate; or none), and a
//            document matching an entry is dropped for the earliest such entry before the keep rule runs, so
//            it never becomes the representative of a later document;
//   after    the kept documents are appended to the index (keys, band keys, signatures and, for exact
//            verification, texts, read from the engine's own copies) and everything is written as one file
//            (lsh::Index::Save).
// Under the keep rule this equals one run over the index's documents followed by this run's: an entry is a
// document every earlier run kept, a dropped document can never be a representative again, and documents of
// this run are decided in order after every indexed one.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/temp_names.h"
#include "minhash/lsh.h"
#include "minhash/lsh_dedup.h"
#include "minhash/spill.h"
#include "text/docs.h"
#include "text/shingle.h"
#include "util/status.h"

namespace neardup {
namespace lsh {

// (A prior bucket of the index is read whole: every entry sharing a band key with a document is a candidate,
// however many there are; kPriorBucket, which kept only the first and last entries of a bucket of over 100,
// is gone.)

// What the hook reads about this run's documents (implemented by the engine). Thread-safe; the pointers stay
// valid while the object lives.
class RunDocs {
 public:
  virtual ~RunDocs() = default;
  // Document d's signature (params.signature_bytes()); null when the engine keeps no signatures (it keeps them
  // when verifying by estimate, reporting pairs or writing an index).
  virtual const uint8_t* Signature(uint64_t d) = 0;
  // Verify::kExact: document d's text (empty for a skipped line); false when the engine keeps no texts.
  virtual bool Text(uint64_t d, const uint8_t** p, uint64_t* len) = 0;
};

struct IndexHookOptions {
  Params params;
  Verify verify = Verify::kNone;
  double threshold = 0.8;
  TextOptions text;                 // Verify::kExact: a text -> its shingle set (the engine's minhash.text)
  const Index* prior = nullptr;     // the index this run is checked against (kept alive and unchanged by the caller)
  bool write = false;               // an index is written after the run
  KeyType key_type = KeyType::kInt;
  uint64_t key_offset = 0;          // integer keys: document d's key is key_offset + d
  std::string tmp_dir = ".";        // string keys of this run (writing) go to a spill folder here
};

// A key of this run that cannot go into the index: `doc` (kept) has the key of an indexed entry
// (other = UINT64_MAX) or of an earlier kept document `other`.
struct KeyConflict {
  uint64_t doc = 0, other = UINT64_MAX;
  std::string key;  // KeyText
};

class IndexHook {
 public:
  explicit IndexHook(const IndexHookOptions& o);
  // Checks the prior index against the run (parameters, key type, what it stores) and prepares the spill files.
  Status Init();
  const IndexHookOptions& options() const { return o_; }
  // Store of the index written (and expected of the prior one): signatures; texts with exact verification.
  Store store() const { return Store{true, o_.verify == Verify::kExact}; }

  // The string keys of the next documents, in order (the binding calls it before their batch is added).
  Status AddKeys(const KeyBatch& keys);
  // Called by the engine's Add for each batch, in order: the band keys (n x b) and valid (nullable: 0 = a
  // skipped line).
  Status AddBatch(const uint64_t* band_keys, size_t n, const uint8_t* valid, size_t slots, const std::atomic<bool>* stop);

  // Called by the engine's Finish before its keep rule: verifies the candidates. Then matched(d) says whether
  // document d is at or above the threshold (verify none: shares a band) with an entry of the prior index.
  Status Match(RunDocs* docs, bool want_pairs, size_t slots, const std::atomic<bool>* stop);
  bool matched(uint64_t d) const { return Bit(matched_, d); }
  // Documents matching an entry, ascending, with the earliest such entry (a handle of the prior index).
  const std::vector<std::pair<uint32_t, uint64_t>>& matches() const { return matches_; }
  // Verified (document, entry) pairs, by document then entry (with want_pairs).
  struct PriorPair {
    uint32_t doc;
    uint64_t entry;
    float estimate, exact;
  };
  const std::vector<PriorPair>& pairs() const { return pairs_; }

  // Before the keep rule: rep[d] = kIndexRep for every matched document.
  void MarkMatched(std::vector<uint32_t>* rep) const;
  // After the keep rule: counts the matched documents and their clusters, the candidates and verified pairs
  // with indexed documents and the spilled bytes into *out; remembers which documents are kept (rep[d] == d),
  // for the index written.
  void Tally(DedupResult* out);
  // Kept documents whose keys are already taken (at most `max`, in document order).
  Status KeyConflicts(size_t max, std::vector<KeyConflict>* out);
  // Writes the prior index's entries and this run's kept documents to `path` (atomically) with `meta`;
  // *entries receives the number of entries written.
  Status Write(const std::string& path, const std::string& meta, RunDocs* docs, size_t slots, const std::atomic<bool>* stop,
               uint64_t* entries);

 private:
  friend class KeptSource;
  static bool Bit(const std::vector<uint64_t>& bits, uint64_t i) { return (i >> 6) < bits.size() && ((bits[i >> 6] >> (i & 63)) & 1); }
  static void SetBit(std::vector<uint64_t>* bits, uint64_t i) {
    if ((i >> 6) >= bits->size()) bits->resize((i >> 6) + 1, 0);
    (*bits)[i >> 6] |= uint64_t(1) << (i & 63);
  }
  Status Spill(std::unique_ptr<TempFile>* f, const char* tag);
  uint64_t spilled_bytes() const;
  IndexHookOptions o_;
  io::SpillDir spill_dir_;  // declared before what lives in it: destroyed (removed) after it
  uint64_t docs_ = 0;
  std::vector<uint64_t> valid_;    // one bit per document: not a skipped line
  std::vector<std::pair<uint64_t, uint32_t>> cand_;  // (entry handle, document)
  uint64_t candidates_count_ = 0, verified_ = 0;
  std::vector<uint64_t> matched_;  // one bit per document
  std::vector<std::pair<uint32_t, uint64_t>> matches_;
  std::vector<PriorPair> pairs_;
  std::vector<uint64_t> kept_;     // one bit per document, after Tally
  // this run's string keys (writing): a temporary file, with offsets per document
  std::unique_ptr<TempFile> keys_;
  std::vector<uint64_t> key_off_{0};
};

}  // namespace lsh
}  // namespace neardup
