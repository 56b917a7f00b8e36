// Fuzz target: the LSH index loader (kind LSHI, versions 1 and 2) over images with valid checksums. Whatever
// it accepts must be safe to query, every handle a query, candidate pair or cluster reports must be a live
// entry, and the index must stay consistent through removals, inserts and a merged save: the saved image
// loads back (with verification) holding the same keys in the same order, with the same query answers.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_image.h"
#include "minhash/lsh.h"

using namespace neardup;

namespace {

std::string KeyString(const lsh::Index& ix, uint64_t h) {
  lsh::Key k;
  if (!ix.KeyOf(h, &k).ok()) std::abort();  // verified: every live key is readable
  return lsh::KeyText(k);
}

std::vector<std::string> Keys(const lsh::Index& ix, const std::vector<uint64_t>& hs) {
  std::vector<std::string> out;
  for (uint64_t h : hs) out.push_back(KeyString(ix, h));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char kind[4] = {'L', 'S', 'H', 'I'};
  std::vector<uint8_t> img = fuzz::FixedImage(data, size, kind, 2);
  std::unique_ptr<lsh::Index> ix;
  Status s = lsh::Index::LoadBytes(img.data(), img.size(), "fuzz.lsh", /*verify=*/true, &ix);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  std::vector<uint64_t> handles, reps;
  ix->Clusters(&handles, &reps);
  if (reps.size() != handles.size() || handles.size() != ix->size()) std::abort();
  auto is_live = [&](uint64_t h) { return std::binary_search(handles.begin(), handles.end(), h); };
  for (uint64_t r : reps)
    if (!is_live(r)) std::abort();
  if (handles.size() <= 64) {  // pairs are quadratic in a bucket: only for small images
    std::vector<lsh::Pair> pairs;
    ix->CandidatePairs(&pairs);
    for (const auto& p : pairs)
      if (!is_live(p.first) || !is_live(p.second) || p.first >= p.second) std::abort();
  }
  // A query with a signature made of the image's own bytes.
  const lsh::Params& p = ix->params();
  std::vector<uint8_t> sig(p.signature_bytes());
  for (size_t i = 0; i < sig.size(); i++) sig[i] = img[i % img.size()];
  std::vector<uint64_t> out;
  ix->Query(sig.data(), &out);
  for (uint64_t h : out)
    if (!is_live(h)) std::abort();
  // Every live key is found again.
  for (uint64_t h : handles) {
    lsh::Key k;
    ix->KeyOf(h, &k);
    uint64_t found;
    if (!ix->Find(k, &found) || found != h) std::abort();
  }
  if (ix->store().data || handles.size() > 256) return 0;  // inserts need data blobs; keep big images fast
  // Remove every third entry, insert two new ones, save, load back: the same keys in the same order.
  for (size_t i = 0; i < handles.size(); i += 3) {
    lsh::Key k;
    ix->KeyOf(handles[i], &k);
    if (k.type == lsh::KeyType::kString) {
      std::string copy(k.s);  // the key's bytes live in the index until removal
      if (!ix->Remove(lsh::Key::Str(copy)).ok()) std::abort();
    } else if (!ix->Remove(k).ok()) {
      std::abort();
    }
  }
  std::vector<uint64_t> offsets{0, 10, 20}, ints{~uint64_t(0) - 7, ~uint64_t(0) - 3};
  lsh::KeyBatch kb;
  kb.type = ix->key_type();
  kb.n = 2;
  kb.ints = ints.data();
  kb.bytes = reinterpret_cast<const uint8_t*>("fuzz-key-afuzz-key-b");
  kb.offsets = offsets.data();
  std::vector<uint8_t> two(2 * p.signature_bytes());
  for (size_t i = 0; i < two.size(); i++) two[i] = img[(i * 7) % img.size()];
  s = ix->Insert(kb, two.data(), nullptr, 1, nullptr);
  if (!s.ok() && s.code() != Code::kDuplicateKey) std::abort();
  std::vector<uint64_t> live;
  ix->Handles(&live);
  lsh::VectorSink sink;
  if (!ix->SaveTo(&sink).ok()) std::abort();
  std::unique_ptr<lsh::Index> back;
  if (!lsh::Index::LoadBytes(sink.bytes.data(), sink.bytes.size(), "saved", true, &back).ok()) std::abort();
  std::vector<uint64_t> back_live;
  back->Handles(&back_live);
  if (Keys(*ix, live) != Keys(*back, back_live)) std::abort();
  std::vector<uint64_t> a, b;
  ix->Query(sig.data(), &a);
  back->Query(sig.data(), &b);
  if (Keys(*ix, a) != Keys(*back, b)) std::abort();
  return 0;
}
