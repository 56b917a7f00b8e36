// Paragraph dedup of documents given as paragraph texts (plain text, JSONL): tokens are whitespace-
// separated words (filter/onion.h HashWords). Words are hashed on the thread pool; documents are decided
// in order by the Deduper.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "filter/onion.h"
#include "util/status.h"

namespace neardup {
namespace filter {

struct ParagraphBatch {
  const uint8_t* const* data;  // paragraph texts
  const size_t* len;
  size_t paragraphs;
  const uint32_t* doc_start;  // document d = paragraphs [doc_start[d], doc_start[d+1]); size docs + 1
  size_t docs;
};

struct ParagraphBatchResult {
  std::vector<uint8_t> dup;          // per paragraph
  std::vector<uint8_t> doc_removed;  // per document
  std::vector<uint32_t> tokens;      // per paragraph
};

Status DedupParagraphs(Deduper* d, const ParagraphBatch& b, size_t slots, const std::atomic<bool>* stop,
                       ParagraphBatchResult* out);

}  // namespace filter
}  // namespace neardup
