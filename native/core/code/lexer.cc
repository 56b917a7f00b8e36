#include "code/lexer.h"

#include <array>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "hash/fast64.h"

namespace neardup {
namespace code {
namespace {

const char* const kNames[kLangCount] = {"c", "cpp", "csharp", "java", "javascript", "typescript", "go", "rust", "python"};

const char kKwC[] =
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "_Bool _Complex _Atomic _Static_assert _Noreturn _Thread_local _Alignas _Alignof _Generic bool true false";
const char kKwCpp[] =
    "alignas alignof and and_eq asm bitand bitor catch char8_t char16_t char32_t class co_await co_return "
    "co_yield compl concept consteval constexpr constinit const_cast decltype delete dynamic_cast explicit export "
    "friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public "
    "reinterpret_cast requires static_assert static_cast template this thread_local throw try typeid typename "
    "using virtual wchar_t xor xor_eq override final";
const char kKwJava[] =
    "abstract assert boolean break byte case catch char class const continue default do double else enum extends "
    "final finally float for goto if implements import instanceof int interface long native new package private "
    "protected public return short static strictfp super switch synchronized this throw throws transient try void "
    "volatile while true false null var record yield sealed permits";
const char kKwCSharp[] =
    "abstract as base bool break byte case catch char checked class const continue decimal default delegate do "
    "double else enum event explicit extern false finally fixed float for foreach goto if implicit in int interface "
    "internal is lock long namespace new null object operator out override params private protected public readonly "
    "ref return sbyte sealed short sizeof stackalloc static string struct switch this throw true try typeof uint "
    "ulong unchecked unsafe ushort using virtual void volatile while var async await get set yield record init";
const char kKwJs[] =
    "break case catch class const continue debugger default delete do else export extends false finally for "
    "function if import in instanceof new null return super switch this throw true try typeof var void while with "
    "yield let static async await of";
const char kKwTs[] =
    "abstract any as asserts bigint boolean declare enum implements infer interface is keyof module namespace never "
    "number object private protected public readonly string symbol type unique unknown satisfies override";
const char kKwGo[] =
    "break case chan const continue default defer else fallthrough for func go goto if import interface map package "
    "range return select struct switch type var true false nil";
const char kKwRust[] =
    "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move "
    "mut pub ref return self Self static struct super trait true type unsafe use where while";
const char kKwPython[] =
    "False None True and as assert async await break class continue def del elif else except finally for from "
    "global if import in is lambda nonlocal not or pass raise return try while with yield";

using Set = std::unordered_set<std::string_view>;

void AddWords(const char* list, Set* s) {
  const char* p = list;
  while (*p) {
    while (*p == ' ') p++;
    const char* q = p;
    while (*q && *q != ' ') q++;
    if (q > p) s->insert(std::string_view(p, size_t(q - p)));
    p = q;
  }
}

const Set& Keywords(Lang l) {
  static const std::array<Set, kLangCount> sets = [] {
    std::array<Set, kLangCount> a;
    AddWords(kKwC, &a[int(Lang::kC)]);
    AddWords(kKwC, &a[int(Lang::kCpp)]);
    AddWords(kKwCpp, &a[int(Lang::kCpp)]);
    AddWords(kKwCSharp, &a[int(Lang::kCSharp)]);
    AddWords(kKwJava, &a[int(Lang::kJava)]);
    AddWords(kKwJs, &a[int(Lang::kJavaScript)]);
    AddWords(kKwJs, &a[int(Lang::kTypeScript)]);
    AddWords(kKwTs, &a[int(Lang::kTypeScript)]);
    AddWords(kKwGo, &a[int(Lang::kGo)]);
    AddWords(kKwRust, &a[int(Lang::kRust)]);
    AddWords(kKwPython, &a[int(Lang::kPython)]);
    return a;
  }();
  return sets[int(l)];
}

// Operators, longest first within each first byte (tried in order; the first that matches wins).
const char* const kOps[] = {
    ">>>=", "<<=", ">>=", ">>>", "===", "!==", "**=", "//=", "...", "<=>", "->*", "&&=", "||=", "?" "?=", "&^=",
    "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "=>", "??", "?.", ":=", "**", "//", "..", "<-", "&^", "@=", ".*",
};

inline bool IdentStart(uint8_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80; }
inline bool IdentPart(uint8_t c) { return IdentStart(c) || (c >= '0' && c <= '9'); }
inline bool Digit(uint8_t c) { return c >= '0' && c <= '9'; }

uint32_t HashValue(Kind kind, const uint8_t* p, size_t n) {
  uint32_t v = uint32_t(fast64::Hash(p, n, 0x636f6465u + uint64_t(kind))) & kValueMask;
  return v < 16 ? v + 16 : v;  // never one of the symbols
}

class Lexer {
 public:
  Lexer(const uint8_t* s, size_t n, Lang lang, const LexOptions& o, std::vector<Token>* out)
      : s_(s), n_(n), lang_(lang), opts_(o), out_(out), kw_(Keywords(lang)) {}

