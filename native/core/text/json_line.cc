#include "text/json_line.h"

#include <cstdio>
#include <cstring>

#include "text/utf8.h"
#include "util/cpu.h"

#if NEARDUP_X86_DISPATCH
#include <immintrin.h>
#endif

namespace neardup {
namespace jsonl {

Status ParseFieldPath(const std::string& spec, FieldPath* out) {
  out->parts.clear();
  out->name = spec;
  std::string cur;
  for (size_t i = 0; i < spec.size(); i++) {
    const char c = spec[i];
    if (c == '\\') {
      if (i + 1 < spec.size() && (spec[i + 1] == '.' || spec[i + 1] == '\\')) {
        cur += spec[++i];
        continue;
      }
      return Status(Code::kInvalidArgument, "field '" + spec + "': a backslash escapes only '.' or '\\' (\\. is a dot in a name)");
    }
    if (c == '.') {
      if (cur.empty()) return Status(Code::kInvalidArgument, "field '" + spec + "' has an empty name between dots");
      out->parts.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (cur.empty()) return Status(Code::kInvalidArgument, spec.empty() ? "the field name is empty" : "field '" + spec + "' ends with an empty name");
  out->parts.push_back(std::move(cur));
  if (out->parts.size() > 1000) return Status(Code::kInvalidArgument, "field '" + spec.substr(0, 40) + "...' has more than 1000 parts");
  return Status::Ok();
}

namespace {

inline bool IsWs(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
inline bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }

size_t FindSpecialPortable(const uint8_t* p, size_t n) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, p + i, 8);
    const uint64_t q = x ^ (kOnes * '"'), b = x ^ (kOnes * '\\');
    // any byte equal to '"' or '\\', below 0x20, or with the high bit: then locate it byte by byte
    const uint64_t hit = ((q - kOnes) & ~q) | ((b - kOnes) & ~b) | ((x - kOnes * 0x20) & ~x) | x;
    if (hit & kHigh) break;
  }
  for (; i < n; i++) {
    const uint8_t c = p[i];
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return i;
  }
  return n;
}

#if NEARDUP_X86_DISPATCH
NEARDUP_TARGET_AVX2 size_t FindSpecialAvx2(const uint8_t* p, size_t n) {
  const __m256i quote = _mm256_set1_epi8('"'), slash = _mm256_set1_epi8('\\'), space = _mm256_set1_epi8(0x20);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    // signed compare: 0x20 > v holds for 0x00..0x1F and for every byte >= 0x80 (negative)
    const __m256i m = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, slash)),
                                      _mm256_cmpgt_epi8(space, v));
    const uint32_t bits = static_cast<uint32_t>(_mm256_movemask_epi8(m));
    if (bits != 0) return i + static_cast<size_t>(__builtin_ctz(bits));
  }
  return i + FindSpecialPortable(p + i, n - i);
}
#endif

using FindFn = size_t (*)(const uint8_t*, size_t);

FindFn ChooseFind() {
#if NEARDUP_X86_DISPATCH
  if (Cpu().avx2) return FindSpecialAvx2;
#endif
  return FindSpecialPortable;
}

