#include "text/shingle.h"

#include <algorithm>
#include <cstring>

#include "hash/digest.h"
#include "hash/fast64.h"
#include "hash/murmur3.h"
#include "text/normalize.h"
#include "text/utf8.h"
#include "util/cpu.h"

#if NEARDUP_X86_DISPATCH
#include <immintrin.h>
#endif

namespace neardup {

Status ValidateTextOptions(const TextOptions& o) {
  if (o.n < 1 || o.n > kMaxN)
    return Status(Code::kInvalidArgument, "n must be an integer from 1 to " + std::to_string(kMaxN));
  if (o.unit != TextUnit::kChar && o.unit != TextUnit::kWord)
    return Status(Code::kInvalidArgument, "unknown text unit");
  if (static_cast<uint8_t>(o.split) > static_cast<uint8_t>(WordSplit::kUnicode))
    return Status(Code::kInvalidArgument, "unknown word split");
  if (static_cast<uint8_t>(o.cjk) > static_cast<uint8_t>(ClusterUnit::kBigrams))
    return Status(Code::kInvalidArgument, "unknown cluster unit");
  if (static_cast<uint8_t>(o.normalize) > static_cast<uint8_t>(text::NormalForm::kNfkcCasefold))
    return Status(Code::kInvalidArgument, "unknown normalization form");
  return Status::Ok();
}

size_t ShingleBound(const TextOptions& o, const uint8_t* p, size_t len, bool* exact) {
  if (o.normalize != text::NormalForm::kNone) {
    // Code points of the normalised text (lower-casing: at most its bytes); tokens: half its bytes.
    const size_t bytes = text::NormalizedBytesBound(o.normalize, len);
    const size_t units = o.unit == TextUnit::kChar ? (o.lowercase ? bytes : text::NormalizedCodePointsBound(o.normalize, len))
                                                   : (bytes + 1) / 2;
    *exact = false;
    if (units == 0) return 0;
    return units >= o.n ? units - o.n + 1 : (o.short_text == ShortText::kWhole ? 1 : 0);
  }
  const bool plain = o.unit == TextUnit::kChar && !o.lowercase && !o.strip_punct && !o.fold_space;
  size_t units = o.unit == TextUnit::kChar ? len : (len + 1) / 2;
  *exact = plain && utf8::CountIfValid(p, len, &units);
  if (units == 0) return 0;
  if (units >= o.n) return units - o.n + 1;
  return o.short_text == ShortText::kWhole ? 1 : 0;
}

void Shingler::Reset(const uint8_t* p, size_t len) {
  // NFC and NFKC leave ASCII as it is: such a text is shingled in place.
  const text::NormalForm f = o_.normalize;
  if (f == text::NormalForm::kNone || (f != text::NormalForm::kNfkcCasefold && utf8::IsAscii(p, len))) {
    ResetText(p, len);
    return;
  }
  bool bad = false;
  const size_t n = normalizer_.Normalize(f, p, len, &normalized_, &bad);
  ResetText(normalized_.data(), n, true);  // valid UTF-8: invalid bytes are U+FFFD now
  invalid_ = bad;
}

void Shingler::ResetText(const uint8_t* p, size_t len, bool valid) {
  invalid_ = false;
  ascii_ = false;
  if (o_.unit == TextUnit::kChar) {
    const bool normalise = o_.lowercase || o_.strip_punct || o_.fold_space;
    if (!normalise && utf8::IsAscii(p, len)) {
      // Fast path: one byte per code point, spans straight into the caller's bytes.
      base_ = reinterpret_cast<const char*>(p);
      base_len_ = len;
      units_ = len;
      ascii_ = true;
      Finish();
      return;
    }
    if (normalise && PrepareAsciiChars(p, len)) {
      ascii_ = true;
      Finish();
      return;
    }
    PrepareChars(p, len, normalise || !(valid || utf8::IsValid(p, len)));
  } else if (o_.split == WordSplit::kUnicode) {
    PrepareUnicodeWords(p, len);
  } else {
    PrepareWords(p, len);
  }
  Finish();
}

// Scratch growth: buffers only grow (never shrink; their contents are not kept: each document rewrites
// them), so after the largest document no document allocates. Normalised text needs at most 3 bytes per
// input byte (an invalid byte becomes U+FFFD, 3 bytes; lower-casing grows valid text by at most 3/2), and
// never more code points than input bytes.
template <typename V>
static inline void EnsureSize(V& v, size_t n) {
  if (v.size() < n) v.Allocate(n + n / 4 + 16);
}

// ASCII text with normalisation (the common case of lower-cased char n-grams): every unit stays one byte, so
// the normalised bytes go to buf_ and shingles are fixed-width spans of it. The same rules as PrepareChars
// (ASCII lower-cases to ASCII; punctuation and white space are ASCII classes). Returns false, having
// written nothing that matters, when a byte is not ASCII.
bool Shingler::PrepareAsciiChars(const uint8_t* p, size_t len) {
  EnsureSize(buf_, len + 16);
  uint8_t* out = reinterpret_cast<uint8_t*>(&buf_[0]);
  size_t w = 0;
  if (!o_.strip_punct && !o_.fold_space) {
    // Lower-casing only: eight bytes at a time (SWAR); non-ASCII bytes are found on the way. For bytes below
    // 0x80, adding 0x80 - 'A' (resp. 0x80 - 'Z' - 1) sets the byte's top bit iff it is >= 'A' (> 'Z'), with no
    // carry into the next byte; an upper-case letter then gets 0x20 added by OR.
    constexpr uint64_t kOnes = 0x0101010101010101ull, kTop = 0x8080808080808080ull;
    uint64_t acc = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
      uint64_t x;
      std::memcpy(&x, p + i, 8);
      acc |= x;
      const uint64_t low7 = x & ~kTop;
      const uint64_t upper = (low7 + (0x80 - 'A') * kOnes) & ~(low7 + (0x80 - 'Z' - 1) * kOnes) & kTop;
      x |= upper >> 2;
      std::memcpy(out + i, &x, 8);
    }
    for (; i < len; i++) {
      const uint8_t b = p[i];
      acc |= b;
      out[i] = static_cast<uint8_t>(b + (static_cast<uint8_t>(b - 'A') < 26 ? 32 : 0));
    }
    if (acc & kTop) return false;
    w = len;
  } else {
    if (!utf8::IsAscii(p, len)) return false;
    bool pending_space = false;
    for (size_t i = 0; i < len; i++) {
      uint8_t c = p[i];
      if (o_.lowercase && static_cast<uint8_t>(c - 'A') < 26) c += 32;
      if (o_.strip_punct && text::IsPunct(c)) continue;
      if (o_.fold_space) {
        if (text::IsSpace(c)) {
          pending_space = w > 0;
          continue;
        }
        if (pending_space) {
          out[w++] = ' ';
          pending_space = false;
        }
      }
      out[w++] = c;
    }
  }
  base_ = buf_.data();
  base_len_ = w;
  units_ = w;
  return true;
}

