#include "text/shingle.h"

#include <algorithm>

#include "hash/digest.h"
#include "hash/fast64.h"
#include "hash/murmur3.h"
#include "text/normalize.h"
#include "text/utf8.h"

namespace neardup {

Status ValidateTextOptions(const TextOptions& o) {
  if (o.n < 1 || o.n > kMaxN)
    return Status(Code::kInvalidArgument, "n must be an integer from 1 to " + std::to_string(kMaxN));
  if (o.unit != TextUnit::kChar && o.unit != TextUnit::kWord)
    return Status(Code::kInvalidArgument, "unknown text unit");
  return Status::Ok();
}

size_t ShingleBound(const TextOptions& o, const uint8_t* p, size_t len, bool* exact) {
  const bool plain = o.unit == TextUnit::kChar && !o.lowercase && !o.strip_punct && !o.fold_space;
  size_t units = o.unit == TextUnit::kChar ? len : (len + 1) / 2;
  *exact = plain && utf8::CountIfValid(p, len, &units);
  if (units == 0) return 0;
  if (units >= o.n) return units - o.n + 1;
  return o.short_text == ShortText::kWhole ? 1 : 0;
}

void Shingler::Reset(const uint8_t* p, size_t len) {
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
    PrepareChars(p, len, normalise || !utf8::IsValid(p, len));
  } else {
    PrepareWords(p, len);
  }
  Finish();
}

// Scratch growth: buffers only grow (never shrink or re-zero), so after the largest document no document
// allocates. Normalised text needs at most 3 bytes per input byte (an invalid byte becomes U+FFFD, 3 bytes;
// lower-casing grows valid text by at most 3/2), and never more code points than input bytes.
template <typename V>
static inline void EnsureSize(V& v, size_t n) {
  if (v.size() < n) v.resize(n + n / 4 + 16);
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
  while (p < end) {
    uint32_t c;
    if (*p < 0x80) {
      c = *p++;
    } else {
      bool valid;
      p += utf8::Decode(p, end, &c, &valid);
      invalid_ |= !valid;
    }
    if (strip && text::IsPunct(c)) continue;
    if (o_.lowercase) {
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

// Tokens are written joined by single spaces. ASCII bytes go through a 256-entry table (class and mapped
// byte, built from the same rules as the general path, so both agree); any other byte starts a UTF-8
// sequence, decoded and classified one code point at a time.
void Shingler::PrepareWords(const uint8_t* p, size_t len) {
  if (!word_table_) BuildWordTable();
  const uint8_t* end = p + len;
  EnsureSize(buf_, 3 * len + 16);
  EnsureSize(begin_, len / 2 + 2);
  EnsureSize(end_, len / 2 + 2);
  char* out = &buf_[0];
  uint32_t* beg = begin_.data();
  uint32_t* fin = end_.data();
  size_t w = 0, units = 0;
  bool in_token = false;
  const bool nonword = o_.split == WordSplit::kNonWord;
  const uint8_t* kind = wkind_;
  const uint8_t* map = wmap_;
  auto put = [&](uint32_t c) {
    const bool sep = nonword ? !text::IsWord(c) : text::IsSpace(c);
    if (sep) {
      if (in_token) {
        fin[units - 1] = static_cast<uint32_t>(w);
        in_token = false;
      }
      return;
    }
    if (!in_token) {
      if (units > 0) out[w++] = ' ';
      beg[units++] = static_cast<uint32_t>(w);
      in_token = true;
    }
    if (c < 0x80) {
      out[w++] = static_cast<char>(c);
    } else {
      w += utf8::Encode(c, reinterpret_cast<uint8_t*>(out + w));
    }
  };
  while (p < end) {
    const uint8_t k = kind[*p];
    if (k == kWordChar) {
      if (!in_token) {
        if (units > 0) out[w++] = ' ';
        beg[units++] = static_cast<uint32_t>(w);
        in_token = true;
      }
      // The rest of an ASCII run of token characters (stripped punctuation inside a token is dropped).
      do {
        out[w++] = static_cast<char>(map[*p++]);
      } while (p < end && kind[*p] == kWordChar);
      continue;
    }
    if (k == kWordSep) {
      if (in_token) {
        fin[units - 1] = static_cast<uint32_t>(w);
        in_token = false;
      }
      do {
        p++;
      } while (p < end && kind[*p] == kWordSep);
      continue;
    }
    if (k == kWordSkip) {
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
  if (in_token) fin[units - 1] = static_cast<uint32_t>(w);
  units_ = units;
  base_ = buf_.data();
  base_len_ = w;
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
    case ShingleHash::kFast64: {
      // Short shingles (the common case) are loaded with one unaligned read when the text buffer allows.
      const uint64_t ps = fast64::PrepareSeed(seed);
      const uint8_t* base = reinterpret_cast<const uint8_t*>(s.text().data());
      const uint8_t* end = base + s.text().size();
      if (s.fixed_width() && s.span() <= 8) {
        // ASCII char n-grams: every shingle has the same width; one load, one mask, two multiplies.
        const size_t w = s.span(), count = s.size(), len = s.text().size();
        const uint64_t mask = w == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * w)) - 1;
        const size_t fast = len >= 8 ? std::min(count, len - 7) : 0;
        size_t i = 0;
        for (; i < fast; i++) out[i] = static_cast<T>(fast64::HashSmall(fast64::R64(base + i) & mask, w, ps));
        for (; i < count; i++) out[i] = static_cast<T>(fast64::HashSmall(fast64::LoadSmall(base + i, w, end), w, ps));
        break;
      }
      WriteWith(s, out, [ps, end](const char* p, size_t n) {
        const uint8_t* q = reinterpret_cast<const uint8_t*>(p);
        if (n <= 8) return fast64::HashSmall(fast64::LoadSmall(q, n, end), n, ps);
        return fast64::HashPrepared(q, n, ps);
      });
      break;
    }
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
