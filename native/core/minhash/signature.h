// MinHash signatures of documents: k unsigned 32-bit values per document (minhash/profiles.h says how each
// profile computes them).
//
// Memory per document is bounded by the shingle stream (O(document bytes)) plus O(k): no profile allocates
// shingles x values. doubri-v1 and datasketch char hash each *distinct* shingle of a document once (the
// minimum over a set does not depend on repeats); datasketch word hashes every occurrence (word shingles
// rarely repeat, finding repeats costs more than SHA-1); fast costs O(1) per shingle occurrence.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "minhash/profiles.h"
#include "text/docs.h"
#include "text/shingle.h"
#include "util/status.h"

namespace neardup {
namespace minhash {

// Per-thread signer: owns the shingle stream and scratch, reused across documents (no allocation once the
// scratch has grown to the largest document seen).
class Signer {
 public:
  // Profiles that take each distinct shingle once find them in windows of this many shingles (bounded
  // scratch for a huge document; the same signature).
  static constexpr size_t kDistinctWindow = size_t(1) << 22;
  explicit Signer(std::shared_ptr<const Plan> plan);
  size_t k() const { return plan_->k(); }
  // Writes k values to out.
  void Sign(const uint8_t* data, size_t len, uint32_t* out);
  void Sign(std::string_view s, uint32_t* out) { Sign(reinterpret_cast<const uint8_t*>(s.data()), s.size(), out); }
  // Signature of a given set of shingles (no tokenizing): the shingles are hashed as they are.
  void SignShingles(const std::string_view* shingles, size_t n, uint32_t* out);
  bool had_invalid_utf8() const { return shingler_.had_invalid_utf8(); }

 private:
  void SignPrepared(uint32_t* out);
  // Fills distinct_ with the indexes of the distinct shingles among shingler_[begin, end).
  size_t CollectDistinct(size_t begin, size_t end);
  // The same for fixed-width shingles of <= 7 bytes, where being exact is not needed (a minimum ignores
  // repeats): every distinct shingle is kept, and the repeats a small direct-mapped table remembers are
  // dropped. Branch-free and cache-resident; fills distinct_ and returns its size.
  size_t CollectDistinctLossy(size_t begin, size_t end);
  void DoubriOne(std::string_view s, uint32_t* out);

  std::shared_ptr<const Plan> plan_;
  Shingler shingler_;
  std::vector<uint32_t> distinct_;
  // The distinct-shingle set: open addressing, one 16-byte slot per probe (a slot is in use for the current
  // window iff gen == gen_). key: the shingle's bytes (fixed-width ASCII shingles of <= 8 bytes, compared
  // exactly) or a 64-bit hash of it (compared, then the shingles themselves).
  struct DistinctSlot {
    uint64_t key;
    uint32_t idx, gen;
  };
  std::vector<DistinctSlot> set_;
  uint32_t gen_ = 0;
  std::vector<uint64_t> recent_;  // CollectDistinctLossy: shingle bytes | window tag << 56 (0 = empty)
  uint32_t recent_tag_ = 0;
  std::vector<uint32_t> mixed_;     // doubri-v1: Murmur3 block scratch
  std::vector<uint32_t> h32_;       // datasketch: shingle hashes
  std::vector<uint32_t> window_min_;  // datasketch, a huge document: one window's minima
  std::vector<std::string_view> views_;
  std::vector<uint64_t> bins_;      // fast: per-bin minimum (UINT64_MAX = empty)
};

// Signatures of a batch on the thread pool: out must hold docs.size() * plan.k() values (document-major).
// invalid_utf8 (optional) receives the number of documents that had invalid UTF-8.
Status SignBatch(const Docs& docs, const std::shared_ptr<const Plan>& plan, size_t slots,
                 const std::atomic<bool>* stop, uint32_t* out, uint64_t* invalid_utf8);

// Kernels, exposed for tests and benchmarks. DatasketchMin: out[i] = min over h of
// (((a[i]*h + b[i]) mod 2^64) mod (2^61-1)) & 0xFFFFFFFF, 0xFFFFFFFF when n == 0.
void DatasketchMin(const uint32_t* h, size_t n, const uint64_t* a, const uint64_t* b, size_t k, uint32_t* out);
// The kernel in use: "avx512", "avx2" or "portable".
const char* DatasketchKernel();
void DatasketchMinPortable(const uint32_t* h, size_t n, const uint64_t* a, const uint64_t* b, size_t k,
                           uint32_t* out);

}  // namespace minhash
}  // namespace neardup