void Shingler::PrepareChars(const uint8_t* p, size_t len, bool copy) {
  const uint8_t* end = p + len;
  EnsureSize(begin_, len + 2);
  uint32_t* beg = begin_.data();
  size_t units = 0;
  if (!copy) {
    // Valid UTF-8 with no normalisation: record code point offsets, spans into the caller's bytes.
    for (size_t i = 0; i < len;) {
      beg[units++] = static_cast<uint32_t>(i);
      const uint8_t b = p[i];
      i += b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    }
    beg[units] = static_cast<uint32_t>(len);
    units_ = units;
    base_ = reinterpret_cast<const char*>(p);
    base_len_ = len;
    return;
  }
  EnsureSize(buf_, 3 * len + 16);
  char* out = &buf_[0];
  size_t w = 0;
  bool pending_space = false;
  const bool fold = o_.fold_space, strip = o_.strip_punct;
  auto emit = [&](uint32_t c) {
    if (fold) {
      if (text::IsSpace(c)) {
        pending_space = units > 0;
        return;
      }
      if (pending_space) {
        beg[units++] = static_cast<uint32_t>(w);
        out[w++] = ' ';
        pending_space = false;
      }
    }
    beg[units++] = static_cast<uint32_t>(w);
    if (c < 0x80) {
      out[w++] = static_cast<char>(c);
    } else {
      w += utf8::Encode(c, reinterpret_cast<uint8_t*>(out + w));
    }
  };
  const bool lower = o_.lowercase, plain = !fold && !strip;
  while (p < end) {
    if (plain && *p < 0x80) {
      // A run of ASCII bytes (most of a text that is not all ASCII): one unit per byte.
      do {
        const uint8_t b = *p++;
        beg[units++] = static_cast<uint32_t>(w);
        out[w++] = static_cast<char>(lower && static_cast<uint8_t>(b - 'A') < 26 ? b + 32 : b);
      } while (p < end && *p < 0x80);
      continue;
    }
    uint32_t c;
    if (*p < 0x80) {
      c = *p++;
    } else {
      bool valid;
      p += utf8::Decode(p, end, &c, &valid);
      invalid_ |= !valid;
    }
    if (strip && text::IsPunct(c)) continue;
    if (lower) {
      uint32_t low[3];
      const size_t k = text::Lower(c, low);
      for (size_t j = 0; j < k; j++) {
        if (strip && text::IsPunct(low[j])) continue;
        emit(low[j]);
      }
    } else {
      emit(c);
    }
  }
  beg[units] = static_cast<uint32_t>(w);
  units_ = units;
  base_ = buf_.data();
  base_len_ = w;
}

