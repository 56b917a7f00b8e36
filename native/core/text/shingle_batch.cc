#include "text/shingle_batch.h"

#include <cstring>
#include <memory>

#include "parallel/pool.h"

namespace neardup {
namespace {

template <typename T>
Status Run(const Docs& docs, const ShingleConfig& c, size_t slots, const std::atomic<bool>* stop,
           std::vector<T>* hashes, std::vector<uint32_t>* offsets, uint64_t* invalid) {
  const size_t n = docs.size();
  // Chunks of documents, each with its own output so the final order is the input order.
  const size_t grain = std::max<size_t>(1, std::min<size_t>(1024, n / (slots * 16 + 1)));
  const size_t chunks = (n + grain - 1) / grain;
  std::vector<std::vector<T>> parts(chunks);
  std::vector<std::vector<uint32_t>> counts(chunks);
  std::vector<uint64_t> bad(chunks, 0);
  std::vector<std::unique_ptr<Shingler>> shinglers(slots);
  std::vector<std::unique_ptr<HashDedup>> dedups(slots);
  parallel::ParallelFor(
      n, grain, slots,
      [&](size_t b, size_t e, size_t slot) {
        if (!shinglers[slot]) {
          shinglers[slot] = std::make_unique<Shingler>(c.text);
          dedups[slot] = std::make_unique<HashDedup>();
        }
        Shingler& s = *shinglers[slot];
        const size_t chunk = b / grain;
        std::vector<T>& out = parts[chunk];
        std::vector<uint32_t>& cnt = counts[chunk];
        cnt.resize(e - b);
        for (size_t i = b; i < e; i++) {
          s.Reset(docs.ptr[i], docs.len[i]);
          bad[chunk] += s.had_invalid_utf8();
          const size_t before = out.size();
          AppendShingleHashes<T>(s, c.hash, c.seed, c.dedupe, dedups[slot].get(), &out);
          cnt[i - b] = static_cast<uint32_t>(std::min<size_t>(out.size() - before, UINT32_MAX));
        }
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");
  uint64_t total = 0;
  for (auto& p : parts) total += p.size();
  if (total > UINT32_MAX)
    return Status(Code::kInvalidArgument, "the batch would produce " + std::to_string(total) +
                                              " hashes; at most 4294967295 fit one result: split the batch");
  hashes->resize(total);
  offsets->resize(n + 1);
  size_t at = 0, doc = 0;
  (*offsets)[0] = 0;
  for (size_t k = 0; k < chunks; k++) {
    if (!parts[k].empty()) std::memcpy(hashes->data() + at, parts[k].data(), parts[k].size() * sizeof(T));
    at += parts[k].size();
    std::vector<T>().swap(parts[k]);
    for (uint32_t cnt : counts[k]) {
      (*offsets)[doc + 1] = (*offsets)[doc] + cnt;
      doc++;
    }
    *invalid += bad[k];
  }
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
