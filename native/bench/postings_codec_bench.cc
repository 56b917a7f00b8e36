// Posting-list codecs on the lists of a real segment: size and decode speed of delta + varint (the store's
// version 1), Rice (k = floor(log2(U/c))), per-list bit packing of the gaps and Elias-Fano (the store's
// codec, postings/codec.h), and the key-table layouts. Decoders run alternately, 5 rounds, medians.
// Usage: postings_codec_bench SEGMENT.pst   (pin it: taskset -c 0 build-core/rel/postings_codec_bench F)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "postings/codec.h"
#include "postings/store.h"

using namespace neardup;
using namespace neardup::postings;

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Encoded {
  const char* name;
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> at;  // byte (varint) or bit offset of each list
  uint64_t size_bits = 0;
};

struct Decoders {
  const std::vector<std::vector<uint32_t>>& lists;
  uint64_t universe;
  const Encoded &varint, &rice, &pack, &ef;
  uint32_t* out;
  uint64_t* check;
};

__attribute__((noinline)) void DecodeVarint(const Decoders& d) {
  for (size_t li = 0; li < d.lists.size(); li++) {
    const size_t n = d.lists[li].size();
    const uint8_t* p = d.varint.bytes.data() + d.varint.at[li];
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
      uint32_t v = 0;
      unsigned sh = 0;
      uint8_t b;
      do {
        b = *p++;
        v |= uint32_t(b & 0x7f) << sh;
        sh += 7;
      } while (b & 0x80);
      prev += v;
      d.out[i] = prev;
    }
    *d.check += d.out[n - 1];
  }
}

__attribute__((noinline)) void DecodeRice(const Decoders& d) {
  const BitReader r(d.rice.bytes.data(), d.rice.size_bits);
  for (size_t li = 0; li < d.lists.size(); li++) {
    const size_t n = d.lists[li].size();
    const unsigned k = EfLowBits(n, d.universe);
    uint64_t pos = d.rice.at[li], v = 0;
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
      r.Rice(&pos, d.rice.size_bits, k, &v);
      prev = i ? prev + uint32_t(v) + 1 : uint32_t(v);
      d.out[i] = prev;
    }
    *d.check += d.out[n - 1];
  }
}

__attribute__((noinline)) void DecodePacked(const Decoders& d) {
  const BitReader r(d.pack.bytes.data(), d.pack.size_bits);
  for (size_t li = 0; li < d.lists.size(); li++) {
    const size_t n = d.lists[li].size();
    uint64_t pos = d.pack.at[li];
    const unsigned w = unsigned(r.Get56(pos, 6));
    pos += 6;
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++, pos += w) {
      const uint32_t g = uint32_t(r.Get56(pos, w));
      prev = i ? prev + g + 1 : g;
      d.out[i] = prev;
    }
    *d.check += d.out[n - 1];
  }
}

__attribute__((noinline)) void DecodeEliasFano(const Decoders& d) {
  const BitReader r(d.ef.bytes.data(), d.ef.size_bits);
  for (size_t li = 0; li < d.lists.size(); li++) {
    const size_t n = d.lists[li].size();
    r.EliasFano(d.ef.at[li], n, d.universe, 0, d.out);
    *d.check += d.out[n - 1];
  }
}

