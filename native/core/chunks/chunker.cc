#include "chunks/chunker.h"

#include <algorithm>

namespace neardup {
namespace chunks {

Status ValidateChunkOptions(const ChunkOptions& o) {
  Status s = ValidateTextOptions(o.text);
  if (!s.ok()) return s;
  if (o.text.unit != TextUnit::kWord) return Status(Code::kInvalidArgument, "chunks are sequences of words (unit 'word')");
  if (!(o.bits == 64 || (o.bits >= 28 && o.bits <= 32)))
    return Status(Code::kInvalidArgument, "bits must be from 28 to 32, or 64, got " + std::to_string(o.bits));
  return Status::Ok();
}

void Chunker::Run(const uint8_t* text, size_t len, std::vector<uint64_t>* out) {
  sh_.Reset(text, len);
  out->resize(sh_.size());
  const size_t n = WriteShingleHashes<uint64_t>(sh_, ShingleHash::kFast64, o_.seed, false, nullptr, out->data());
  out->resize(n);
  if (o_.bits < 64)
    for (auto& h : *out) h = ChunkIdOf(h, o_.bits);
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

}  // namespace chunks
}  // namespace neardup