  void Run() {
    if (lang_ == Lang::kPython) {
      RunPython();
    } else {
      RunCLike();
    }
  }

 private:
  bool CFamilyPreprocessor() const { return lang_ == Lang::kC || lang_ == Lang::kCpp || lang_ == Lang::kCSharp; }
  bool Js() const { return lang_ == Lang::kJavaScript || lang_ == Lang::kTypeScript; }
  uint8_t At(size_t i) const { return i < n_ ? s_[i] : 0; }

  // Advances i_ to `to`, counting newlines.
  void Skip(size_t to) {
    if (to > n_) to = n_;
    for (; i_ < to; i_++)
      if (s_[i_] == '\n') line_++;
  }

  void Emit(Kind kind, size_t begin, uint32_t line) {
    Token t;
    t.kind = kind;
    t.begin = uint32_t(begin);
    t.end = uint32_t(i_);
    t.line = line;
    const size_t len = i_ - begin;
    switch (kind) {
      case Kind::kIdentifier: t.value = opts_.keep_identifiers ? HashValue(kind, s_ + begin, len) : kIdentifierValue; break;
      case Kind::kString: t.value = opts_.keep_literals ? HashValue(kind, s_ + begin, len) : kStringValue; break;
      case Kind::kNumber: t.value = opts_.keep_literals ? HashValue(kind, s_ + begin, len) : kNumberValue; break;
      case Kind::kChar: t.value = opts_.keep_literals ? HashValue(kind, s_ + begin, len) : kCharValue; break;
      default: t.value = HashValue(kind, s_ + begin, len); break;
    }
    out_->push_back(t);
    last_kind_ = kind;
    last_char_ = s_[i_ - 1];
  }

  // A quoted run from i_ (at the opening quote): backslash escapes, ends after `q` or before a newline
  // (multi_line: newlines allowed).
  void Quoted(uint8_t q, bool escapes, bool multi_line) {
    i_++;
    while (i_ < n_) {
      const uint8_t c = s_[i_];
      if (c == '\\' && escapes && i_ + 1 < n_) {
        Skip(i_ + 2);
        continue;
      }
      if (c == q) {
        i_++;
        return;
      }
      if (c == '\n' && !multi_line) return;
      Skip(i_ + 1);
    }
  }

  // Until the next occurrence of `delim` (then past it) or the end.
  void Until(const char* delim) {
    const size_t m = std::strlen(delim);
    while (i_ < n_) {
      if (i_ + m <= n_ && std::memcmp(s_ + i_, delim, m) == 0) {
        Skip(i_ + m);  // the delimiter may be (or hold) a newline: counted
        return;
      }
      Skip(i_ + 1);
    }
  }

  // A JavaScript template literal from the backquote; ${...} parts skipped with their nested strings,
  // templates, comments and braces.
  void Template(int depth) {
    i_++;
    while (i_ < n_) {
      const uint8_t c = s_[i_];
      if (c == '\\' && i_ + 1 < n_) {
        Skip(i_ + 2);
      } else if (c == '`') {
        i_++;
        return;
      } else if (c == '$' && At(i_ + 1) == '{') {
        i_ += 2;
        SkipBraces(depth);
      } else {
        Skip(i_ + 1);
      }
    }
  }

  void SkipBraces(int depth) {
    int open = 1;
    while (i_ < n_ && open > 0) {
      const uint8_t c = s_[i_];
      if (c == '{') {
        open++;
        i_++;
      } else if (c == '}') {
        open--;
        i_++;
      } else if (c == '"' || c == '\'') {
        Quoted(c, true, false);
      } else if (c == '`') {
        if (depth < 64) Template(depth + 1); else i_++;
      } else if (c == '/' && At(i_ + 1) == '/') {
        Until("\n");
      } else if (c == '/' && At(i_ + 1) == '*') {
        i_ += 2;
        Until("*/");
      } else {
        Skip(i_ + 1);
      }
    }
  }