void Shingler::BuildWordTable() {
  const bool nonword = o_.split == WordSplit::kNonWord;
  for (uint32_t b = 0; b < 256; b++) {
    if (b >= 0x80) {
      wkind_[b] = kWordOther;  // a UTF-8 lead or continuation byte: decoded by the general path
      wmap_[b] = 0;
      continue;
    }
    if (o_.strip_punct && text::IsPunct(b)) {
      wkind_[b] = kWordSkip;
      wmap_[b] = 0;
      continue;
    }
    uint32_t c = b;
    if (o_.lowercase) {
      uint32_t low[3];
      text::Lower(b, low);  // ASCII lower-cases to one ASCII code point
      c = low[0];
    }
    const bool sep = nonword ? !text::IsWord(c) : text::IsSpace(c);
    wkind_[b] = sep ? kWordSep : kWordChar;
    wmap_[b] = static_cast<uint8_t>(c);
  }
  word_table_ = true;
}

namespace {

#if NEARDUP_X86_DISPATCH
bool HasAvx512Words() {
  const CpuFeatures& c = Cpu();
  return c.avx2 && c.avx512f && c.avx512bw && c.avx512vbmi && c.avx512vbmi2 && c.bmi && c.bmi2 && c.popcnt;
}

// GCC 12 warns about its own _mm512 intrinsics' undefined-value helpers (a known false positive).
#pragma GCC diagnostic push
#if !defined(__clang__)  // a GCC-only warning (clang warns about the unknown group)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// One 64-byte window of either vector tokenizer: tk has a bit for each word byte, carry for a word running
// into the window. Writes the kept bytes (word bytes, mapped; the first separator after a word, as ' '),
// records where words start, and returns the kept separators' mask.
__attribute__((always_inline, target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt"))) inline uint64_t WordWindow(
    __m512i v, uint64_t tk, uint64_t carry, __m512i map_lo, __m512i map_hi, char* out, size_t* w_io, uint32_t* beg,
    size_t* units_io) {
  const uint64_t sp = ~tk;
  const uint64_t prev = (tk << 1) | carry;
  const uint64_t keep = tk | (sp & prev);
  uint64_t starts = tk & ~prev;
  __m512i m = _mm512_permutex2var_epi8(map_lo, v, map_hi);
  m = _mm512_mask_mov_epi8(m, sp, _mm512_set1_epi8(' '));
  size_t w = *w_io, units = *units_io;
  _mm512_storeu_si512(out + w, _mm512_maskz_compress_epi8(keep, m));
  while (starts != 0) {
    const uint64_t below = _blsmsk_u64(starts) >> 1;  // bits below the lowest start
    beg[units++] = static_cast<uint32_t>(w + _mm_popcnt_u64(keep & below));
    starts = _blsr_u64(starts);
  }
  *w_io = w + _mm_popcnt_u64(keep);
  *units_io = units;
  return sp & prev;
}

// The word tokenizer on 64 ASCII bytes at a time (no stripped characters: every byte is a separator or a
// token character). sep[b] is 1 for separator bytes, map[b] the normalised byte, for b < 128. Kept bytes:
// token characters, and the first separator after a token (written as ' '); a kept separator not followed
// by a token is left "pending" (*pending) and dropped at the end of the document. Token starts go to beg.
// Stops at the first 64-byte window holding a non-ASCII byte, or with fewer than 64 bytes left; returns
// the new input position.
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt"))) const uint8_t* WordsAvx512(
    const uint8_t* p, const uint8_t* end, const uint8_t* sep, const uint8_t* map, char* out, size_t* w_io,
    uint32_t* beg, size_t* units_io, bool* in_token_io, bool* pending_io) {
  const __m512i sep_lo = _mm512_loadu_si512(sep), sep_hi = _mm512_loadu_si512(sep + 64);
  const __m512i map_lo = _mm512_loadu_si512(map), map_hi = _mm512_loadu_si512(map + 64);
  size_t w = *w_io, units = *units_io;
  uint64_t carry = *in_token_io ? 1 : 0;
  bool pending = *pending_io;
  if (carry == 0 && units > 0 && !pending) {
    // The scalar path consumed the separators after the last token without writing the joining space.
    out[w++] = ' ';
    pending = true;
  }
  while (end - p >= 64) {
    const __m512i v = _mm512_loadu_si512(p);
    if (_mm512_movepi8_mask(v) != 0) break;
    const uint64_t sp = _mm512_test_epi8_mask(_mm512_permutex2var_epi8(sep_lo, v, sep_hi), _mm512_set1_epi8(1));
    const uint64_t tk = ~sp;
    const uint64_t kept_sep = WordWindow(v, tk, carry, map_lo, map_hi, out, &w, beg, &units);
    carry = tk >> 63;
    if (carry) {
      pending = false;
    } else if (kept_sep != 0) {
      pending = true;
    }
    p += 64;
  }
  *w_io = w;
  *units_io = units;
  *in_token_io = carry != 0;
  *pending_io = pending;
  return p;
}

// The unicode split on 64 ASCII bytes at a time (nothing stripped): as WordsAvx512, with word characters
// decided in context. cls[b] (b < 128) has bit 1 for letters, 2 digits, 4 connectors, 8 MidLetter or
// MidNumLet, 16 MidNum or MidNumLet; a mid byte is a word character between two letters (8) or two digits
// (16), the byte after the window (ASCII, or the window is not taken) deciding for the last one. *last is
// the scalar state (text::WordBreak of the last word character, kWbOther outside a word); the caller enters
// only with no mid character pending and not after a cluster letter. Returns the new input position.
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt"))) const uint8_t* UnicodeWordsAvx512(
    const uint8_t* p, const uint8_t* end, const uint8_t* cls, const uint8_t* map, char* out, size_t* w_io,
    uint32_t* beg, size_t* units_io, uint8_t* last_io) {
  const __m512i cls_lo = _mm512_loadu_si512(cls), cls_hi = _mm512_loadu_si512(cls + 64);
  const __m512i map_lo = _mm512_loadu_si512(map), map_hi = _mm512_loadu_si512(map + 64);
  size_t w = *w_io, units = *units_io;
  const uint8_t last = *last_io;
  const uint8_t* const start = p;
  uint64_t carry = last != text::kWbOther ? 1 : 0;
  uint64_t carry_l = last == text::kWbLetter ? 1 : 0, carry_d = last == text::kWbNumeric ? 1 : 0;
  bool pending = false;
  if (carry == 0 && units > 0) {
    out[w++] = ' ';  // the space before the next word, taken back below if none follows
    pending = true;
  }
  uint8_t last_cls = 0;  // class bits of the last word byte written (carry set)
  while (end - p >= 64) {
    const __m512i v = _mm512_loadu_si512(p);
    if (_mm512_movepi8_mask(v) != 0) break;
    const __m512i c = _mm512_permutex2var_epi8(cls_lo, v, cls_hi);
    const uint64_t L = _mm512_test_epi8_mask(c, _mm512_set1_epi8(1)), D = _mm512_test_epi8_mask(c, _mm512_set1_epi8(2));
    const uint64_t C = _mm512_test_epi8_mask(c, _mm512_set1_epi8(4));
    const uint64_t ML = _mm512_test_epi8_mask(c, _mm512_set1_epi8(8)), MN = _mm512_test_epi8_mask(c, _mm512_set1_epi8(16));
    uint64_t next_l = 0, next_d = 0;
    if ((ML | MN) >> 63) {  // a mid byte last: the byte after the window decides
      if (end - p == 64 || p[64] >= 0x80) break;
      next_l = (cls[p[64]] & 1) != 0;
      next_d = (cls[p[64]] & 2) != 0;
    }
    const uint64_t keep_mid = (ML & ((L << 1) | carry_l) & ((L >> 1) | (next_l << 63))) |
                              (MN & ((D << 1) | carry_d) & ((D >> 1) | (next_d << 63)));
    const uint64_t tk = L | D | C | keep_mid;
    const uint64_t kept_sep = WordWindow(v, tk, carry, map_lo, map_hi, out, &w, beg, &units);
    carry = tk >> 63;
    if (carry) {
      pending = false;
      // a kept mid byte last continues the word of the byte before it
      last_cls = (keep_mid >> 63) ? ((ML >> 63) && (L >> 62 & 1) ? 1 : 2) : cls[p[63]];
    } else if (kept_sep != 0) {
      pending = true;
    }
    carry_l = carry ? (last_cls & 1) : 0;
    carry_d = carry ? (last_cls & 2) >> 1 : 0;
    p += 64;
  }
  if (pending) w--;  // no word after the last space written: the scalar path writes it with the next word
  if (p != start) {
    *last_io = !carry ? text::kWbOther : (last_cls & 1) ? text::kWbLetter : (last_cls & 2) ? text::kWbNumeric : text::kWbConnector;
  }
  *w_io = w;
  *units_io = units;
  return p;
}

