#include "args.h"

#include <cmath>

namespace neardup {
namespace binding {

namespace {
Napi::Error WithCode(Napi::Error e, const char* code) {
  e.Value().Set("code", Napi::String::New(e.Env(), code));
  return e;
}
std::string TypeName(const Napi::Value& v) {
  switch (v.Type()) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_boolean: return "a boolean";
    case napi_number: return "a number";
    case napi_string: return "a string";
    case napi_symbol: return "a symbol";
    case napi_object: return v.IsArray() ? "an array" : "an object";
    case napi_function: return "a function";
    case napi_external: return "an external";
    case napi_bigint: return "a bigint";
  }
  return "an unknown value";
}
}  // namespace

void ThrowTypeError(Napi::Env env, const std::string& message) {
  throw WithCode(Napi::TypeError::New(env, message), "ERR_NEARDUP_INVALID_ARGUMENT");
}

void ThrowRangeError(Napi::Env env, const std::string& message) {
  throw WithCode(Napi::RangeError::New(env, message), "ERR_NEARDUP_INVALID_ARGUMENT");
}

Napi::Error CodedError(Napi::Env env, const std::string& code, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Value().Set("code", Napi::String::New(env, code));
  return e;
}

const std::string& CheckPath(Napi::Env env, const std::string& path, const std::string& what) {
  if (path.find('\0') == std::string::npos) return path;
  std::string shown;
  for (char c : path) {
    if (c == '\0') shown += "\\x00";
    else shown.push_back(c);
  }
  throw WithCode(Napi::TypeError::New(env, "The argument '" + what + "' must be a string without null bytes. Received '" +
                                               shown + "'"),
                 "ERR_INVALID_ARG_VALUE");
}

std::string PathArg(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsString()) ThrowTypeError(env, "Expected " + what + " to be a string");
  std::string path = v.As<Napi::String>().Utf8Value();
  CheckPath(env, path, what);
  return path;
}

std::vector<std::string> PathList(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsArray()) ThrowTypeError(env, "Expected " + what + " to be an array of strings");
  Napi::Array a = v.As<Napi::Array>();
  std::vector<std::string> out;
  out.reserve(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(PathArg(env, a.Get(i), what + "[" + std::to_string(i) + "]"));
  return out;
}

int FdArg(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsNumber()) ThrowTypeError(env, "Expected " + what + " to be a number");
  const double fd = v.As<Napi::Number>().DoubleValue();
  if (!(fd >= 0 && fd <= 2147483647.0) || std::floor(fd) != fd) ThrowRangeError(env, what + " must be a file descriptor");
  return static_cast<int>(fd);
}

Napi::Error StatusError(Napi::Env env, const Status& s) { return CodedError(env, CodeName(s.code()), s.message()); }

Napi::Object OptionsObject(Napi::Env env, const Napi::Value& v, const char* what) {
  if (v.IsUndefined()) return Napi::Object::New(env);
  if (!v.IsObject() || v.IsArray() || v.IsFunction())
    ThrowTypeError(env, std::string("Expected ") + what + " to be an object, got " + TypeName(v));
  return v.As<Napi::Object>();
}

bool GetBool(const Napi::Object& o, const char* key, bool def) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return def;
  if (!v.IsBoolean())
    ThrowTypeError(o.Env(), std::string("Expected option '") + key + "' to be a boolean, got " + TypeName(v));
  return v.As<Napi::Boolean>().Value();
}

uint32_t GetUint32(const Napi::Object& o, const char* key, uint32_t def, uint32_t min, uint32_t max) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return def;
  if (!v.IsNumber())
    ThrowTypeError(o.Env(), std::string("Expected option '") + key + "' to be a number, got " + TypeName(v));
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= min && d <= max) || std::floor(d) != d)
    ThrowRangeError(o.Env(), std::string("Option '") + key + "' must be an integer from " + std::to_string(min) +
                                 " to " + std::to_string(max) + ", got " + v.ToString().Utf8Value());
  return static_cast<uint32_t>(d);
}

uint64_t ToUint64(Napi::Env env, const Napi::Value& v, const std::string& what) {
  std::string subject = what;  // "option 'seed'" -> "Option 'seed' must ..."
  if (!subject.empty() && subject[0] >= 'a' && subject[0] <= 'z') subject[0] = static_cast<char>(subject[0] - 32);
  if (v.IsBigInt()) {
    bool lossless = false;
    const uint64_t x = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) ThrowRangeError(env, subject + " must be a bigint from 0 to 2^64-1");
    return x;
  }
  if (v.IsNumber()) {
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= 0 && d <= 9007199254740991.0) || std::floor(d) != d)
      ThrowRangeError(env, subject + " must be a non-negative safe integer or a bigint, got " + v.ToString().Utf8Value());
    return static_cast<uint64_t>(d);
  }
  ThrowTypeError(env, "Expected " + what + " to be a number or a bigint, got " + TypeName(v));
}

uint64_t GetUint64(const Napi::Object& o, const char* key, uint64_t def) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return def;
  return ToUint64(o.Env(), v, std::string("option '") + key + "'");
}

int GetEnum(const Napi::Object& o, const char* key, int def, std::initializer_list<const char*> names) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return def;
  std::string list;
  for (const char* n : names) list += (list.empty() ? "'" : ", '") + std::string(n) + "'";
  if (!v.IsString())
    ThrowTypeError(o.Env(), std::string("Expected option '") + key + "' to be one of " + list + ", got " + TypeName(v));
  const std::string s = v.As<Napi::String>().Utf8Value();
  int i = 0;
  for (const char* n : names) {
    if (s == n) return i;
    i++;
  }
  ThrowRangeError(o.Env(), std::string("Option '") + key + "' must be one of " + list + ", got '" + s + "'");
}

void ReadTextOptions(const Napi::Object& o, TextOptions* t, bool unicode_normalize) {
  t->unit = static_cast<TextUnit>(GetEnum(o, "unit", static_cast<int>(t->unit), {"char", "word"}));
  t->n = GetUint32(o, "n", t->n, 1, kMaxN);
  t->split = static_cast<WordSplit>(GetEnum(o, "split", static_cast<int>(t->split), {"whitespace", "nonword", "unicode"}));
  t->cjk = static_cast<ClusterUnit>(GetEnum(o, "cjk", static_cast<int>(t->cjk), {"chars", "bigrams"}));
  t->lowercase = GetBool(o, "lowercase", t->lowercase);
  t->strip_punct = GetBool(o, "stripPunctuation", t->strip_punct);
  t->fold_space = GetBool(o, "foldWhitespace", t->fold_space);
  t->short_text = static_cast<ShortText>(GetEnum(o, "short", static_cast<int>(t->short_text), {"whole", "none"}));
  if (unicode_normalize)
    t->normalize = static_cast<text::NormalForm>(
        GetEnum(o, "normalize", static_cast<int>(t->normalize), {"none", "nfc", "nfkc", "nfkc_casefold"}));
}

uint64_t GetCap(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsNumber()) ThrowTypeError(env, std::string("Expected ") + what + " to be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 9007199254740991.0) || std::floor(d) != d)
    ThrowRangeError(env, std::string(what) + " must be a non-negative integer");
  return static_cast<uint64_t>(d);
}

}  // namespace binding
}  // namespace neardup
