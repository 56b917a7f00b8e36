// Input documents for batch calls, read in place where possible.
//
// Accepted forms: an array whose items are strings or Uint8Arrays (Buffers), or a packed batch
// { data: Uint8Array, offsets: Uint32Array | BigUint64Array } where document i is
// data[offsets[i] .. offsets[i+1]). Strings are encoded to UTF-8 once on the JS thread (lone surrogates
// become U+FFFD, as Buffer.from does); byte inputs are not copied and are kept alive by references until
// the batch is settled.
#pragma once
#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "text/docs.h"

namespace neardup {
namespace binding {

class TextBatch {
 public:
  void Load(Napi::Env env, const Napi::Value& v, const char* what);
  size_t size() const { return ptrs_.size(); }
  const uint8_t* data(size_t i) const { return ptrs_[i]; }
  size_t length(size_t i) const { return lens_[i]; }
  uint64_t total_bytes() const { return total_; }
  // The batch as the core's document view (valid while this batch lives).
  Docs docs() const { return Docs{ptrs_.data(), lens_.data(), ptrs_.size()}; }

 private:
  void AddBytes(Napi::Env env, const Napi::Value& v, size_t index, const char* what);
  std::string owned_;
  std::vector<const uint8_t*> ptrs_;
  std::vector<size_t> lens_;
  std::vector<size_t> owned_at_;  // for string items: offset into owned_ (SIZE_MAX for byte items)
  std::vector<Napi::ObjectReference> refs_;
  uint64_t total_ = 0;
};

}  // namespace binding
}  // namespace neardup