  // Whether a '/' here starts a regular expression (JavaScript): after nothing, an operator other than a
  // closing bracket, or a keyword.
  bool RegexAllowed() const {
    if (out_->size() == first_) return true;
    if (last_kind_ == Kind::kKeyword) return true;
    if (last_kind_ == Kind::kOperator) return last_char_ != ')' && last_char_ != ']' && last_char_ != '}';
    return false;
  }

  // A regular expression literal from the '/': to the closing '/' outside a class, then its flags; a newline
  // first means it was no regex: false, nothing consumed.
  bool Regex() {
    size_t j = i_ + 1;
    bool in_class = false;
    while (j < n_) {
      const uint8_t c = s_[j];
      if (c == '\n') return false;
      if (c == '\\') {
        if (j + 1 < n_ && s_[j + 1] == '\n') return false;
        j += 2;
        continue;
      }
      if (c == '[') in_class = true;
      else if (c == ']') in_class = false;
      else if (c == '/' && !in_class) break;
      j++;
    }
    if (j >= n_) return false;
    j++;
    while (j < n_ && IdentPart(s_[j])) j++;
    i_ = j;
    return true;
  }

  void Number() {
    const bool hex = s_[i_] == '0' && (At(i_ + 1) == 'x' || At(i_ + 1) == 'X');
    i_++;
    while (i_ < n_) {
      const uint8_t c = s_[i_];
      if (IdentPart(c) && c != '$') {
        const bool exp = hex ? (c == 'p' || c == 'P') : (c == 'e' || c == 'E');
        i_++;
        if (exp && (At(i_) == '+' || At(i_) == '-')) i_++;
      } else if (c == '.' && At(i_ + 1) != '.' && !IdentStart(At(i_ + 1))) {
        i_++;
      } else if (c == '\'' && lang_ == Lang::kCpp && Digit(At(i_ + 1))) {
        i_++;  // a digit separator
      } else {
        break;
      }
    }
  }

  // A number at i_ (a digit, or a dot and a digit): lexed and emitted, true; else false.
  bool LexNumber(size_t begin, uint32_t line) {
    const uint8_t c = s_[i_];
    if (!Digit(c) && !(c == '.' && Digit(At(i_ + 1)))) return false;
    Number();
    Emit(Kind::kNumber, begin, line);
    return true;
  }

  void Operator() {
    // the operators by first byte, longest first (kOps' order within each byte)
    static const std::array<std::vector<std::string_view>, 256> by_first = [] {
      std::array<std::vector<std::string_view>, 256> a;
      for (const char* op : kOps) a[uint8_t(op[0])].push_back(op);
      return a;
    }();
    const size_t left = n_ - i_;
    for (std::string_view op : by_first[s_[i_]]) {
      const size_t m = op.size();
      if (m <= left && std::memcmp(s_ + i_, op.data(), m) == 0) {
        if (op == "//" && lang_ != Lang::kPython) continue;
        i_ += m;
        return;
      }
    }
    i_++;
  }

  // A string prefix ident (C++ R/u8R/LR/uR/UR raw, u8/L/u/U; Rust r, b, br, r#; C# @ and $) just lexed at
  // [begin, i_): lexes the string that follows it and returns true, or returns false.
  bool PrefixedString(size_t begin) {
    const std::string_view id(reinterpret_cast<const char*>(s_ + begin), i_ - begin);
    const uint8_t c = At(i_);
    if (lang_ == Lang::kCpp || lang_ == Lang::kC) {
      if (c == '"' && (id == "R" || id == "u8R" || id == "LR" || id == "uR" || id == "UR")) {
        // R"delim( ... )delim"
        size_t j = i_ + 1;
        while (j < n_ && j - i_ <= 17 && s_[j] != '(' && s_[j] != '"' && s_[j] != '\n') j++;
        if (At(j) != '(') return false;
        std::string close = ")" + std::string(reinterpret_cast<const char*>(s_ + i_ + 1), j - i_ - 1) + "\"";
        Skip(j + 1);
        Until(close.c_str());
        return true;
      }
      if ((c == '"' || c == '\'') && (id == "u8" || id == "L" || id == "u" || id == "U")) {
        Quoted(c, true, false);
        return true;
      }
      return false;
    }
    if (lang_ == Lang::kRust) {
      if (id == "r" || id == "br" || id == "cr") {
        size_t hashes = 0;
        size_t j = i_;
        while (At(j) == '#') j++, hashes++;
        if (At(j) != '"') return false;
        std::string close = "\"" + std::string(hashes, '#');
        Skip(j + 1);
        Until(close.c_str());
        return true;
      }
      if ((id == "b" || id == "c") && (c == '"' || c == '\'')) {
        Quoted(c, true, c == '"');
        return true;
      }
    }
    return false;
  }

