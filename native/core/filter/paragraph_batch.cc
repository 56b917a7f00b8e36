#include "filter/paragraph_batch.h"

#include "parallel/pool.h"

namespace neardup {
namespace filter {

Status DedupParagraphs(Deduper* d, const ParagraphBatch& b, size_t slots, const std::atomic<bool>* stop,
                       ParagraphBatchResult* out) {
  if (b.docs > 0 && (b.doc_start[0] != 0 || b.doc_start[b.docs] != b.paragraphs))
    return Status(Code::kInvalidArgument, "document offsets must start at 0 and end at the paragraph count");
  for (size_t i = 0; i < b.docs; i++)
    if (b.doc_start[i] > b.doc_start[i + 1]) return Status(Code::kInvalidArgument, "document offsets must not decrease");
  // Hash every paragraph's words (per document, into one vector per document).
  std::vector<std::vector<uint64_t>> toks(b.docs);
  std::vector<std::vector<uint32_t>> ends(b.docs);
  parallel::ParallelFor(
      b.docs, 16, slots,
      [&](size_t s, size_t e, size_t) {
        for (size_t i = s; i < e; i++) {
          std::vector<uint64_t>& t = toks[i];
          std::vector<uint32_t>& pe = ends[i];
          for (uint32_t p = b.doc_start[i]; p < b.doc_start[i + 1]; p++) {
            HashWords(b.data[p], b.len[p], &t, d->options().hash);
            pe.push_back(static_cast<uint32_t>(t.size()));
          }
        }
      },
      stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  out->dup.assign(b.paragraphs, 0);
  out->doc_removed.assign(b.docs, 0);
  out->tokens.assign(b.paragraphs, 0);
  for (size_t i = 0; i < b.docs; i++) {
    const uint32_t p0 = b.doc_start[i];
    const size_t np = b.doc_start[i + 1] - p0;
    for (size_t j = 0; j < np; j++) out->tokens[p0 + j] = ends[i][j] - (j ? ends[i][j - 1] : 0);
    out->doc_removed[i] = d->Document(toks[i].data(), toks[i].size(), ends[i].data(), np, out->dup.data() + p0);
    std::vector<uint64_t>().swap(toks[i]);
  }
  return Status::Ok();
}

}  // namespace filter
}  // namespace neardup