inline int Hex(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at p[i..i+4) (i + 4 <= n checked by the caller); -1 when one is not a hex digit.
inline int32_t Hex4(const uint8_t* p) {
  const int a = Hex(p[0]), b = Hex(p[1]), c = Hex(p[2]), d = Hex(p[3]);
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

// Length of the JSON number at p[0..n) (0 when none starts there); *integer: no fraction, no exponent.
size_t NumberLength(const uint8_t* p, size_t n, bool* integer) {
  size_t i = 0;
  *integer = true;
  if (i < n && p[i] == '-') i++;
  if (i >= n || !IsDigit(p[i])) return 0;
  if (p[i] == '0') {
    i++;
  } else {
    while (i < n && IsDigit(p[i])) i++;
  }
  if (i < n && p[i] == '.') {
    *integer = false;
    i++;
    if (i >= n || !IsDigit(p[i])) return 0;
    while (i < n && IsDigit(p[i])) i++;
  }
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    *integer = false;
    i++;
    if (i < n && (p[i] == '+' || p[i] == '-')) i++;
    if (i >= n || !IsDigit(p[i])) return 0;
    while (i < n && IsDigit(p[i])) i++;
  }
  return i;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace

size_t FindStringSpecial(const uint8_t* p, size_t n) {
  static const FindFn fn = ChooseFind();
  return fn(p, n);
}

LineParser::LineParser(const FieldPath* text, const FieldPath* id) : paths_{text, id}, nfields_(id ? 2 : 1) {}

bool LineParser::Fail(std::string* reason, const uint8_t* p, size_t n, size_t at, const char* what) {
  // Invalid UTF-8 anywhere in the line is the reason, wherever the JSON went wrong (the JavaScript
  // reader checked the encoding first).
  const size_t bad = utf8::FirstInvalid(p, n);
  if (bad < n) {
    *reason = "invalid UTF-8 near byte " + std::to_string(bad) + " of the line";
    return false;
  }
  std::string w = what;
  if (w.empty()) {
    if (at >= n) {
      w = "unexpected end of the line";
    } else {
      const uint8_t c = p[at];
      char buf[48];
      if (c >= 0x21 && c < 0x7F)
        std::snprintf(buf, sizeof buf, "unexpected '%c'", static_cast<char>(c));
      else
        std::snprintf(buf, sizeof buf, "unexpected byte 0x%02X", c);
      w = buf;
    }
  }
  if (at < n) w += " at byte " + std::to_string(at);
  *reason = "not valid JSON (" + w + ")";
  return false;
}

bool LineParser::String(const uint8_t* p, size_t n, size_t* i, std::string* out, bool* has_escape, bool* lone,
                        size_t* err_at, const char** err) {
  size_t j = *i;
  for (;;) {
    size_t k = j + FindStringSpecial(p + j, n - j);
    if (out != nullptr && k > j) out->append(reinterpret_cast<const char*>(p + j), k - j);
    if (k >= n) {
      *err_at = n;
      *err = "unterminated string";
      return false;
    }
    const uint8_t c = p[k];
    if (c == '"') {
      *i = k + 1;
      return true;
    }
    if (c == '\\') {
      *has_escape = true;
      if (k + 1 >= n) {
        *err_at = n;
        *err = "unterminated string";
        return false;
      }
      char ch = 0;
      switch (p[k + 1]) {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': break;
        default:
          *err_at = k;
          *err = "bad escape";
          return false;
      }
      if (ch != 0) {
        if (out != nullptr) out->push_back(ch);
        j = k + 2;
        continue;
      }
      const int32_t u = k + 6 <= n ? Hex4(p + k + 2) : -1;
      if (u < 0) {
        *err_at = k;
        *err = "bad \\u escape";
        return false;
      }
      uint32_t cp = static_cast<uint32_t>(u);
      j = k + 6;
      if (cp >= 0xD800 && cp <= 0xDBFF && j + 6 <= n && p[j] == '\\' && p[j + 1] == 'u') {
        const int32_t lo = Hex4(p + j + 2);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(lo) - 0xDC00);
          j += 6;
        }
      }
      if (cp >= 0xD800 && cp <= 0xDFFF) {
        // valid JSON (JSON.parse keeps it in a JavaScript string), but no UTF-8 form
        *lone = true;
        continue;
      }
      if (out != nullptr) {
        uint8_t buf[4];
        out->append(reinterpret_cast<const char*>(buf), utf8::Encode(cp, buf));
      }
      continue;
    }
    if (c < 0x20) {
      *err_at = k;
      *err = "bad control character in a string";
      return false;
    }
    // a run of non-ASCII characters, each checked
    const size_t start = k;
    while (k < n && p[k] >= 0x80) {
      uint32_t cp;
      bool valid;
      const size_t len = utf8::Decode(p + k, p + n, &cp, &valid);
      if (!valid) {
        *err_at = k;
        *err = "invalid UTF-8";
        return false;
      }
      k += len;
    }
    if (out != nullptr) out->append(reinterpret_cast<const char*>(p + start), k - start);
    j = k;
  }
}

bool LineParser::KeyEquals(const uint8_t* p, size_t begin, size_t end, bool escaped, const std::string& want) {
  if (!escaped) return end - begin == want.size() && std::memcmp(p + begin, want.data(), want.size()) == 0;
  key_.clear();
  size_t i = begin;
  bool esc = false, lone = false;
  size_t err_at;
  const char* err;
  // the key was scanned already: this only unescapes it (its closing quote is at `end`)
  if (!String(p, end + 1, &i, &key_, &esc, &lone, &err_at, &err)) return false;
  return !lone && key_ == want;
}

