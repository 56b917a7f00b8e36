#include "texts.h"

#include <cstdint>
#include <limits>

#include "args.h"

namespace neardup {
namespace binding {

namespace {
constexpr size_t kMaxDoc = std::numeric_limits<uint32_t>::max() - 16;
}

void TextBatch::AddBytes(Napi::Env env, const Napi::Value& v, size_t index, const char* what) {
  Napi::Uint8Array a = v.As<Napi::Uint8Array>();
  if (a.ByteLength() > kMaxDoc)
    ThrowRangeError(env, std::string(what) + "[" + std::to_string(index) + "] is larger than 4 GiB");
  ptrs_.push_back(static_cast<const uint8_t*>(a.ArrayBuffer().Data()) + a.ByteOffset());
  lens_.push_back(a.ByteLength());
  owned_at_.push_back(SIZE_MAX);
  refs_.push_back(Napi::Persistent(a.As<Napi::Object>()));
  total_ += a.ByteLength();
}

void TextBatch::Load(Napi::Env env, const Napi::Value& v, const char* what) {
  if (v.IsArray()) {
    Napi::Array arr = v.As<Napi::Array>();
    const uint32_t n = arr.Length();
    ptrs_.reserve(n);
    lens_.reserve(n);
    owned_at_.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
      Napi::Value item = arr.Get(i);
      if (item.IsString()) {
        size_t len = 0;
        napi_get_value_string_utf8(env, item, nullptr, 0, &len);
        if (len > kMaxDoc)
          ThrowRangeError(env, std::string(what) + "[" + std::to_string(i) + "] is larger than 4 GiB");
        const size_t at = owned_.size();
        owned_.resize(at + len + 1);
        size_t written = 0;
        napi_get_value_string_utf8(env, item, &owned_[at], len + 1, &written);
        owned_.resize(at + written);
        ptrs_.push_back(nullptr);
        lens_.push_back(written);
        owned_at_.push_back(at);
        total_ += written;
      } else if (item.IsTypedArray() && item.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
        AddBytes(env, item, i, what);
      } else {
        ThrowTypeError(env, std::string("Expected ") + what + "[" + std::to_string(i) +
                                "] to be a string or a Uint8Array (Buffer)");
      }
    }
    for (size_t i = 0; i < ptrs_.size(); i++)
      if (owned_at_[i] != SIZE_MAX) ptrs_[i] = reinterpret_cast<const uint8_t*>(owned_.data()) + owned_at_[i];
    return;
  }
  if (v.IsObject() && !v.IsTypedArray()) {
    Napi::Object o = v.As<Napi::Object>();
    Napi::Value data = o.Get("data"), offsets = o.Get("offsets");
    if (!data.IsTypedArray() || data.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      ThrowTypeError(env, std::string("Expected ") + what + ".data to be a Uint8Array (Buffer)");
    Napi::Uint8Array d = data.As<Napi::Uint8Array>();
    const uint8_t* base = static_cast<const uint8_t*>(d.ArrayBuffer().Data()) + d.ByteOffset();
    const uint64_t size = d.ByteLength();
    if (!offsets.IsTypedArray())
      ThrowTypeError(env, std::string("Expected ") + what + ".offsets to be a Uint32Array or BigUint64Array");
    Napi::TypedArray t = offsets.As<Napi::TypedArray>();
    const size_t count = t.ElementLength();
    if (count == 0) ThrowRangeError(env, std::string(what) + ".offsets must have at least one element");
    auto at = [&](size_t i) -> uint64_t {
      const uint8_t* p = static_cast<const uint8_t*>(t.ArrayBuffer().Data()) + t.ByteOffset();
      if (t.TypedArrayType() == napi_uint32_array) return reinterpret_cast<const uint32_t*>(p)[i];
      return reinterpret_cast<const uint64_t*>(p)[i];
    };
    if (t.TypedArrayType() != napi_uint32_array && t.TypedArrayType() != napi_biguint64_array)
      ThrowTypeError(env, std::string("Expected ") + what + ".offsets to be a Uint32Array or BigUint64Array");
    ptrs_.reserve(count - 1);
    lens_.reserve(count - 1);
    for (size_t i = 0; i + 1 < count; i++) {
      const uint64_t b = at(i), e = at(i + 1);
      if (b > e || e > size)
        ThrowRangeError(env, std::string(what) + ".offsets must be non-decreasing and at most data.length (index " +
                                 std::to_string(i + 1) + ")");
      if (e - b > kMaxDoc)
        ThrowRangeError(env, std::string(what) + " document " + std::to_string(i) + " is larger than 4 GiB");
      ptrs_.push_back(base + b);
      lens_.push_back(static_cast<size_t>(e - b));
      total_ += e - b;
    }
    refs_.push_back(Napi::Persistent(d.As<Napi::Object>()));
    refs_.push_back(Napi::Persistent(t.As<Napi::Object>()));
    return;
  }
  ThrowTypeError(env, std::string("Expected ") + what +
                          " to be an array of strings or Buffers, or { data, offsets }");
}

}  // namespace binding
}  // namespace neardup
