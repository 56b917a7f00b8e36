// minhash(texts, options) -> Promise<{ signatures: Uint32Array, numPerm, count, invalidUtf8Docs }>,
// minhashSync, minhashShinglesSync (signatures of given shingle sets), datasketchPermutations(seed, k), and
// the SignatureWriter class (streamed signature files: neardup "MHSG" or doubri ".hash").
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct MinHash {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
