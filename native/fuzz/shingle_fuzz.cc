// Fuzz target: the shingle stream on arbitrary bytes under every option combination (decided by the first
// byte and the size). Invariants: every shingle lies inside the normalised text, is valid UTF-8, and the hash
// writers produce size() values (fewer with dedupe, all distinct); Unicode normalisation is idempotent and
// within its bounds.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

#include "text/shingle.h"
#include "text/utf8.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t k = data[0];
  TextOptions o;
  o.unit = (k & 1) ? TextUnit::kWord : TextUnit::kChar;
  o.n = 1 + ((k >> 1) & 7);
  o.split = (k & 16) ? WordSplit::kNonWord : WordSplit::kWhitespace;
  o.lowercase = k & 32;
  o.strip_punct = k & 64;
  o.fold_space = k & 128;
  o.short_text = (size & 1) ? ShortText::kNone : ShortText::kWhole;
  o.normalize = static_cast<text::NormalForm>((size >> 1) & 3);
  Shingler s(o);
  s.Reset(data + 1, size - 1);
  const std::string_view text = s.text();
  for (size_t i = 0; i < s.size(); i++) {
    const std::string_view v = s[i];
    if (v.data() < text.data() || v.data() + v.size() > text.data() + text.size()) std::abort();
    if (!utf8::IsValid(reinterpret_cast<const uint8_t*>(v.data()), v.size())) std::abort();
  }
  bool exact;
  if (ShingleBound(o, data + 1, size - 1, &exact) < s.size()) std::abort();
  HashDedup dd;
  std::vector<uint64_t> all, uniq;
  AppendShingleHashes<uint64_t>(s, ShingleHash::kFast64, k, false, &dd, &all);
  AppendShingleHashes<uint64_t>(s, ShingleHash::kFast64, k, true, &dd, &uniq);
  if (all.size() != s.size()) std::abort();
  if (std::set<uint64_t>(all.begin(), all.end()).size() != uniq.size()) std::abort();
  if (o.normalize != text::NormalForm::kNone) {
    text::Normalizer nz;
    RawBuffer<uint8_t> a, b;
    bool bad = false;
    const size_t n = nz.Normalize(o.normalize, data + 1, size - 1, &a, &bad);
    if (n > text::NormalizedBytesBound(o.normalize, size - 1) || !utf8::IsValid(a.data(), n)) std::abort();
    size_t cps = 0;
    utf8::CountIfValid(a.data(), n, &cps);
    if (cps > text::NormalizedCodePointsBound(o.normalize, size - 1)) std::abort();
    const size_t m = nz.Normalize(o.normalize, a.data(), n, &b, &bad);
    if (m != n || std::memcmp(a.data(), b.data(), n) != 0) std::abort();
  }
  return 0;
}