__attribute__((noinline)) void LookupAll(const Segment& seg, const std::vector<uint32_t>& keys, uint64_t* check) {
  std::vector<uint32_t> v;
  for (uint32_t k : keys) {
    v.clear();
    seg.FindList(k, &v);
    *check += v.back();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: postings_codec_bench SEGMENT.pst\n");
    return 2;
  }
  Segment seg;
  Status st = seg.Open(argv[1], true);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  std::vector<std::vector<uint32_t>> lists;
  std::vector<uint32_t> keys;
  Segment::Block blk;
  for (uint64_t b = 0; b < seg.num_blocks(); b++) {
    seg.ReadBlock(b, &blk);
    for (size_t j = 0; j < blk.n; j++) {
      std::vector<uint32_t> v;
      seg.DecodeList(blk, j, &v);
      for (auto& x : v) x -= seg.id_base();
      lists.push_back(std::move(v));
      keys.push_back(blk.keys[j]);
    }
  }
  const uint64_t universe = seg.id_universe(), posts = seg.num_posts(), nkeys = lists.size();
  std::printf("%s: %llu keys, %llu posts (%.2f per key), id range %llu\n", argv[1], (unsigned long long)nkeys,
              (unsigned long long)posts, double(posts) / double(nkeys), (unsigned long long)universe);

  // --- encode
  Encoded varint{"delta + varint", {}, {}, 0}, rice{"Rice k=floor(log2(U/c))", {}, {}, 0},
      pack{"bit-packed gaps (per list)", {}, {}, 0}, ef{"Elias-Fano (store)", {}, {}, 0};
  {
    BitWriter rw, pw, ew;
    for (const auto& l : lists) {
      varint.at.push_back(varint.bytes.size());
      uint32_t prev = 0;
      for (size_t i = 0; i < l.size(); i++) {
        uint32_t d = l[i] - prev;
        prev = l[i];
        while (d >= 0x80) varint.bytes.push_back(uint8_t(d | 0x80)), d >>= 7;
        varint.bytes.push_back(uint8_t(d));
      }
      const unsigned k = EfLowBits(l.size(), universe);
      rice.at.push_back(rw.bits());
      for (size_t i = 0; i < l.size(); i++) rw.Rice(i ? l[i] - l[i - 1] - 1 : l[i], k);
      uint32_t gmax = 0;
      for (size_t i = 0; i < l.size(); i++) gmax = std::max(gmax, i ? l[i] - l[i - 1] - 1 : l[i]);
      const unsigned w = BitWidth(gmax);
      pack.at.push_back(pw.bits());
      pw.Put(w, 6);
      for (size_t i = 0; i < l.size(); i++) pw.Put(i ? l[i] - l[i - 1] - 1 : l[i], w);
      ef.at.push_back(ew.bits());
      PutEliasFano(&ew, l.data(), l.size(), 0, universe);
    }
    varint.size_bits = varint.bytes.size() * 8;
    rice.size_bits = rw.bits();
    pack.size_bits = pw.bits();
    ef.size_bits = ew.bits();
    for (auto* p : {&rw, &pw, &ew}) p->Finish();
    rice.bytes = rw.bytes();
    pack.bytes = pw.bytes();
    ef.bytes = ew.bytes();
    for (auto* e : {&varint, &rice, &pack, &ef}) e->bytes.resize(e->bytes.size() + 16);
  }
  double bound = 0;
  for (const auto& l : lists) {
    const double n = double(l.size()), u = double(universe);
    bound += (std::lgamma(u + 1) - std::lgamma(n + 1) - std::lgamma(u - n + 1)) / std::log(2.0);
  }

  // --- decode, alternating, 5 rounds (each decoder its own function: callgrind counts them apart)
  std::vector<uint32_t> out(universe + 64);
  uint64_t check = 0;
  Decoders d{lists, universe, varint, rice, pack, ef, out.data(), &check};
  auto run = [&](int which) {
    const auto t0 = std::chrono::steady_clock::now();
    if (which == 0) DecodeVarint(d);
    if (which == 1) DecodeRice(d);
    if (which == 2) DecodePacked(d);
    if (which == 3) DecodeEliasFano(d);
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / double(posts);
  };
  std::vector<double> ns[4];
  for (int round = 0; round < 5; round++)
    for (int c = 0; c < 4; c++) ns[c].push_back(run(c));
  // the store's own path: a lookup (directory search, key block, list) of every key, in key order
  std::vector<double> look;
  for (int round = 0; round < 5; round++) {
    const auto t0 = std::chrono::steady_clock::now();
    LookupAll(seg, keys, &check);
    look.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / double(nkeys));
  }

  std::printf("| lists codec | MB | bits/post | decode ns/post (median of 5) |\n|---|---|---|---|\n");
  const Encoded* all[4] = {&varint, &rice, &pack, &ef};
  for (int c = 0; c < 4; c++)
    std::printf("| %s | %.3f | %.2f | %.2f |\n", all[c]->name, all[c]->size_bits / 8e6, double(all[c]->size_bits) / double(posts),
                Median(ns[c]));
  std::printf("| information bound log2 C(U, c) | %.3f | %.2f | |\n", bound / 8e6, bound / double(posts));

  // key tables
  uint64_t fixed_bits = 0, rice_bits = 0;
  for (uint64_t b0 = 0; b0 < nkeys; b0 += kBlockKeys) {
    const uint64_t e = std::min<uint64_t>(nkeys, b0 + kBlockKeys);
    std::vector<uint64_t> gaps, counts;
    uint64_t cmax = 0;
    for (uint64_t i = b0; i < e; i++) {
      if (i > b0) gaps.push_back(uint64_t(keys[i]) - keys[i - 1] - 1);
      counts.push_back(lists[i].size() - 1);
      cmax = std::max<uint64_t>(cmax, lists[i].size() - 1);
    }
    fixed_bits += 24 * 8 + (e - b0 - 1) * BitWidth(uint64_t(keys[e - 1]) - keys[b0]) + (e - b0) * BitWidth(cmax);
    rice_bits += DirEntrySize<uint32_t>() * 8 + RiceCost(gaps.data(), gaps.size(), BestRiceK(gaps.data(), gaps.size(), 64)) +
                 RiceCost(counts.data(), counts.size(), BestRiceK(counts.data(), counts.size(), 32));
  }
  std::printf("| key table | MB |\n|---|---|\n");
  std::printf("| version 1: u32 key, u32 count, u64 offset | %.3f |\n", nkeys * 16 / 1e6);
  std::printf("| blocks of 64: fixed-width key offsets and counts, 24-byte directory entries | %.3f |\n", fixed_bits / 8e6);
  std::printf("| blocks of 64: Rice key gaps and counts, 14-byte directory entries (store) | %.3f |\n", rice_bits / 8e6);
  std::printf("lookup of every key through the store (directory, key block, list): %.0f ns per key (median of 5)\n", Median(look));
  std::printf("(check %llu)\n", (unsigned long long)check);
  return 0;
}