#pragma GCC diagnostic pop
#endif

}  // namespace

// Scratch for the words of a text of len bytes: the text buffer (words joined by single spaces).
char* Shingler::StartWords(size_t len) {
  EnsureSize(buf_, 3 * len + 64);
  EnsureSize(begin_, len / 2 + 2);
  EnsureSize(end_, len / 2 + 2);
  return &buf_[0];
}

// Word u ends one byte before word u+1 begins; the last ends at w.
void Shingler::FinishWords(size_t units, size_t w) {
  const uint32_t* beg = begin_.data();
  uint32_t* fin = end_.data();
  for (size_t u = 0; u + 1 < units; u++) fin[u] = beg[u + 1] - 1;
  if (units > 0) fin[units - 1] = static_cast<uint32_t>(w);
  units_ = units;
  base_ = buf_.data();
  base_len_ = w;
}

// Tokens are written joined by single spaces (so token u ends one byte before token u+1 begins; the ends
// are filled in at the end). ASCII bytes go through a 256-entry table (class and mapped byte, built from
// the same rules as the general path, so both agree), 64 at a time with AVX-512 when nothing is stripped;
// any other byte starts a UTF-8 sequence, decoded and classified one code point at a time.
void Shingler::PrepareWords(const uint8_t* p, size_t len) {
  if (!word_table_) BuildWordTable();
  const uint8_t* end = p + len;
  char* out = StartWords(len);
  uint32_t* beg = begin_.data();
  size_t w = 0, units = 0;
  bool in_token = false;
  bool pending = false;  // the output ends with the space that follows a token (vector path only)
  const bool nonword = o_.split == WordSplit::kNonWord;
  const uint8_t* kind = wkind_;
  const uint8_t* map = wmap_;
  auto start_token = [&]() {
    if (units > 0 && !pending) out[w++] = ' ';
    pending = false;
    beg[units++] = static_cast<uint32_t>(w);
    in_token = true;
  };
  auto put = [&](uint32_t c) {
    const bool sep = nonword ? !text::IsWord(c) : text::IsSpace(c);
    if (sep) {
      in_token = false;
      return;
    }
    if (!in_token) start_token();
    if (c < 0x80) {
      out[w++] = static_cast<char>(c);
    } else {
      w += utf8::Encode(c, reinterpret_cast<uint8_t*>(out + w));
    }
  };
#if NEARDUP_X86_DISPATCH
  const bool vec = !o_.strip_punct && len >= 64 && HasAvx512Words();
  uint8_t sep_tab[128];
  if (vec)
    for (int b = 0; b < 128; b++) sep_tab[b] = kind[b] == kWordSep;
  const uint8_t* scalar_until = p;  // after a vector stop at a non-ASCII byte: scalar steps up to here
#endif
  while (p < end) {
#if NEARDUP_X86_DISPATCH
    if (vec && p >= scalar_until && end - p >= 64) {
      p = WordsAvx512(p, end, sep_tab, map, out, &w, beg, &units, &in_token, &pending);
      // Stopped by a non-ASCII byte in the next 64 (or near the end): go scalar past that window.
      scalar_until = p + 64;
      if (p >= end) break;
    }
#endif
    const uint8_t k = kind[*p];
    if (k == kWordChar) {
      if (!in_token) start_token();
      // The rest of an ASCII run of token characters.
      do {
        out[w++] = static_cast<char>(map[*p++]);
      } while (p < end && kind[*p] == kWordChar);
      continue;
    }
    if (k == kWordSep) {
      in_token = false;
      do {
        p++;
      } while (p < end && kind[*p] == kWordSep);
      continue;
    }
    if (k == kWordSkip) {  // stripped punctuation: dropped, does not end a token
      p++;
      continue;
    }
    uint32_t c;
    bool valid;
    p += utf8::Decode(p, end, &c, &valid);
    invalid_ |= !valid;
    if (o_.strip_punct && text::IsPunct(c)) continue;
    if (o_.lowercase) {
      uint32_t low[3];
      const size_t n = text::Lower(c, low);
      for (size_t j = 0; j < n; j++) put(low[j]);
    } else {
      put(c);
    }
  }
  if (pending) w--;
  FinishWords(units, w);
}

