// ExactDedup: exact and key dedup by a 128-bit hash of each document's (normalised) text (core/exact).
//   new ExactDedup({ normalize?, unit?, split?, lowercase?, stripPunctuation?, foldWhitespace?, memory?, tmp?,
//     indexOut? })   indexOut: keep what saveIndex needs
//   loadIndex(path) -> Promise<{ entries, documents, meta, hasIds }>   (before the first add)
//   add(texts, valid?) -> Promise<Uint32Array>: each document's representative (0xfffffffe: pending, once
//     the table has spilled; resolved by finish; 0xffffffff: found in the index)
//   finish() -> Promise<{ representative: Uint32Array, documents, duplicates, distinct, spilledBytes, runs,
//     tableBytes, indexMatched, indexMatches: { docs, indexDocs, ids? } }>
//   saveIndex(path, { meta, firstDoc, ids? }) -> Promise<void>   (after finish)
//   close()
// Calls on one object run in call order only if the caller waits for each (the TypeScript wrapper chains
// them); each holds the object's lock while it runs. close() is safe while work is pending.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct ExactDedupClass {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