bool LineParser::Parse(const uint8_t* p, size_t n, std::string* text, std::string* id, IdKind* kind,
                       std::string* reason) {
  if (n == 0 || (n == 1 && p[0] == '\r')) {
    *reason = "empty line";
    return false;
  }
  std::string* outs[2] = {text, id};
  FieldState st[2];
  st[0].mark = text->size();
  if (nfields_ > 1) st[1].mark = id->size();
  bool lone[2] = {false, false};
  // Path depth the next value sits at for each field: the number of path parts matched by the keys leading
  // to it (-1: off the path). The top-level value is the root (0 parts matched).
  int next[2] = {0, 0};
  const auto reset = [&](size_t f) {
    st[f].found = Found::kMissing;
    outs[f]->resize(st[f].mark);
    lone[f] = false;
  };
  const auto fail = [&](size_t at, const char* what) {
    for (size_t f = 0; f < nfields_; f++) outs[f]->resize(st[f].mark);
    return Fail(reason, p, n, at, what);
  };
  const auto target = [&](size_t f) { return next[f] >= 0 && static_cast<size_t>(next[f]) == paths_[f]->parts.size(); };
  // A non-object value met at `next`: the field's value when it is the target, else a path part that is
  // not an object.
  const auto other = [&](const char* type) {
    for (size_t f = 0; f < nfields_; f++) {
      if (next[f] <= 0) continue;  // off the path, or the root (reported as "not a JSON object")
      st[f].type = type;
      if (target(f)) {
        st[f].found = Found::kOther;
      } else {
        st[f].found = Found::kNotObject;
        st[f].at = static_cast<size_t>(next[f]) - 1;
      }
    }
  };

  enum State { kValue, kArrayFirst, kObjectFirst, kObjectKey, kAfterValue };
  stack_.clear();
  State state = kValue;
  bool root_object = false;
  size_t i = 0;
  for (;;) {
    while (i < n && IsWs(p[i])) i++;
    switch (state) {
      case kArrayFirst:
        if (i < n && p[i] == ']') {
          stack_.pop_back();
          i++;
          state = kAfterValue;
          break;
        }
        [[fallthrough]];
      case kValue: {
        if (i >= n) return fail(n, "");
        const uint8_t c = p[i];
        if (stack_.empty()) root_object = c == '{';
        if (c == '{') {
          Frame fr{true, {-1, -1}};
          for (size_t f = 0; f < nfields_; f++) {
            if (next[f] < 0) continue;
            if (target(f)) {
              st[f].found = Found::kOther;
              st[f].type = "object";
            } else {
              fr.depth[f] = static_cast<int16_t>(next[f]);
            }
          }
          stack_.push_back(fr);
          i++;
          state = kObjectFirst;
        } else if (c == '[') {
          other("object");  // typeof [] === 'object'
          stack_.push_back(Frame{false, {-1, -1}});
          next[0] = next[1] = -1;
          i++;
          state = kArrayFirst;
        } else if (c == '"') {
          i++;
          bool esc = false;
          size_t err_at = 0;
          const char* err = "";
          // decoded into the first field that wants this string; a second one gets a copy
          int into = -1;
          for (size_t f = 0; f < nfields_; f++) {
            if (next[f] > 0 && !target(f)) {
              st[f].found = Found::kNotObject;
              st[f].type = "string";
              st[f].at = static_cast<size_t>(next[f]) - 1;
            }
            if (target(f) && into < 0) into = static_cast<int>(f);
          }
          bool lone_here = false;
          if (!String(p, n, &i, into >= 0 ? outs[into] : nullptr, &esc, &lone_here, &err_at, &err)) return fail(err_at, err);
          for (size_t f = 0; f < nfields_; f++) {
            if (!target(f)) continue;
            st[f].found = Found::kString;
            lone[f] = lone_here;
            if (static_cast<int>(f) != into) outs[f]->append(*outs[into], st[into].mark, std::string::npos);
          }
          state = kAfterValue;
        } else if (c == '-' || IsDigit(c)) {
          bool integer;
          const size_t len = NumberLength(p + i, n - i, &integer);
          if (len == 0) return fail(i + (c == '-' ? 1 : 0), "");
          other("number");
          if (nfields_ > 1 && target(1) && integer) {
            st[1].found = Found::kInteger;
            id->append(reinterpret_cast<const char*>(p + i), len);
          }
          i += len;
          state = kAfterValue;
        } else if (c == 't' || c == 'f' || c == 'n') {
          const char* lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
          const size_t len = std::strlen(lit);
          size_t k = 0;
          while (k < len && i + k < n && p[i + k] == static_cast<uint8_t>(lit[k])) k++;
          if (k < len) return fail(i + k, "");
          other(c == 'n' ? "null" : "boolean");
          i += len;
          state = kAfterValue;
        } else {
          return fail(i, "");
        }
        break;
      }
      case kObjectFirst:
        if (i < n && p[i] == '}') {
          stack_.pop_back();
          i++;
          state = kAfterValue;
          break;
        }
        [[fallthrough]];
      case kObjectKey: {
        if (i >= n) return fail(n, "");
        if (p[i] != '"') return fail(i, "");
        const size_t begin = ++i;
        bool esc = false, lone_key = false;
        size_t err_at = 0;
        const char* err = "";
        if (!String(p, n, &i, nullptr, &esc, &lone_key, &err_at, &err)) return fail(err_at, err);
        const Frame& fr = stack_.back();
        for (size_t f = 0; f < nfields_; f++) {
          const int d = fr.depth[f];
          next[f] = d >= 0 && KeyEquals(p, begin, i - 1, esc, paths_[f]->parts[static_cast<size_t>(d)]) ? d + 1 : -1;
          // a repeated key: its last value counts (JSON.parse), so what an earlier one gave is dropped
          if (next[f] >= 0) reset(f);
        }
        while (i < n && IsWs(p[i])) i++;
        if (i >= n || p[i] != ':') return fail(i, "");
        i++;
        state = kValue;
        break;
      }
      case kAfterValue: {
        if (stack_.empty()) {
          if (i < n) return fail(i, "");
          goto done;
        }
        if (i >= n) return fail(n, "");
        const bool object = stack_.back().object;
        const uint8_t c = p[i];
        if (c == ',') {
          i++;
          state = object ? kObjectKey : kValue;
          next[0] = next[1] = -1;
        } else if (c == (object ? '}' : ']')) {
          stack_.pop_back();
          i++;
        } else {
          return fail(i, "");
        }
        break;
      }
    }
  }
done:
  const auto bad = [&](std::string r) {
    for (size_t f = 0; f < nfields_; f++) outs[f]->resize(st[f].mark);
    *reason = std::move(r);
    return false;
  };
  if (!root_object) return bad("not a JSON object");
  for (size_t f = 0; f < nfields_; f++) {
    const FieldPath& path = *paths_[f];
    const std::string name = Quote(path.name);
    const char* expected = f == 0 ? "expected a string" : "expected a string or an integer";
    switch (st[f].found) {
      case Found::kString:
        if (lone[f]) return bad("field " + name + " holds an unpaired surrogate (\\uD800-\\uDFFF escape), which has no UTF-8 form");
        break;
      case Found::kInteger:
        break;
      case Found::kMissing:
        return bad("field " + name + " is missing");
      case Found::kOther:
        if (f == 1 && std::strcmp(st[f].type, "number") == 0)
          return bad("field " + name + " is a number with a fraction or an exponent, " + expected);
        return bad("field " + name + " is " + st[f].type + ", " + expected);
      case Found::kNotObject: {
        std::string part;
        for (size_t k = 0; k <= st[f].at; k++) part += (k ? "." : "") + path.parts[k];
        const std::string type = st[f].type;
        const std::string noun = type == "object" ? "an array" : type == "null" ? "null" : "a " + type;
        return bad("field " + name + " is missing (" + Quote(part) + " is " + noun + ", not an object)");
      }
    }
  }
  if (nfields_ > 1) *kind = st[1].found == Found::kInteger ? IdKind::kInteger : IdKind::kString;
  return true;
}

}  // namespace jsonl
}  // namespace neardup