// The unicode split (docs/languages.md). Words are written joined by single spaces, as in PrepareWords.
// State: `last`, the class of the last character of the word in progress (kWbOther: none in progress);
// `mid`, a MidLetter/MidNum/MidNumLet character after a letter or digit, kept only if the same kind follows;
// in a run of clusters, where the last cluster starts (bigrams copy it into the next word). ASCII runs of
// letters, digits and '_' and of separators are copied or skipped a run at a time.
void Shingler::PrepareUnicodeWords(const uint8_t* p, size_t len) {
  using namespace text;
  const uint8_t* end = p + len;
  char* out = StartWords(len);
  uint32_t* beg = begin_.data();
  size_t w = 0, units = 0;
  uint8_t last = kWbOther, mid_class = kWbOther;
  uint32_t mid = 0;
  size_t run = 0, cluster_at = 0;  // clusters in the current run; where the last one starts in out
  const bool bigrams = o_.cjk == ClusterUnit::kBigrams, lower = o_.lowercase, strip = o_.strip_punct;
  // ASCII: 0 separator, 1 word character (letter, digit, '_'), 2 stripped, 3 the general path (Mid*).
  if (!unicode_table_) {
    for (uint32_t b = 0; b < 128; b++) {
      const uint8_t k = WordBreakOf(b);
      uascii_[b] = strip && IsPunct(b) ? 2 : (k == kWbLetter || k == kWbNumeric || k == kWbConnector) ? 1 : k == kWbOther ? 0 : 3;
    }
    unicode_table_ = true;
  }
  const uint8_t* ascii = uascii_;
#if NEARDUP_X86_DISPATCH
  const bool vec = !strip && len >= 64 && HasAvx512Words();
  uint8_t cls_tab[128], map_tab[128];
  if (vec) {
    for (uint32_t b = 0; b < 128; b++) {
      const uint8_t k = WordBreakOf(b);
      cls_tab[b] = static_cast<uint8_t>((k == kWbLetter ? 1 : 0) | (k == kWbNumeric ? 2 : 0) | (k == kWbConnector ? 4 : 0) |
                                        (k == kWbMidLetter || k == kWbMidNumLet ? 8 : 0) | (k == kWbMidNum || k == kWbMidNumLet ? 16 : 0));
      map_tab[b] = static_cast<uint8_t>(lower && b - 'A' < 26u ? b + 32 : b);
    }
  }
  const uint8_t* scalar_until = p;  // after a vector stop: scalar steps up to here
#endif
  auto start_word = [&]() {
    if (units > 0) out[w++] = ' ';
    beg[units++] = static_cast<uint32_t>(w);
  };
  auto append = [&](uint32_t c) {
    if (c < 0x80) {
      out[w++] = static_cast<char>(c);
    } else {
      w += utf8::Encode(c, reinterpret_cast<uint8_t*>(out + w));
    }
  };
  auto feed = [&](uint32_t c) {
    const uint8_t k = WordBreakOf(c);
    switch (k) {
      case kWbLetter:
      case kWbNumeric:
      case kWbConnector:
        if (mid != 0) {
          const bool letters = last == kWbLetter && k == kWbLetter && (mid_class == kWbMidLetter || mid_class == kWbMidNumLet);
          const bool digits = last == kWbNumeric && k == kWbNumeric && (mid_class == kWbMidNum || mid_class == kWbMidNumLet);
          if (letters || digits) {
            append(mid);
          } else {
            last = kWbOther;
          }
          mid = 0;
        }
        if (last == kWbOther || last == kWbCluster) start_word();
        append(c);
        last = k;
        return;
      case kWbExtend:
        if (mid != 0) {  // the mark of a separator
          mid = 0;
          last = kWbOther;
          return;
        }
        if (last != kWbOther) append(c);  // else: the mark of a separator, dropped
        return;
      case kWbMidLetter:
      case kWbMidNum:
      case kWbMidNumLet:
        if (mid == 0 && (last == kWbLetter || last == kWbNumeric)) {
          mid = c;
          mid_class = k;
        } else {
          mid = 0;
          last = kWbOther;
        }
        return;
      case kWbCluster:
        mid = 0;
        if (last != kWbCluster) {
          start_word();
          run = 1;
        } else if (!bigrams) {
          start_word();
        } else if (run++ >= 2) {
          const size_t from = cluster_at, n = w - cluster_at;
          start_word();
          std::memmove(out + w, out + from, n);
          w += n;
        }
        cluster_at = w;
        append(c);
        last = kWbCluster;
        return;
      default:
        mid = 0;
        last = kWbOther;
        return;
    }
  };
  while (p < end) {
#if NEARDUP_X86_DISPATCH
    if (vec && p >= scalar_until && end - p >= 64 && mid == 0 && last != kWbCluster) {
      p = UnicodeWordsAvx512(p, end, cls_tab, map_tab, out, &w, beg, &units, &last);
      scalar_until = p + 64;
      if (p >= end) break;
    }
#endif
    const uint8_t b = *p;
    if (b < 0x80) {
      const uint8_t k = ascii[b];
      if (k == 1 && mid == 0 && last != kWbCluster) {
        if (last == kWbOther) start_word();
        // w in a register: the lambdas take it by reference, and stores through out (char) may alias it
        size_t ww = w;
        uint8_t c;
        do {
          c = *p++;
          out[ww++] = static_cast<char>(lower && static_cast<uint8_t>(c - 'A') < 26 ? c + 32 : c);
        } while (p < end && *p < 0x80 && ascii[*p] == 1);
        w = ww;
        last = WordBreakOf(c);
        continue;
      }
      if (k == 0) {
        mid = 0;
        last = kWbOther;
        do {
          p++;
        } while (p < end && *p < 0x80 && ascii[*p] == 0);
        continue;
      }
      p++;
      if (k == 2) continue;  // stripped punctuation: dropped, does not end a word
      feed(lower && static_cast<uint8_t>(b - 'A') < 26 ? b + 32u : b);
      continue;
    }
    uint32_t c;
    bool valid;
    p += utf8::Decode(p, end, &c, &valid);
    invalid_ |= !valid;
    if (strip && IsPunct(c)) continue;
    if (lower) {
      uint32_t low[3];
      const size_t n = Lower(c, low);
      for (size_t j = 0; j < n; j++) {
        if (strip && IsPunct(low[j])) continue;
        feed(low[j]);
      }
    } else {
      feed(c);
    }
  }
  FinishWords(units, w);
}

