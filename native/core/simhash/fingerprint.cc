#include "simhash/fingerprint.h"

#include <memory>

#include "parallel/pool.h"

namespace neardup {
namespace simhash {

uint64_t Compute(const uint64_t* f, size_t n) {
  // Bit-sliced counting: acc[j] holds eight byte counters, byte b counting bit 8b+j; flushed into 32-bit
  // totals before a byte can overflow.
  uint64_t total[64] = {0};
  constexpr uint64_t kLow = 0x0101010101010101ull;
  size_t i = 0;
  while (i < n) {
    const size_t end = i + 255 < n ? i + 255 : n;
    uint64_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (; i < end; i++) {
      const uint64_t x = f[i];
      for (int j = 0; j < 8; j++) acc[j] += (x >> j) & kLow;
    }
    for (int j = 0; j < 8; j++)
      for (int b = 0; b < 8; b++) total[8 * b + j] += (acc[j] >> (8 * b)) & 0xff;
  }
  uint64_t out = 0;
  for (int bit = 0; bit < 64; bit++)
    if (2 * total[bit] > n) out |= uint64_t{1} << bit;  // ones > zeros
  return out;
}

uint64_t ComputeWeighted(const uint64_t* f, const double* w, size_t n) {
  double v[64] = {0};
  for (size_t i = 0; i < n; i++) {
    const uint64_t x = f[i];
    const double wi = w[i];
    for (int bit = 0; bit < 64; bit++) v[bit] += ((x >> bit) & 1) ? wi : -wi;
  }
  uint64_t out = 0;
  for (int bit = 0; bit < 64; bit++)
    if (v[bit] > 0) out |= uint64_t{1} << bit;
  return out;
}

FingerprintConfig SeomozProfile() {
  FingerprintConfig c;
  c.shingles.text.unit = TextUnit::kWord;
  c.shingles.text.n = 4;
  c.shingles.text.split = WordSplit::kNonWord;
  c.shingles.text.lowercase = true;
  c.shingles.text.short_text = ShortText::kNone;
  c.shingles.hash = ShingleHash::kMd5_64;
  c.weighting = Weighting::kCount;
  return c;
}

FingerprintConfig DefaultProfile() {
  // seomoz's tokens, but word 3-grams, one shingle of a shorter text, fast64, and each distinct shingle
  // voting once: with counts, one shingle repeated many times (a run of spaces or dashes in char shingles)
  // decides every bit, and unrelated documents holding such a run share a fingerprint (docs/simhash.md).
  FingerprintConfig c = SeomozProfile();
  c.shingles.text.n = 3;
  // Unicode word boundaries, each letter a unit where words have no spaces: the best rule for fingerprints on
  // the held-out multilingual check (docs/languages.md)
  c.shingles.text.split = WordSplit::kUnicode;
  c.shingles.text.cjk = ClusterUnit::kChars;
  c.shingles.text.short_text = ShortText::kWhole;
  c.shingles.hash = ShingleHash::kFast64;
  c.weighting = Weighting::kBinary;
  return c;
}

Status ValidateFingerprintConfig(const FingerprintConfig& c) {
  Status s = ValidateTextOptions(c.shingles.text);
  if (!s.ok()) return s;
  if (!Is64Bit(c.shingles.hash))
    return Status(Code::kInvalidArgument, "simhash needs a 64-bit shingle hash (fast64, murmur3_64 or md5_64)");
  return Status::Ok();
}

Status FingerprintBatch(const Docs& docs, const FingerprintConfig& c, size_t slots, const std::atomic<bool>* stop,
                        std::vector<uint64_t>* out) {
  Status st = ValidateFingerprintConfig(c);
  if (!st.ok()) return st;
  if (slots == 0) slots = 1;
  const size_t n = docs.size();
  out->assign(n, 0);
  struct Scratch {
    explicit Scratch(const TextOptions& o) : shingler(o) {}
    Shingler shingler;
    HashDedup dedup;
    std::vector<uint64_t> hashes;
  };
  std::vector<std::unique_ptr<Scratch>> scratch(slots);
  const bool dedupe = c.weighting == Weighting::kBinary;
  const size_t grain = std::max<size_t>(1, std::min<size_t>(256, n / (slots * 8 + 1)));
  parallel::ParallelFor(
      n, grain, slots,
      [&](size_t b, size_t e, size_t slot) {
        if (!scratch[slot]) scratch[slot] = std::make_unique<Scratch>(c.shingles.text);
        Scratch& s = *scratch[slot];
        for (size_t i = b; i < e; i++) {
          s.shingler.Reset(docs.ptr[i], docs.len[i]);
          s.hashes.clear();
          AppendShingleHashes<uint64_t>(s.shingler, c.shingles.hash, c.shingles.seed, dedupe, &s.dedup, &s.hashes);
          (*out)[i] = Compute(s.hashes.data(), s.hashes.size());
        }
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");
  return Status::Ok();
}

}  // namespace simhash
}  // namespace neardup
