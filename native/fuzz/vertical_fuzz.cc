// Fuzz target: the vertical-text parser and Onion filter (filter/vertical.h) on arbitrary bytes, fed whole
// and in two chunks split at a line boundary. Every input line gets exactly one flag, the marked output
// has one line per flag, and the decisions do not depend on the chunking.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "filter/onion.h"
#include "filter/seen_set.h"
#include "filter/vertical.h"

using namespace neardup;
using namespace neardup::filter;

static bool Run(const uint8_t* data, size_t size, size_t split, OnionOptions o, VerticalOutput* out) {
  Deduper d(o, MakeSeenSet(size % 16 == 0 ? SeenKind::kApprox : SeenKind::kExact, 0.01));
  VerticalFilter v(&d, VerticalTags(), OutputMode::kMark);
  if (split > 0 && !v.Push(data, split, false, 1, nullptr, out).ok()) return false;
  return v.Push(data + split, size - split, true, 1, nullptr, out).ok();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  OnionOptions o;
  if (size > 0) {
    o.n = 1 + data[0] % 4;
    o.max_stub = data[0] >> 4;
    o.within_doc = (data[0] & 8) != 0;
    o.threshold = 0.25f * (1 + (data[0] >> 6));
  }
  size_t lines = 0;
  for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
  if (size > 0 && data[size - 1] != '\n') lines++;
  size_t split = 0;  // just after the middle-most '\n'
  for (size_t i = size / 2; i < size; i++)
    if (data[i] == '\n') {
      split = i + 1;
      break;
    }
  VerticalOutput whole, parts;
  if (!Run(data, size, 0, o, &whole)) return 0;
  if (whole.flags.size() != lines) std::abort();
  size_t marked = 0;
  for (char c : whole.text) marked += c == '\n';
  if (marked != lines) std::abort();
  if (!Run(data, size, split, o, &parts)) std::abort();
  if (parts.flags != whole.flags || parts.text != whole.text) std::abort();
  return 0;
}
