// The shingle stream: text -> normalised units (code points or words) -> shingles (byte spans of the
// normalised text) -> 32/64-bit shingle hashes. Every engine consumes it.
//
// A Shingler owns reusable scratch buffers; Reset() prepares one document without allocating once the
// buffers have grown to the largest document seen, and every shingle is a contiguous span of one buffer
// (words are re-joined with single spaces, so word n-gram i is "w_i w_i+1 ... w_i+n-1", exactly Python's
// " ".join(tokens[i:i+n])). Hashing a shingle therefore never copies it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hash/fast64.h"
#include "text/normalization.h"
#include "util/raw_buffer.h"
#include "util/status.h"

namespace neardup {

enum class TextUnit : uint8_t { kChar = 0, kWord = 1 };
enum class WordSplit : uint8_t {
  kWhitespace = 0,  // Python str.split(): runs of whitespace (text::IsSpace) separate tokens
  kNonWord = 1,     // re.split(r"\W+") without empty tokens: tokens are maximal runs of word characters
  kUnicode = 2,     // Unicode word boundaries (UAX #29's word rules, text::WordBreakOf); cluster scripts: ClusterUnit
};
// The units of scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) under
// WordSplit::kUnicode: each letter with the marks after it (a cluster), or overlapping pairs of them.
enum class ClusterUnit : uint8_t {
  kChars = 0,    // each cluster is a word
  kBigrams = 1,  // a run of clusters c1..ck gives the words c1c2, c2c3, ..., c(k-1)ck; a run of one, c1
};
enum class ShortText : uint8_t {
  kWhole = 0,  // fewer than n units (but at least one): one shingle of all of them
  kNone = 1,   // fewer than n units: no shingle
};

struct TextOptions {
  TextUnit unit = TextUnit::kChar;
  uint32_t n = 5;
  WordSplit split = WordSplit::kWhitespace;
  ClusterUnit cjk = ClusterUnit::kChars;  // WordSplit::kUnicode only
  bool lowercase = false;    // text::Lower on every code point
  bool strip_punct = false;  // drop \p{P} code points
  bool fold_space = false;   // char unit: runs of whitespace -> one space, trimmed at both ends
  ShortText short_text = ShortText::kWhole;
  // Unicode normalisation before everything else (text/normalization.h); kNone: the bytes as they are.
  text::NormalForm normalize = text::NormalForm::kNone;
};

constexpr uint32_t kMaxN = 4096;
Status ValidateTextOptions(const TextOptions& o);

// An upper bound on the shingles of a document, without preparing it (code points <= bytes, also after
// lower-casing; tokens <= (bytes + 1) / 2; under Unicode normalisation, of the bounds of
// text::NormalizedBytesBound / NormalizedCodePointsBound). Exact for the char unit without normalisation on
// valid UTF-8, and *exact is set then.
size_t ShingleBound(const TextOptions& o, const uint8_t* data, size_t len, bool* exact);

class Shingler {
 public:
  explicit Shingler(const TextOptions& options) : o_(options) {}