  void RunCLike() {
    bool line_start = true;  // only whitespace so far on this line
    while (i_ < n_) {
      const uint8_t c = s_[i_];
      if (c == '\n') {
        line_++;
        i_++;
        line_start = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        i_++;
        continue;
      }
      const bool at_line_start = line_start;
      line_start = false;
      const size_t begin = i_;
      const uint32_t line = line_;
      if (c == '/' && At(i_ + 1) == '/') {
        while (i_ < n_ && s_[i_] != '\n') i_++;
        continue;
      }
      if (c == '/' && At(i_ + 1) == '*') {
        i_ += 2;
        if (lang_ == Lang::kRust) {
          int depth = 1;
          while (i_ < n_ && depth > 0) {
            if (s_[i_] == '/' && At(i_ + 1) == '*') depth++, i_ += 2;
            else if (s_[i_] == '*' && At(i_ + 1) == '/') depth--, i_ += 2;
            else Skip(i_ + 1);
          }
        } else {
          Until("*/");
        }
        continue;
      }
      if (c == '#' && at_line_start && CFamilyPreprocessor()) {
        size_t j = i_ + 1;
        while (j < n_ && (s_[j] == ' ' || s_[j] == '\t')) j++;
        size_t k = j;
        while (k < n_ && IdentPart(s_[k])) k++;
        std::string name = "#" + std::string(reinterpret_cast<const char*>(s_ + j), k - j);
        // the rest of the line, with backslash continuations
        while (i_ < n_ && s_[i_] != '\n') {
          if (s_[i_] == '\\' && At(i_ + 1) == '\n') Skip(i_ + 2);
          else if (s_[i_] == '\\' && At(i_ + 1) == '\r' && At(i_ + 2) == '\n') Skip(i_ + 3);
          else i_++;
        }
        Token t;
        t.kind = Kind::kPreprocessor;
        t.begin = uint32_t(begin);
        t.end = uint32_t(i_);
        t.line = line;
        t.value = HashValue(Kind::kPreprocessor, reinterpret_cast<const uint8_t*>(name.data()), name.size());
        out_->push_back(t);
        last_kind_ = Kind::kPreprocessor;
        last_char_ = 0;
        continue;
      }
      if (c == '"') {
        if ((lang_ == Lang::kJava || lang_ == Lang::kCSharp) && At(i_ + 1) == '"' && At(i_ + 2) == '"') {
          i_ += 3;
          Until("\"\"\"");
        } else {
          Quoted('"', true, lang_ == Lang::kRust);
        }
        Emit(Kind::kString, begin, line);
        continue;
      }
      if (c == '\'') {
        if (Js()) {
          Quoted('\'', true, false);
          Emit(Kind::kString, begin, line);
          continue;
        }
        if (lang_ == Lang::kRust && IdentStart(At(i_ + 1)) && At(i_ + 2) != '\'') {
          // a lifetime or a loop label ('a, 'static), unless a char such as 'ab' was meant
          i_++;
          while (i_ < n_ && IdentPart(s_[i_])) i_++;
          if (At(i_) != '\'') {
            Emit(Kind::kIdentifier, begin, line);
            continue;
          }
          i_ = begin;
        }
        Quoted('\'', true, false);
        Emit(Kind::kChar, begin, line);
        continue;
      }
      if (c == '`' && (Js() || lang_ == Lang::kGo)) {
        if (Js()) Template(0);
        else Quoted('`', false, true);
        Emit(Kind::kString, begin, line);
        continue;
      }
      if (c == '@' && lang_ == Lang::kCSharp && (At(i_ + 1) == '"' || (At(i_ + 1) == '$' && At(i_ + 2) == '"'))) {
        // a verbatim string: "" is a quote
        i_ += At(i_ + 1) == '"' ? 1 : 2;
        i_++;
        while (i_ < n_) {
          if (s_[i_] == '"') {
            if (At(i_ + 1) == '"') { i_ += 2; continue; }
            i_++;
            break;
          }
          Skip(i_ + 1);
        }
        Emit(Kind::kString, begin, line);
        continue;
      }
      if (c == '$' && lang_ == Lang::kCSharp && At(i_ + 1) == '"') {
        i_++;
        Quoted('"', true, false);
        Emit(Kind::kString, begin, line);
        continue;
      }
      if (LexNumber(begin, line)) continue;
      if (IdentStart(c)) {
        while (i_ < n_ && IdentPart(s_[i_])) i_++;
        if (PrefixedString(begin)) {
          Emit(Kind::kString, begin, line);
          continue;
        }
        const std::string_view id(reinterpret_cast<const char*>(s_ + begin), i_ - begin);
        Emit(kw_.count(id) ? Kind::kKeyword : Kind::kIdentifier, begin, line);
        continue;
      }
      if (c == '/' && Js() && RegexAllowed() && Regex()) {
        Emit(Kind::kString, begin, line);
        continue;
      }
      Operator();
      Emit(Kind::kOperator, begin, line);
    }
  }

