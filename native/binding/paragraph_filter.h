// ParagraphFilter: a streaming paragraph deduplicator (Onion semantics) holding its seen-set.
//   new ParagraphFilter(options)
//   pushVertical(chunk, final) -> Promise<{ flags: Uint8Array, text?: Buffer }>
//   pushParagraphs(texts, docOffsets) -> Promise<{ dup, docRemoved, tokens }>
//   saveSeen(path) -> Promise<void>, loadSeen(path) -> Promise<{ kind, n }>
//   stats() -> object, close()
// Work on one filter runs in call order (each call holds the filter's lock while it runs; the TypeScript
// wrapper chains calls). close() is safe while work is pending: workers hold the state by shared_ptr and
// the state is freed when the last one finishes; calls after close() reject with ERR_NEARDUP_CLOSED.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct ParagraphFilter {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