void Shingler::Finish() {
  const size_t n = o_.n;
  if (units_ >= n) {
    count_ = units_ - n + 1;
    last_ = n - 1;
  } else if (units_ > 0 && o_.short_text == ShortText::kWhole) {
    count_ = 1;
    last_ = units_ - 1;
  } else {
    count_ = 0;
    last_ = 0;
  }
  if (ascii_) {
    span_ = last_ + 1;
  } else {
    ends_ = o_.unit == TextUnit::kChar ? begin_.data() + 1 : end_.data();
  }
}

template <typename T>
size_t HashDedup::Unique(T* v, size_t n) {
  if (n < 2) return n;
  size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  if (slots_.size() < cap) {
    slots_.assign(cap, Slot{0, 0});
    gen_ = 0;
  }
  if (++gen_ == 0) {  // the stamp wrapped: clear once every 2^32 documents
    for (Slot& sl : slots_) sl.gen = 0;
    gen_ = 1;
  }
  const size_t mask = cap - 1;
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    const uint64_t x = static_cast<uint64_t>(v[i]);
    size_t h = static_cast<size_t>(fast64::Mix64(x)) & mask;
    bool seen = false;
    while (slots_[h].gen == gen_) {
      if (slots_[h].key == x) {
        seen = true;
        break;
      }
      h = (h + 1) & mask;
    }
    if (seen) continue;
    slots_[h] = Slot{x, gen_};
    v[w++] = v[i];
  }
  return w;
}

