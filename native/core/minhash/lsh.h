// MinHash LSH: datasketch's choice of (b, r) (banding.h) and an index with datasketch MinHashLSH's semantics
// (insert refuses a key already present, query returns the keys sharing a band, remove refuses an absent key),
// with integer or string keys. A loaded index is a memory-mapped segment (lsh_file.h) under an in-memory one:
// inserts go to memory, removing a saved entry marks it dead, and saving merges everything into one file.
//
// Entries are addressed by handles in insertion order: the saved segment's slots 0..m-1 first, then the
// inserted entries m, m+1, ...; results (query, pairs, clusters) are handles, ascending.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "minhash/banding.h"  // OptimalParam, FalsePositiveArea, FalseNegativeArea
#include "minhash/lsh_file.h"
#include "minhash/lsh_params.h"
#include "util/status.h"

namespace neardup {
namespace lsh {

using Pair = std::pair<uint64_t, uint64_t>;

// The keys of a batch: integers, or strings packed as bytes + n+1 offsets.
struct KeyBatch {
  KeyType type = KeyType::kInt;
  size_t n = 0;
  const uint64_t* ints = nullptr;
  const uint8_t* bytes = nullptr;
  const uint64_t* offsets = nullptr;
  Key at(size_t i) const {
    if (type == KeyType::kInt) return Key::Int(ints[i]);
    return Key::Str(std::string_view(reinterpret_cast<const char*>(bytes) + offsets[i], size_t(offsets[i + 1] - offsets[i])));
  }
};

// Per-entry data blobs of a batch: entry i is bytes[offsets[i] .. offsets[i+1]).
struct DataBatch {
  const uint8_t* bytes = nullptr;
  const uint64_t* offsets = nullptr;
};

// Not synchronised: const methods may run concurrently with each other only.
class Index {
 public:
  Index(const Params& p, KeyType key_type, Store store = Store());
  // A saved index (version 1 or 2) as the base segment, memory-mapped.
  static Status Load(const std::string& path, bool verify, std::unique_ptr<Index>* out);
  // The same over an image in memory (`data` must outlive the index).
  static Status LoadBytes(const uint8_t* data, size_t size, const std::string& name, bool verify,
                          std::unique_ptr<Index>* out);

  const Params& params() const { return p_; }
  KeyType key_type() const { return key_type_; }
  Store store() const { return store_; }
  const std::string& meta() const { return meta_; }
  void set_meta(std::string m) { meta_ = std::move(m); }
  size_t size() const { return size_t(base_n_ - dead_count_) + added_.size(); }
  uint64_t base_size() const { return base_n_; }       // entries of the loaded file
  uint64_t base_removed() const { return dead_count_; }  // of which removed
  uint64_t added() const { return added_.size(); }     // entries inserted since
  const Segment* base() const { return base_.get(); }
  const std::string& source() const { return source_; }  // the file it was loaded from ("" if none)

  // All-or-nothing: a key already present, or repeated in `keys`, is a kDuplicateKey error naming it and
  // nothing is inserted. `data` is required when the index stores data, ignored otherwise.
  Status Insert(const KeyBatch& keys, const uint8_t* sigs, const DataBatch* data, size_t slots,
                const std::atomic<bool>* stop);
  bool Find(const Key& k, uint64_t* handle) const;
  bool Contains(const Key& k) const {
    uint64_t h;
    return Find(k, &h);
  }
  // kKeyNotFound when absent.
  Status Remove(const Key& k);
  // Handles of live entries sharing at least one band with `sig`, ascending.
  void Query(const uint8_t* sig, std::vector<uint64_t>* out) const;
  // The same from the b band keys of a signature (BandKeys). With `limit`, a bucket of more than `limit`
  // entries gives only its first and last live entries (dedup's bound on the work per document).
  void QueryBands(const uint64_t* band_keys, std::vector<uint64_t>* out, size_t limit = SIZE_MAX) const;
  // The key of a live handle (kCorrupt for a damaged base segment loaded without verification).
  Status KeyOf(uint64_t handle, Key* k) const;
  // Stored signature / data of a live handle (nullptr / kUnsupported when the index does not store them).
  const uint8_t* Signature(uint64_t handle) const;
  Status Data(uint64_t handle, const uint8_t** p, uint64_t* n) const;

