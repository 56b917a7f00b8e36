#include "text/shingle.h"

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

void Shingler::PrepareChars(const uint8_t* p, size_t len, bool copy) {
  const uint8_t* end = p + len;
  begin_.clear();
  end_.clear();
  if (!copy) {
    // Valid UTF-8 with no normalisation: record code point offsets, spans into the caller's bytes.
    begin_.reserve(len + 1);
    for (size_t i = 0; i < len;) {
      begin_.push_back(static_cast<uint32_t>(i));
      const uint8_t b = p[i];
      i += b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    }
    units_ = begin_.size();
    begin_.push_back(static_cast<uint32_t>(len));
    base_ = reinterpret_cast<const char*>(p);
    base_len_ = len;
    return;
  }
  buf_.clear();
  buf_.reserve(len + 16);
  bool pending_space = false;
  auto emit = [&](uint32_t c) {
    if (o_.fold_space) {
      if (text::IsSpace(c)) {
        pending_space = !begin_.empty();
        return;
      }
      if (pending_space) {
        begin_.push_back(static_cast<uint32_t>(buf_.size()));
        buf_.push_back(' ');
        pending_space = false;
      }
    }
    begin_.push_back(static_cast<uint32_t>(buf_.size()));
    uint8_t tmp[4];
    const size_t k = utf8::Encode(c, tmp);
    buf_.append(reinterpret_cast<const char*>(tmp), k);
  };
  while (p < end) {
    uint32_t c;
    bool valid;
    p += utf8::Decode(p, end, &c, &valid);
    invalid_ |= !valid;
    if (o_.strip_punct && text::IsPunct(c)) continue;
    if (o_.lowercase) {
      uint32_t low[3];
      const size_t k = text::Lower(c, low);
      for (size_t j = 0; j < k; j++) {
        if (o_.strip_punct && text::IsPunct(low[j])) continue;
        emit(low[j]);
      }
    } else {
      emit(c);
    }
  }
  units_ = begin_.size();
  begin_.push_back(static_cast<uint32_t>(buf_.size()));
  base_ = buf_.data();
  base_len_ = buf_.size();
}

void Shingler::PrepareWords(const uint8_t* p, size_t len) {
  const uint8_t* end = p + len;
  buf_.clear();
  buf_.reserve(len + 16);
  begin_.clear();
  end_.clear();
  bool in_token = false;
  const bool nonword = o_.split == WordSplit::kNonWord;
  auto put = [&](uint32_t c) {
    const bool sep = nonword ? !text::IsWord(c) : text::IsSpace(c);
    if (sep) {
      if (in_token) {
        end_.push_back(static_cast<uint32_t>(buf_.size()));
        in_token = false;
      }
      return;
    }
    if (!in_token) {
      if (!begin_.empty()) buf_.push_back(' ');
      begin_.push_back(static_cast<uint32_t>(buf_.size()));
      in_token = true;
    }
    if (c < 0x80) {
      buf_.push_back(static_cast<char>(c));
    } else {
      uint8_t tmp[4];
      const size_t k = utf8::Encode(c, tmp);
      buf_.append(reinterpret_cast<const char*>(tmp), k);
    }
  };
  while (p < end) {
    uint32_t c;
    bool valid;
    if (*p < 0x80) {
      c = *p++;
    } else {
      p += utf8::Decode(p, end, &c, &valid);
      invalid_ |= !valid;
    }
    if (o_.strip_punct && text::IsPunct(c)) continue;
    if (o_.lowercase) {
      uint32_t low[3];
      const size_t k = text::Lower(c, low);
      for (size_t j = 0; j < k; j++) put(low[j]);
    } else {
      put(c);
    }
  }
  if (in_token) end_.push_back(static_cast<uint32_t>(buf_.size()));
  units_ = begin_.size();
  base_ = buf_.data();
  base_len_ = buf_.size();
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
    slots_.assign(cap, 0);
    stamp_.assign(cap, 0);
    gen_ = 0;
  }
  if (++gen_ == 0) {  // the stamp wrapped: clear once every 2^32 documents
    std::fill(stamp_.begin(), stamp_.end(), 0);
    gen_ = 1;
  }
  const size_t mask = cap - 1;
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    const uint64_t x = static_cast<uint64_t>(v[i]);
    size_t h = static_cast<size_t>(fast64::Mix64(x)) & mask;
    bool seen = false;
    while (stamp_[h] == gen_) {
      if (slots_[h] == x) {
        seen = true;
        break;
      }
      h = (h + 1) & mask;
    }
    if (seen) continue;
    stamp_[h] = gen_;
    slots_[h] = x;
    v[w++] = v[i];
  }
  return w;
}

namespace {

template <typename T, typename F>
void AppendWith(const Shingler& s, std::vector<T>* out, F&& f) {
  const size_t n = s.size();
  const size_t start = out->size();
  out->resize(start + n);
  T* dst = out->data() + start;
  for (size_t i = 0; i < n; i++) {
    const std::string_view v = s[i];
    dst[i] = static_cast<T>(f(v.data(), v.size()));
  }
}

}  // namespace

template <typename T>
void AppendShingleHashes(const Shingler& s, ShingleHash kind, uint64_t seed, bool dedupe, HashDedup* dd,
                         std::vector<T>* out) {
  const size_t start = out->size();
  const uint32_t seed32 = static_cast<uint32_t>(seed);
  switch (kind) {
    case ShingleHash::kFast64: {
      const uint64_t ps = fast64::PrepareSeed(seed);
      AppendWith(s, out, [ps](const char* p, size_t n) { return fast64::HashPrepared(p, n, ps); });
      break;
    }
    case ShingleHash::kMurmur3_32:
      AppendWith(s, out, [seed32](const char* p, size_t n) { return Murmur3_x86_32(p, n, seed32); });
      break;
    case ShingleHash::kMurmur3_64:
      AppendWith(s, out, [seed32](const char* p, size_t n) {
        uint64_t h[2];
        Murmur3_x64_128(p, n, seed32, h);
        return h[0];
      });
      break;
    case ShingleHash::kSha1_32:
      AppendWith(s, out, [](const char* p, size_t n) { return Sha1Le32(p, n); });
      break;
    case ShingleHash::kMd5_64:
      AppendWith(s, out, [](const char* p, size_t n) { return Md5Be64(p, n); });
      break;
  }
  if (dedupe) {
    const size_t k = dd->Unique(out->data() + start, out->size() - start);
    out->resize(start + k);
  }
}

template size_t HashDedup::Unique<uint32_t>(uint32_t*, size_t);
template size_t HashDedup::Unique<uint64_t>(uint64_t*, size_t);
template void AppendShingleHashes<uint32_t>(const Shingler&, ShingleHash, uint64_t, bool, HashDedup*,
                                            std::vector<uint32_t>*);
template void AppendShingleHashes<uint64_t>(const Shingler&, ShingleHash, uint64_t, bool, HashDedup*,
                                            std::vector<uint64_t>*);

}  // namespace neardup
