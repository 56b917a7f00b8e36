// DecontamIndex: the benchmark n-gram index of `neardup decontaminate` (core: filter/decontam.h).
//   new DecontamIndex({ n, minTokens, approx, fpRate })
//   add(texts, rows: Uint32Array) -> Promise<void>     benchmark texts, text i of row rows[i]
//   seal() -> Promise<void>                            builds the table; then only probe
//   probe(texts, { valid?, maxRows, maxSamples }) -> Promise<{ tokens, ngrams, matched, shortFound, covered,
//         rowsTotal, rowStart, rows, sampleStart, sampleOffsets, sampleText }>
//   stats() -> { keys, texts, memoryBytes, shortLengths, fpBound, sealed }, close()
// add and seal take the index's lock exclusively, probes share it (several may run at once). close() is safe
// while work is pending (workers hold the state); calls after it reject with ERR_NEARDUP_CLOSED.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct DecontamIndexClass {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