  // Every pair (a < b) of live handles sharing a band, sorted, distinct; kTooManyResults beyond max_pairs
  // (checked as they are produced: memory stays about max_pairs pairs).
  Status CandidatePairs(std::vector<Pair>* out, uint64_t max_pairs = UINT64_MAX) const;
  // Live handles in insertion order and, for each, its cluster's first handle (connected components).
  void Clusters(std::vector<uint64_t>* handles, std::vector<uint64_t>* reps) const;
  void Handles(std::vector<uint64_t>* out) const;
  // Raised by every Insert and Remove (a PairStream refuses to go on over a changed index).
  uint64_t version() const { return version_; }

  // Writes every live entry (the base's first, then the inserted ones, in insertion order) and, after them,
  // the entries of `extra`, to one version 2 file, atomically, with `meta` (nullptr: the index's own). Safe when `path` is the file the index was
  // loaded from: the new file is written under a temporary name and renamed over it, while the old one stays
  // mapped (POSIX; Windows refuses to replace a mapped file: the rename then fails with a clear error).
  Status Save(const std::string& path, const std::vector<AppendSource*>& extra = {}, const std::string* meta = nullptr) const;
  Status SaveTo(ByteSink* sink, const std::vector<AppendSource*>& extra = {}, const std::string* meta = nullptr) const;

 private:
  friend class PairStream;
  friend class AddedSource;
  struct Entry {
    uint64_t ikey = 0;
    std::string skey;
    std::vector<uint64_t> bands;
    std::vector<uint8_t> sig, data;
    Key key(KeyType t) const { return t == KeyType::kInt ? Key::Int(ikey) : Key::Str(skey); }
  };
  bool Dead(uint64_t slot) const { return DeadBit(dead_, slot); }
  // Calls fn(handles, m) for every bucket of band j with m >= 2 live entries, handles ascending.
  template <typename Fn>
  void ForEachBucket(uint32_t j, Fn&& fn) const;
  std::vector<uint64_t> AddedInOrder() const;

  Params p_;
  KeyType key_type_;
  Store store_;
  std::string meta_, source_;
  std::unique_ptr<Segment> base_;
  uint64_t base_n_ = 0;
  std::vector<uint64_t> dead_;  // one bit per base slot (allocated at the first removal)
  uint64_t dead_count_ = 0;
  std::unordered_map<uint64_t, Entry> added_;  // by handle
  std::unordered_map<uint64_t, uint64_t> int_keys_;      // key -> handle (added entries)
  std::vector<uint64_t> added_ints_;                     // integer key of handle base_n_ + i (KeyOf without a lookup)
  std::unordered_map<std::string, uint64_t> str_keys_;   // key -> handle (added entries)
  std::vector<std::unordered_map<uint64_t, std::vector<uint64_t>>> tables_;  // band key -> handles (added)
  uint64_t next_handle_ = 0;
  uint64_t version_ = 0;
};

// Candidate pairs (a < b sharing a band) in the order CandidatePairs returns them (a, then b ascending), a
// chunk at a time. It holds the live handles, one handle's partners and, for a base segment, the band keys of
// every base entry (8 * b bytes each); never the pairs. The index must outlive it and must not change while
// it runs (Next then fails).
class PairStream {
 public:
  explicit PairStream(const Index& index);
  // Appends up to max_pairs pairs to *out; *done is set once every pair has been produced.
  Status Next(size_t max_pairs, std::vector<Pair>* out, bool* done);

 private:
  void Partners(size_t i);
  const Index* index_;
  uint64_t version_;
  std::vector<uint64_t> handles_;    // live, ascending
  std::vector<uint64_t> base_keys_;  // base_keys_[slot * b + j]
  size_t next_ = 0;                  // the next handle whose partners are to be listed
  std::vector<uint64_t> partners_;
  size_t partner_pos_ = 0;           // partners_ of handles_[next_ - 1] already handed out
};

}  // namespace lsh
}  // namespace neardup