  // Prepares one document (UTF-8 bytes; invalid sequences become U+FFFD, see utf8.h).
  void Reset(const uint8_t* data, size_t len);  // Unicode normalisation (o_.normalize), then ResetText
  void Reset(std::string_view s) { Reset(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

  size_t size() const { return count_; }
  std::string_view operator[](size_t i) const {
    if (ascii_) return std::string_view(base_ + i, span_);
    const uint32_t b = begin_[i];
    return std::string_view(base_ + b, ends_[i + last_] - b);
  }
  // Units (code points or words) after normalisation.
  size_t units() const { return units_; }
  // The normalised text (words joined by single spaces in word mode): the caller's bytes, or scratch of
  // this Shingler, valid until the next Reset.
  std::string_view text() const { return std::string_view(base_, base_len_); }
  bool had_invalid_utf8() const { return invalid_; }
  // ASCII char mode: shingle i is the `span()` bytes at text().data() + i (lets hash loops specialise).
  bool fixed_width() const { return ascii_; }
  size_t span() const { return span_; }
  const TextOptions& options() const { return o_; }

 private:
  void ResetText(const uint8_t* p, size_t len, bool valid = false);  // valid: known to be valid UTF-8
  void PrepareChars(const uint8_t* p, size_t len, bool copy);
  bool PrepareAsciiChars(const uint8_t* p, size_t len);
  void PrepareWords(const uint8_t* p, size_t len);
  void PrepareUnicodeWords(const uint8_t* p, size_t len);
  char* StartWords(size_t len);
  void FinishWords(size_t units, size_t w);
  void BuildWordTable();
  void Finish();

  TextOptions o_;
  // Scratch sized for the worst case of the largest document seen, not zero-filled: only the pages a
  // document writes are touched, so a huge document costs what it uses (its normalised text and one or two
  // offsets per unit), not the worst case (3.75 bytes of text and 5 of offsets per input byte).
  RawBuffer<char> buf_;
  RawBuffer<uint32_t> begin_, end_;
  text::Normalizer normalizer_;
  RawBuffer<uint8_t> normalized_;  // the text after o_.normalize
  const uint32_t* ends_ = nullptr;  // char mode: begin_ + 1 (a unit ends where the next begins)
  const char* base_ = "";
  size_t base_len_ = 0;
  size_t units_ = 0, count_ = 0, last_ = 0, span_ = 0;
  bool ascii_ = false, invalid_ = false;
  // Word mode, ASCII bytes: class (kWord*) and normalised byte, built from o_ on first use.
  enum : uint8_t { kWordChar = 0, kWordSep = 1, kWordSkip = 2, kWordOther = 3 };
  bool word_table_ = false;
  uint8_t wkind_[256];
  uint8_t wmap_[256];
  // The unicode split, ASCII bytes: 0 separator, 1 word character, 2 stripped, 3 decided in context.
  bool unicode_table_ = false;
  uint8_t uascii_[128];
};

// Shingle hash functions. Widths: fast64, murmur3_64 (the first 64 bits, h1, of MurmurHash3_x64_128) and
// md5_64 (first 8 bytes of MD5, big-endian) are 64-bit; murmur3_32 and sha1_32 (first 4 bytes of SHA-1,
// little-endian) are 32-bit. The seed is used by fast64 (64-bit) and the murmur3 variants (low 32 bits).
enum class ShingleHash : uint8_t { kFast64 = 0, kMurmur3_32 = 1, kMurmur3_64 = 2, kSha1_32 = 3, kMd5_64 = 4 };
inline bool Is64Bit(ShingleHash h) { return h == ShingleHash::kFast64 || h == ShingleHash::kMurmur3_64 || h == ShingleHash::kMd5_64; }

// Per-thread scratch for de-duplication (an open-addressing set reused across documents).
class HashDedup {
 public:
  // Keeps the first occurrence of each value of v[from..], in order; returns the new size of v.
  template <typename T>
  size_t Unique(T* v, size_t n);

 private:
  struct Slot {
    uint64_t key;
    uint32_t gen;  // slot is in use for the current document iff gen == gen_
  };
  std::vector<Slot> slots_;
  uint32_t gen_ = 0;
};

// Writes the hash of every shingle of the prepared document to out[0..] (each distinct value once, in order
// of first occurrence, when dedupe is set) and returns how many were written. out must have room for
// s.size() values. T is uint32_t for 32-bit kinds and uint64_t for 64-bit kinds (wider hashes truncated).
template <typename T>
size_t WriteShingleHashes(const Shingler& s, ShingleHash kind, uint64_t seed, bool dedupe, HashDedup* dd, T* out);

// Calls fn(i, h) for every shingle i of the prepared document, in order, with h its fast64 hash under a
// prepared seed (fast64::PrepareSeed): the kFast64 shingle hash, inlined into the caller's loop (MinHash
// signing and set building use it directly).
template <typename Fn>
inline void ForEachFast64(const Shingler& s, uint64_t prepared_seed, Fn&& fn) {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(s.text().data());
  const uint8_t* end = base + s.text().size();
  const size_t count = s.size();
  if (s.fixed_width() && s.span() <= 8) {
    // ASCII char n-grams: every shingle has the same width; one load, one mask, two multiplies.
    const size_t w = s.span(), len = s.text().size();
    const uint64_t mask = w == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * w)) - 1;
    const size_t fast = len >= 8 ? std::min(count, len - 7) : 0;
    size_t i = 0;
    for (; i < fast; i++) fn(i, fast64::HashSmall(fast64::R64(base + i) & mask, w, prepared_seed));
    for (; i < count; i++) fn(i, fast64::HashSmall(fast64::LoadSmall(base + i, w, end), w, prepared_seed));
    return;
  }
  // Short shingles (the common case) are loaded with one unaligned read when the text buffer allows.
  for (size_t i = 0; i < count; i++) {
    const std::string_view v = s[i];
    const uint8_t* q = reinterpret_cast<const uint8_t*>(v.data());
    fn(i, v.size() <= 8 ? fast64::HashSmall(fast64::LoadSmall(q, v.size(), end), v.size(), prepared_seed)
                        : fast64::HashPrepared(q, v.size(), prepared_seed));
  }
}

// The same, appended to a vector.
template <typename T>
void AppendShingleHashes(const Shingler& s, ShingleHash kind, uint64_t seed, bool dedupe, HashDedup* dd,
                         std::vector<T>* out);

}  // namespace neardup
