// Chunk similarity (native/core/chunks/index.h): ChunkIndex (an opened generation: top lists, documents,
// queries), ChunkBuilder (full runs), ChunkUpdater (incremental runs), the staged steps and chunkTexts.
#pragma once
#include <napi.h>

namespace neardup {
namespace binding {

struct ChunkIndexClass {
  static void Init(Napi::Env env, Napi::Object exports);
};

}  // namespace binding
}  // namespace neardup
