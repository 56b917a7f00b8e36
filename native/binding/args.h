// Argument validation for the binding: TypeError for a wrong type, RangeError for a value out of range,
// each with a message that names the argument and a stable `code`. Nothing here does real work.
#pragma once
#include <napi.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "text/shingle.h"
#include "util/status.h"

namespace neardup {
namespace binding {

[[noreturn]] void ThrowTypeError(Napi::Env env, const std::string& message);
[[noreturn]] void ThrowRangeError(Napi::Env env, const std::string& message);
// A runtime failure from the core (I/O, corrupt file, ...) as an Error with the status code.
Napi::Error StatusError(Napi::Env env, const Status& s);
Napi::Error CodedError(Napi::Env env, const std::string& code, const std::string& message);
// A file path argument: throws a TypeError with code ERR_INVALID_ARG_VALUE (as Node's fs does) when it holds
// a NUL byte, which would otherwise silently truncate the path at the system call. Returns `path`.
const std::string& CheckPath(Napi::Env env, const std::string& path, const std::string& what);
// A path argument: a string (TypeError otherwise) without NUL bytes (CheckPath).
std::string PathArg(Napi::Env env, const Napi::Value& v, const std::string& what);
// An array of paths (each checked as PathArg, named what[i]).
std::vector<std::string> PathList(Napi::Env env, const Napi::Value& v, const std::string& what);
// A file descriptor from fs.open: an integer in [0, 2^31).
int FdArg(Napi::Env env, const Napi::Value& v, const std::string& what);

// Options objects: `undefined` means "all defaults"; anything else must be a plain object.
Napi::Object OptionsObject(Napi::Env env, const Napi::Value& v, const char* what);

bool GetBool(const Napi::Object& o, const char* key, bool def);
uint32_t GetUint32(const Napi::Object& o, const char* key, uint32_t def, uint32_t min, uint32_t max);
// A 64-bit unsigned value given as a bigint or a non-negative safe integer.
uint64_t GetUint64(const Napi::Object& o, const char* key, uint64_t def);
// A value given as a bigint or a non-negative safe integer, as u64; `what` names it in errors.
uint64_t ToUint64(Napi::Env env, const Napi::Value& v, const std::string& what);
// A result cap (maxPairs, maxResults, chunkPairs): a non-negative safe integer; `what` names it in errors. A
// result beyond a cap fails with ERR_NEARDUP_TOO_MANY_RESULTS (Code::kTooManyResults).
uint64_t GetCap(Napi::Env env, const Napi::Value& v, const char* what);
// One of `names`; returns its index.
int GetEnum(const Napi::Object& o, const char* key, int def, std::initializer_list<const char*> names);

// The shingle options every engine takes (unit, n, split, lowercase, stripPunctuation, foldWhitespace,
// short, normalize: 'none'|'nfc'|'nfkc'|'nfkc_casefold'), read over the defaults already in *t (each engine or
// profile has its own). unicode_normalize false: "normalize" is not read (exact's options use the name for
// their own flag).
void ReadTextOptions(const Napi::Object& o, TextOptions* t, bool unicode_normalize = true);

}  // namespace binding
}  // namespace neardup