namespace {

template <typename T, typename F>
inline void WriteWith(const Shingler& s, T* dst, F&& f) {
  const size_t n = s.size();
  for (size_t i = 0; i < n; i++) {
    const std::string_view v = s[i];
    dst[i] = static_cast<T>(f(v.data(), v.size()));
  }
}

}  // namespace

template <typename T>
size_t WriteShingleHashes(const Shingler& s, ShingleHash kind, uint64_t seed, bool dedupe, HashDedup* dd, T* out) {
  const uint32_t seed32 = static_cast<uint32_t>(seed);
  switch (kind) {
    case ShingleHash::kFast64:
      ForEachFast64(s, fast64::PrepareSeed(seed), [out](size_t i, uint64_t h) { out[i] = static_cast<T>(h); });
      break;
    case ShingleHash::kMurmur3_32:
      WriteWith(s, out, [seed32](const char* p, size_t n) { return Murmur3_x86_32(p, n, seed32); });
      break;
    case ShingleHash::kMurmur3_64:
      WriteWith(s, out, [seed32](const char* p, size_t n) {
        uint64_t h[2];
        Murmur3_x64_128(p, n, seed32, h);
        return h[0];
      });
      break;
    case ShingleHash::kSha1_32:
      WriteWith(s, out, [](const char* p, size_t n) { return Sha1Le32(p, n); });
      break;
    case ShingleHash::kMd5_64:
      WriteWith(s, out, [](const char* p, size_t n) { return Md5Be64(p, n); });
      break;
  }
  return dedupe ? dd->Unique(out, s.size()) : s.size();
}

template <typename T>
void AppendShingleHashes(const Shingler& s, ShingleHash kind, uint64_t seed, bool dedupe, HashDedup* dd,
                         std::vector<T>* out) {
  const size_t start = out->size();
  out->resize(start + s.size());
  out->resize(start + WriteShingleHashes<T>(s, kind, seed, dedupe, dd, out->data() + start));
}

template size_t HashDedup::Unique<uint32_t>(uint32_t*, size_t);
template size_t HashDedup::Unique<uint64_t>(uint64_t*, size_t);
template size_t WriteShingleHashes<uint32_t>(const Shingler&, ShingleHash, uint64_t, bool, HashDedup*, uint32_t*);
template size_t WriteShingleHashes<uint64_t>(const Shingler&, ShingleHash, uint64_t, bool, HashDedup*, uint64_t*);
template void AppendShingleHashes<uint32_t>(const Shingler&, ShingleHash, uint64_t, bool, HashDedup*,
                                            std::vector<uint32_t>*);
template void AppendShingleHashes<uint64_t>(const Shingler&, ShingleHash, uint64_t, bool, HashDedup*,
                                            std::vector<uint64_t>*);

}  // namespace neardup
