#include "hashes.h"

#include <cstring>
#include <vector>

#include "args.h"
#include "hash/crc32c.h"
#include "hash/digest.h"
#include "hash/fast64.h"
#include "hash/murmur3.h"
#include "texts.h"

namespace neardup {
namespace binding {
namespace {

Napi::Uint8Array BytesArg(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, std::string("Expected ") + what + " to be a Uint8Array (Buffer)");
  return v.As<Napi::Uint8Array>();
}

uint32_t Uint32Arg(Napi::Env env, const Napi::Value& v, const char* what, uint32_t max) {
  if (!v.IsNumber()) ThrowTypeError(env, std::string("Expected ") + what + " to be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= max) || static_cast<double>(static_cast<uint64_t>(d)) != d)
    ThrowRangeError(env, std::string(what) + " must be an integer from 0 to " + std::to_string(max));
  return static_cast<uint32_t>(d);
}

// hashBytes(kind, bytes, seed = 0)
Napi::Value HashBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object holder = Napi::Object::New(env);
  holder.Set("kind", info[0]);
  holder.Set("seed", info[2]);
  const int kind = GetEnum(holder, "kind", -1, {"fast64", "murmur3_32", "murmur3_128", "sha1", "md5"});
  if (kind < 0) ThrowTypeError(env, "Expected kind to be one of 'fast64', 'murmur3_32', 'murmur3_128', 'sha1', 'md5'");
  Napi::Uint8Array a = BytesArg(env, info[1], "bytes");
  const uint64_t seed = GetUint64(holder, "seed", 0);
  const uint8_t* p = a.Data();
  const size_t n = a.ByteLength();
  uint8_t out[20];
  size_t width = 0;
  auto le = [&](uint64_t v, size_t bytes, size_t at) {
    for (size_t i = 0; i < bytes; i++) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  switch (kind) {
    case 0: le(fast64::Hash(p, n, seed), 8, 0); width = 8; break;
    case 1: le(Murmur3_x86_32(p, n, static_cast<uint32_t>(seed)), 4, 0); width = 4; break;
    case 2: {
      uint64_t h[2];
      Murmur3_x64_128(p, n, static_cast<uint32_t>(seed), h);
      le(h[0], 8, 0);
      le(h[1], 8, 8);
      width = 16;
      break;
    }
    case 3: Sha1(p, n, out); width = 20; break;
    default: Md5(p, n, out); width = 16; break;
  }
  return Napi::Buffer<uint8_t>::Copy(env, out, width);
}

// murmur3MinSeq(keys, firstSeed, count): out[i] = min over keys of Murmur3_x86_32(key, firstSeed + i),
// 0xFFFFFFFF when there is no key.
Napi::Value MinSeq(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TextBatch keys;
  keys.Load(env, info[0], "keys");
  const uint32_t first = Uint32Arg(env, info[1], "firstSeed", UINT32_MAX);
  const uint32_t count = Uint32Arg(env, info[2], "count", 1u << 20);
  std::vector<uint32_t> out(count, UINT32_MAX);
  std::vector<uint32_t> mixed;
  for (size_t i = 0; i < keys.size(); i++) {
    mixed.resize(keys.length(i) / 4 + 1);
    Murmur3_x86_32_MinSeq(keys.data(i), keys.length(i), first, count, out.data(), mixed.data());
  }
  Napi::Uint32Array r = Napi::Uint32Array::New(env, count);
  if (count > 0) std::memcpy(r.Data(), out.data(), count * sizeof(uint32_t));
  return r;
}

// crc32c(bytes, crc = 0): CRC-32C of bytes continuing from crc (file checksums read in chunks).
Napi::Value Crc32cBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Uint8Array a = BytesArg(env, info[0], "bytes");
  const uint32_t init = info[1].IsUndefined() ? 0 : Uint32Arg(env, info[1], "crc", UINT32_MAX);
  return Napi::Number::New(env, Crc32c(a.Data(), a.ByteLength(), init));
}

}  // namespace

void Hashes::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("hashBytes", Napi::Function::New(env, HashBytes, "hashBytes"));
  exports.Set("murmur3MinSeq", Napi::Function::New(env, MinSeq, "murmur3MinSeq"));
  exports.Set("crc32c", Napi::Function::New(env, Crc32cBytes, "crc32c"));
}

}  // namespace binding
}  // namespace neardup
