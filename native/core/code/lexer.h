// Source-code tokens for copied-code detection (`neardup code`, docs/code.md): one lexer per language family,
// C-like (C, C++, C#, Java, JavaScript, TypeScript, Go, Rust) and Python. Comments and whitespace are dropped
// (Python's indentation and newlines too); every other token keeps its kind, a normalised value, its byte
// range and its 1-based line.
//
// Normalised values: keywords, operators and punctuation are kept as themselves (a hash of their text and
// kind); every identifier is one symbol (kIdentifierValue) and every literal one symbol per kind (string,
// number, char), unless the options keep their text. Preprocessor lines of C, C++ and C# (a '#' first on its
// line, with backslash continuations) are one token each, valued by the directive ("#include", "#define");
// the rest of the line is dropped, since include lists and macro bodies are mostly boilerplate.
//
// What is not a full parser's: JavaScript regular expression literals are recognised by the token before
// the '/' (an operator, keyword or nothing starts an expression); C++ raw strings R"d(...)d", Rust raw
// strings r#"..."#, Go and JavaScript backquotes, Java/C# text blocks """...""" and C# verbatim @"..." are
// single string tokens; a template literal's ${...} parts are inside its one string token. A string or char
// left open at the end of a line (other than a multi-line kind) ends there. Never fails: any bytes lex
// (bytes >= 0x80 are identifier characters), so the caller decides what to do with binary or invalid UTF-8.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace neardup {
namespace code {

enum class Lang : uint8_t { kC, kCpp, kCSharp, kJava, kJavaScript, kTypeScript, kGo, kRust, kPython };
constexpr int kLangCount = 9;

// "c", "cpp", "csharp", "java", "javascript", "typescript", "go", "rust", "python"; false when unknown.
bool ParseLang(const std::string& name, Lang* out);
const char* LangName(Lang l);

enum class Kind : uint8_t { kKeyword, kIdentifier, kOperator, kString, kNumber, kChar, kPreprocessor };

// Values of identifiers and literals when their text is not kept. Hashed values never take these (nor the
// top bit, which the matcher uses to mark base code).
constexpr uint32_t kIdentifierValue = 1;
constexpr uint32_t kStringValue = 2;
constexpr uint32_t kNumberValue = 3;
constexpr uint32_t kCharValue = 4;
constexpr uint32_t kValueMask = 0x7fffffffu;

struct LexOptions {
  bool keep_identifiers = false;  // identifiers valued by their text (else all one symbol)
  bool keep_literals = false;     // literals valued by kind and text (else one symbol per kind)
};

struct Token {
  uint32_t value;  // normalised, < 2^31
  uint32_t begin;  // byte range [begin, end) in the source
  uint32_t end;
  uint32_t line;  // 1-based line of the first byte
  Kind kind;
};

// Appends the tokens of src[0..n) (n < 2^32) to *out.
void Tokenize(const uint8_t* src, size_t n, Lang lang, const LexOptions& opts, std::vector<Token>* out);

}  // namespace code
}  // namespace neardup
