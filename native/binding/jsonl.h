// The input layer's native half: parseJsonl(segments, { field, idField }) -> Promise<packed documents>
// (lines parsed on the pool: text/jsonl_batch.h), parseFieldPath(spec) -> string[], the ZstdDecoder and
// ZstdEncoder classes (streaming, on the libuv thread pool: io/zstd_stream.h) and zstdDecompressSync(bytes)
// (Parquet pages).
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct Jsonl {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
