// One JSONL line -> the text field (and an optional id field), with the acceptance of JavaScript's
// JSON.parse plus strict UTF-8: the whole line must be one JSON value (RFC 8259 grammar: whitespace is
// space, tab, CR, LF; no trailing commas, comments, NaN or single quotes), its bytes well-formed UTF-8
// (overlong forms, surrogates and code points above U+10FFFF are invalid), and it must be an object.
//
// Fields are found by path ("meta.content": the member "content" of the object member "meta"), as own
// members of the parsed object: a key that appears twice counts with its last value, as JSON.parse does
// (also along the path: a later "meta" replaces an earlier one). Keys are compared after unescaping.
// The text field must be a string; the id field a string or an integer (a JSON number without fraction or
// exponent, kept as written, so ids above 2^53 stay exact). The extracted strings are unescaped to UTF-8;
// an escaped unpaired surrogate (\uD800 alone) in an extracted string makes the line bad (it has no UTF-8
// form; JSON.parse would give a JavaScript string holding it), while elsewhere in the line it is accepted.
//
// The parser is iterative (an explicit stack: any nesting depth), allocates only when its scratch grows,
// and never reads past the line. A bad line gets a reason in the words of the JavaScript reader it
// replaces: "empty line", "invalid UTF-8 near byte N of the line", "not valid JSON (...)", "not a JSON
// object", "field 'F' is missing", "field 'F' is number, expected a string", ...
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace neardup {
namespace jsonl {

// A field path. ParseFieldPath("meta.content") = {"meta", "content"}; a dot inside a name is written "\."
// and a backslash "\\" ("a\.b" is the one key "a.b"). `name` is the path as given, for messages.
struct FieldPath {
  std::vector<std::string> parts;
  std::string name;
};
// InvalidArgument for an empty path, an empty part ("a..b", ".a"), or a backslash before anything but '.'
// or '\'.
Status ParseFieldPath(const std::string& spec, FieldPath* out);

enum class IdKind : uint8_t { kNone = 0, kString = 1, kInteger = 2 };

class LineParser {
 public:
  // `id` may be null (no id field). Both paths must outlive the parser.
  LineParser(const FieldPath* text, const FieldPath* id);

  // Parses one line (its bytes without the '\n'; a trailing '\r' is whitespace). On success appends the
  // text field's UTF-8 to *text and, with an id path, the id (a string's UTF-8, or an integer's digits as
  // written) to *id, sets *kind, and returns true. A bad line appends nothing, sets *reason, returns false.
  bool Parse(const uint8_t* p, size_t n, std::string* text, std::string* id, IdKind* kind, std::string* reason);

 private:
  struct Frame {
    bool object;
    int16_t depth[2];  // per field: path parts matched by this container (-1: not on the path)
  };
  // What a field's search found so far.
  enum class Found : uint8_t { kMissing, kString, kInteger, kOther, kNotObject };
  struct FieldState {
    Found found = Found::kMissing;
    const char* type = "";     // kOther / kNotObject: the JSON type met
    size_t at = 0;             // kNotObject: the path part whose value was not an object
    size_t mark = 0;           // output size before this field's value was appended
  };

  bool Fail(std::string* reason, const uint8_t* p, size_t n, size_t at, const char* what);
  // Scans a string starting after its opening quote at *i; with `out`, appends its unescaped UTF-8. Returns
  // false on a syntax or UTF-8 error (*err_at, *err set) or an unpaired surrogate (when decoding: *lone set).
  bool String(const uint8_t* p, size_t n, size_t* i, std::string* out, bool* has_escape, bool* lone,
              size_t* err_at, const char** err);
  bool KeyEquals(const uint8_t* p, size_t begin, size_t end, bool escaped, const std::string& want);

  const FieldPath* paths_[2];
  size_t nfields_;
  std::vector<Frame> stack_;
  std::string key_;
};

// The first position in [p, p + n) holding '"', '\\', a control byte (< 0x20) or a non-ASCII byte (>= 0x80);
// n when there is none. AVX2 when the CPU has it.
size_t FindStringSpecial(const uint8_t* p, size_t n);

}  // namespace jsonl
}  // namespace neardup