  void RunPython() {
    while (i_ < n_) {
      const uint8_t c = s_[i_];
      if (c == '\n') {
        line_++;
        i_++;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        i_++;
        continue;
      }
      if (c == '\\' && (At(i_ + 1) == '\n' || (At(i_ + 1) == '\r' && At(i_ + 2) == '\n'))) {
        Skip(i_ + (At(i_ + 1) == '\n' ? 2 : 3));
        continue;
      }
      if (c == '#') {
        while (i_ < n_ && s_[i_] != '\n') i_++;
        continue;
      }
      const size_t begin = i_;
      const uint32_t line = line_;
      if (IdentStart(c) && c != '$') {
        while (i_ < n_ && IdentPart(s_[i_]) && s_[i_] != '$') i_++;
        const size_t len = i_ - begin;
        if (len <= 2 && (At(i_) == '"' || At(i_) == '\'')) {
          bool prefix = true;
          for (size_t j = begin; j < i_; j++) {
            const uint8_t p = uint8_t(s_[j] | 0x20);
            if (p != 'r' && p != 'b' && p != 'u' && p != 'f') prefix = false;
          }
          if (prefix) {
            PythonString();
            Emit(Kind::kString, begin, line);
            continue;
          }
        }
        const std::string_view id(reinterpret_cast<const char*>(s_ + begin), len);
        Emit(kw_.count(id) ? Kind::kKeyword : Kind::kIdentifier, begin, line);
        continue;
      }
      if (c == '"' || c == '\'') {
        PythonString();
        Emit(Kind::kString, begin, line);
        continue;
      }
      if (LexNumber(begin, line)) continue;
      Operator();
      Emit(Kind::kOperator, begin, line);
    }
  }

  // A Python string from its quote (the prefix already consumed): triple-quoted spans lines; a backslash
  // always escapes the next byte for finding the end (raw strings too: r"\"" does not end at the second quote).
  void PythonString() {
    const uint8_t q = s_[i_];
    if (At(i_ + 1) == q && At(i_ + 2) == q) {
      i_ += 3;
      while (i_ < n_) {
        if (s_[i_] == '\\' && i_ + 1 < n_) {
          Skip(i_ + 2);
          continue;
        }
        if (s_[i_] == q && At(i_ + 1) == q && At(i_ + 2) == q) {
          i_ += 3;
          return;
        }
        Skip(i_ + 1);
      }
      return;
    }
    Quoted(q, true, false);
  }

  const uint8_t* s_;
  size_t n_;
  Lang lang_;
  LexOptions opts_;
  std::vector<Token>* out_;
  const Set& kw_;
  size_t i_ = 0;
  uint32_t line_ = 1;
  size_t first_ = out_->size();
  Kind last_kind_ = Kind::kOperator;
  uint8_t last_char_ = 0;
};

}  // namespace

bool ParseLang(const std::string& name, Lang* out) {
  for (int i = 0; i < kLangCount; i++) {
    if (name == kNames[i]) {
      *out = Lang(i);
      return true;
    }
  }
  return false;
}

const char* LangName(Lang l) { return kNames[int(l)]; }

void Tokenize(const uint8_t* src, size_t n, Lang lang, const LexOptions& opts, std::vector<Token>* out) {
  Lexer(src, n, lang, opts, out).Run();
}

}  // namespace code
}  // namespace neardup
