#include "text/shingle_batch.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "parallel/pool.h"

namespace neardup {
namespace {

template <typename T>
Status Run(const Docs& docs, const ShingleConfig& c, size_t slots, const std::atomic<bool>* stop,
           RawBuffer<T>* hashes, RawBuffer<uint32_t>* offsets, uint64_t* invalid) {
  const size_t n = docs.size();
  // Grain: about 16 chunks per thread, at most 1024 documents each.
  const size_t grain = std::max<size_t>(1, std::min<size_t>(1024, n / (slots * 16 + 1)));

  // Pass 1: per-document bounds (exact for plain ASCII char n-grams), and their prefix sums. Under Unicode
  // normalisation, the bound of the normalised text (normalised here once more than in pass 2: the forms'
  // general bounds are up to 17 values a byte, and slots spaced by them would spread the writes over pages).
  std::vector<uint64_t> start(n + 1);
  std::vector<uint8_t> exact(n);
  const bool normalise = c.text.normalize != text::NormalForm::kNone;
  TextOptions plain = c.text;
  plain.normalize = text::NormalForm::kNone;
  struct Scratch {
    text::Normalizer normalizer;
    RawBuffer<uint8_t> text;
  };
  std::vector<std::unique_ptr<Scratch>> scratch(normalise ? slots : 0);
  parallel::ParallelFor(
      n, grain * 4, slots,
      [&](size_t b, size_t e, size_t slot) {
        for (size_t i = b; i < e; i++) {
          bool ex;
          if (normalise) {
            if (!scratch[slot]) scratch[slot] = std::make_unique<Scratch>();
            Scratch& sc = *scratch[slot];
            bool bad = false;
            const size_t len = sc.normalizer.Normalize(c.text.normalize, docs.ptr[i], docs.len[i], &sc.text, &bad);
            start[i + 1] = ShingleBound(plain, sc.text.data(), len, &ex);
          } else {
            start[i + 1] = ShingleBound(c.text, docs.ptr[i], docs.len[i], &ex);
          }
          exact[i] = ex && !c.dedupe;
        }
      },
      stop);
  start[0] = 0;
  for (size_t i = 0; i < n; i++) start[i + 1] += start[i];
  const uint64_t bound = start[n];
  hashes->Allocate(static_cast<size_t>(bound));
  std::vector<uint32_t> count(n);
  std::vector<uint64_t> bad((n + grain - 1) / grain, 0);
  std::vector<std::unique_ptr<Shingler>> shinglers(slots);
  std::vector<std::unique_ptr<HashDedup>> dedups(slots);

  // Pass 2: hash every document straight into its slot.
  parallel::ParallelFor(
      n, grain, slots,
      [&](size_t b, size_t e, size_t slot) {
        if (!shinglers[slot]) {
          shinglers[slot] = std::make_unique<Shingler>(c.text);
          dedups[slot] = std::make_unique<HashDedup>();
        }
        Shingler& s = *shinglers[slot];
        uint64_t nbad = 0;
        for (size_t i = b; i < e; i++) {
          s.Reset(docs.ptr[i], docs.len[i]);
          nbad += s.had_invalid_utf8();
          count[i] = static_cast<uint32_t>(
              WriteShingleHashes<T>(s, c.hash, c.seed, c.dedupe, dedups[slot].get(), hashes->data() + start[i]));
        }
        bad[b / grain] = nbad;
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");

  // Pass 3: offsets, and compaction of the documents whose bound was not exact.
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) total += count[i];
  if (total > UINT32_MAX)
    return Status(Code::kInvalidArgument, "the batch would produce " + std::to_string(total) +
                                              " hashes; at most 4294967295 fit one result: split the batch");
  offsets->Allocate(n + 1);
  uint32_t at = 0;
  (*offsets)[0] = 0;
  for (size_t i = 0; i < n; i++) {
    if (at != start[i] && count[i] > 0) std::memmove(hashes->data() + at, hashes->data() + start[i], count[i] * sizeof(T));
    at += count[i];
    (*offsets)[i + 1] = at;
  }
  hashes->Shrink(at);
  for (uint64_t b : bad) *invalid += b;
  return Status::Ok();
}

}  // namespace

Status ShingleBatch(const Docs& docs, const ShingleConfig& config, size_t slots, const std::atomic<bool>* stop,
                    ShingleBatchResult* out) {
  Status s = ValidateTextOptions(config.text);
  if (!s.ok()) return s;
  if (slots == 0) slots = 1;
  out->invalid_utf8_docs = 0;
  if (Is64Bit(config.hash)) return Run<uint64_t>(docs, config, slots, stop, &out->h64, &out->offsets, &out->invalid_utf8_docs);
  return Run<uint32_t>(docs, config, slots, stop, &out->h32, &out->offsets, &out->invalid_utf8_docs);
}

}  // namespace neardup
