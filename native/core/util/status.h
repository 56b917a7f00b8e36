// Status values returned by the core. No exception crosses from the core into the binding for user
// input problems: functions that can fail on input return a Status (or carry one in their result).
#pragma once
#include <string>
#include <utility>

namespace neardup {

// Stable codes; the binding maps them to ERR_NEARDUP_* codes on the JavaScript side.
enum class Code {
  kOk = 0,
  kInvalidArgument,  // a value out of range or of the wrong shape
  kInvalidInput,     // malformed user data (bad UTF-8 when strict, bad JSON line, ...)
  kIo,               // open/read/write/rename failed
  kCorrupt,          // a file with a bad magic, version, length or checksum
  kUnsupported,      // a file from a newer format version, or a feature not built in
  kCancelled,        // work stopped because its owner was closed
  kInternal,
  kTooManyResults,  // a result larger than the caller's cap (max pairs / max results)
  kDuplicateKey,    // a key inserted twice (datasketch's ValueError)
  kKeyNotFound,     // a key removed that is not there (datasketch's KeyError)
};

const char* CodeName(Code c);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline const char* CodeName(Code c) {
  switch (c) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "ERR_NEARDUP_INVALID_ARGUMENT";
    case Code::kInvalidInput: return "ERR_NEARDUP_INVALID_INPUT";
    case Code::kIo: return "ERR_NEARDUP_IO";
    case Code::kCorrupt: return "ERR_NEARDUP_CORRUPT";
    case Code::kUnsupported: return "ERR_NEARDUP_UNSUPPORTED";
    case Code::kCancelled: return "ERR_NEARDUP_CANCELLED";
    case Code::kInternal: return "ERR_NEARDUP_INTERNAL";
    case Code::kTooManyResults: return "ERR_NEARDUP_TOO_MANY_RESULTS";
    case Code::kDuplicateKey: return "ERR_NEARDUP_DUPLICATE_KEY";
    case Code::kKeyNotFound: return "ERR_NEARDUP_KEY_NOT_FOUND";
  }
  return "ERR_NEARDUP_INTERNAL";
}

}  // namespace neardup
