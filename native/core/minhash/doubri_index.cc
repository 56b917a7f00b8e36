#include "minhash/doubri_index.h"
#include "util/endian.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "io/file.h"
#include "minhash/doubri_hashfile_reader.h"
#include "parallel/pool.h"

namespace neardup {
namespace doubri {
namespace {


// A band in memcmp order: the first 8 bytes as a big-endian integer decide most comparisons.
struct BandRef {
  uint64_t prefix;
  const uint8_t* bytes;
  uint64_t index;  // global position of the record (ties: input order)
};

inline bool BandLess(const BandRef& x, const BandRef& y) {
  if (x.prefix != y.prefix) return x.prefix < y.prefix;
  const int c = std::memcmp(x.bytes + 8, y.bytes + 8, kBandBytes - 8);
  if (c != 0) return c < 0;
  return x.index < y.index;
}

inline bool BandEqual(const BandRef& x, const BandRef& y) {
  return x.prefix == y.prefix && std::memcmp(x.bytes + 8, y.bytes + 8, kBandBytes - 8) == 0;
}

struct Group {
  std::vector<HashFile> files;
  std::vector<FlagFile> flags;
};

Status OpenGroup(const std::vector<std::string>& paths, Group* g) {
  g->files.resize(paths.size());
  g->flags.resize(paths.size());
  for (size_t f = 0; f < paths.size(); f++) {
    Status s = g->files[f].Open(paths[f]);
    if (!s.ok()) return s;
    s = g->flags[f].Read(paths[f] + ".f", g->files[f].size());
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status Cancelled() { return Status(Code::kCancelled, "cancelled"); }

Status RunParallel(size_t n, size_t grain, size_t slots, const parallel::ChunkFn& fn, const std::atomic<bool>* stop) {
  parallel::ParallelFor(n, grain, slots, fn, stop);
  if (stop && stop->load()) return Cancelled();
  return Status::Ok();
}

}  // namespace

std::string IndexFileName(const std::string& prefix, uint32_t band) {
  char buf[16];
  std::snprintf(buf, sizeof buf, ".%05u", band);
  return prefix + buf;
}

std::string FormatStats(const Stats& s) {
  std::string out = "{\"target\": \"";
  for (char c : s.target) {
    // The target is a file name; escape what JSON requires.
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += esc;
    } else {
      out += c;
    }
  }
  const double total = static_cast<double>(s.total);
  const double active_rate = s.total ? static_cast<double>(s.active) / total : 0.0;
  const double drop_rate = s.total ? static_cast<double>(s.drops) / total : 0.0;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "\", \"num_total\": %llu, \"num_active\": %llu, \"num_skips\": %llu, \"num_drops\": %llu, "
                "\"active_rate\": %.6f, \"drop_rate\": %.6f}",
                static_cast<unsigned long long>(s.total), static_cast<unsigned long long>(s.active),
                static_cast<unsigned long long>(s.skips), static_cast<unsigned long long>(s.drops), active_rate,
                drop_rate);
  out += buf;
  return out;
}

Status Self(const std::vector<std::string>& hash_files, const std::string& index_prefix, size_t slots,
            const std::atomic<bool>* stop, std::vector<Stats>* stats) {
  if (slots == 0) slots = 1;
  Group g;
  Status s = OpenGroup(hash_files, &g);
  if (!s.ok()) return s;

  // Active records (flag '1'), in input order across files.
  std::vector<const uint8_t*> recs;
  std::vector<std::pair<uint32_t, uint64_t>> where;  // (file, record)
  for (size_t f = 0; f < g.files.size(); f++) {
    const auto& flags = g.flags[f].flags();
    for (uint64_t i = 0; i < g.files[f].size(); i++) {
      if (flags[i] == '1') {
        recs.push_back(g.files[f].record(i));
        where.emplace_back(static_cast<uint32_t>(f), i);
      }
    }
  }
  const uint64_t m = recs.size();
  if (m >= (uint64_t(1) << 32)) return Status(Code::kUnsupported, "more than 2^32-1 active records in one self run");

  // Per band: sort the bands, number the classes of equal bands. group[a * kBands + j] = class of record a.
  std::vector<uint32_t> group(m * kBands);
  std::vector<std::vector<BandRef>> scratch(slots);
  s = RunParallel(
      kBands, 1, slots,
      [&](size_t begin, size_t end, size_t slot) {
        auto& v = scratch[slot];
        for (size_t j = begin; j < end; j++) {
          v.resize(m);
          for (uint64_t a = 0; a < m; a++) {
            const uint8_t* b = recs[a] + j * kBandBytes;
            v[a] = BandRef{LoadBe64(b), b, a};
          }
          std::sort(v.begin(), v.end(), BandLess);
          uint32_t cls = 0;
          for (uint64_t x = 0; x < m; x++) {
            if (x > 0 && !BandEqual(v[x - 1], v[x])) cls++;
            group[v[x].index * kBands + j] = cls;
          }
        }
      },
      stop);
  if (!s.ok()) return s;
  scratch.clear();
  scratch.shrink_to_fit();

  // The sequential decision: drop a record when a band class already holds a kept record.
  std::vector<std::vector<bool>> taken(kBands, std::vector<bool>(m, false));
  std::vector<uint8_t> kept(m, 0);
  stats->clear();
  stats->resize(g.files.size());
  for (size_t f = 0; f < g.files.size(); f++) {
    (*stats)[f].target = BaseName(hash_files[f]);
    (*stats)[f].total = g.files[f].size();
    for (uint8_t c : g.flags[f].flags()) (*stats)[f].skips += c == '0';
  }
  for (uint64_t a = 0; a < m; a++) {
    const uint32_t* cls = &group[a * kBands];
    bool dup = false;
    for (uint32_t j = 0; j < kBands && !dup; j++) dup = taken[j][cls[j]];
    if (dup) {
      g.flags[where[a].first].flags()[where[a].second] = '0';
      (*stats)[where[a].first].drops++;
    } else {
      kept[a] = 1;
      for (uint32_t j = 0; j < kBands; j++) taken[j][cls[j]] = true;
    }
  }
  for (auto& st : *stats) st.active = st.total - st.skips - st.drops;
  group.clear();
  group.shrink_to_fit();
  taken.clear();

  // Index files: the bands of kept records, in memcmp order (classes of kept records are distinct, so the
  // order is total). Written before the flags so that a failure leaves the flags untouched.
  std::vector<uint64_t> kept_list;
  for (uint64_t a = 0; a < m; a++)
    if (kept[a]) kept_list.push_back(a);
  std::vector<Status> band_status(kBands);
  scratch.assign(slots, {});
  s = RunParallel(
      kBands, 1, slots,
      [&](size_t begin, size_t end, size_t slot) {
        auto& v = scratch[slot];
        for (size_t j = begin; j < end; j++) {
          v.clear();
          for (uint64_t a : kept_list) {
            const uint8_t* b = recs[a] + j * kBandBytes;
            v.push_back(BandRef{LoadBe64(b), b, a});
          }
          std::sort(v.begin(), v.end(), BandLess);
          io::AtomicFile out;
          Status st = out.Open(IndexFileName(index_prefix, static_cast<uint32_t>(j)));
          for (size_t x = 0; st.ok() && x < v.size(); x++) st = out.Write(v[x].bytes, kBandBytes);
          if (st.ok()) st = out.Commit();
          band_status[j] = st;
        }
      },
      stop);
  if (!s.ok()) return s;
  for (const Status& st : band_status)
    if (!st.ok()) return st;
  for (const FlagFile& ff : g.flags) {
    s = ff.Write();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status CheckIndexBand(const uint8_t* d, size_t size, const std::string& name, IndexBand* out) {
  if (size % kBandBytes != 0)
    return Status(Code::kCorrupt, "index file '" + name + "' has " + std::to_string(size) + " bytes, not a multiple of 80");
  const uint64_t count = size / kBandBytes;
  for (uint64_t x = 1; x < count; x++) {
    if (std::memcmp(d + (x - 1) * kBandBytes, d + x * kBandBytes, kBandBytes) > 0)
      return Status(Code::kCorrupt, "index file '" + name + "' is not sorted (entry " + std::to_string(x) + ")");
  }
  out->data = d;
  out->count = count;
  return Status::Ok();
}

Status MarkOther(const std::vector<IndexBand>& index, const HashFile& hf, std::vector<uint8_t>* flags_out, size_t slots,
                 const std::atomic<bool>* stop, Stats* st) {
  if (index.size() != kBands || flags_out->size() != hf.size())
    return Status(Code::kInvalidArgument, "MarkOther: 40 index bands and one flag per record");
  auto& flags = *flags_out;
  st->total = hf.size();
  st->skips = st->drops = 0;
  for (uint8_t c : flags) st->skips += c == '0';
  std::vector<uint8_t> hit(hf.size(), 0);
  Status s = RunParallel(
      hf.size(), 256, slots == 0 ? 1 : slots,
      [&](size_t begin, size_t end, size_t) {
        for (size_t i = begin; i < end; i++) {
          if (flags[i] != '1') continue;
          for (uint32_t j = 0; j < kBands; j++) {
            const uint8_t* key = hf.band(i, j);
            const uint8_t* base = index[j].data;
            uint64_t lo = 0, hi = index[j].count;
            while (lo < hi) {
              const uint64_t mid = lo + (hi - lo) / 2;
              if (std::memcmp(base + mid * kBandBytes, key, kBandBytes) < 0)
                lo = mid + 1;
              else
                hi = mid;
            }
            if (lo < index[j].count && std::memcmp(base + lo * kBandBytes, key, kBandBytes) == 0) {
              hit[i] = 1;
              break;
            }
          }
        }
      },
      stop);
  if (!s.ok()) return s;
  for (uint64_t i = 0; i < hf.size(); i++) {
    if (hit[i]) {
      flags[i] = '0';
      st->drops++;
    }
  }
  st->active = st->total - st->skips - st->drops;
  return Status::Ok();
}

Status Other(const std::string& index_prefix, const std::vector<std::string>& hash_files, size_t slots,
             const std::atomic<bool>* stop, std::vector<Stats>* stats) {
  if (slots == 0) slots = 1;
  std::vector<io::MappedFile> maps(kBands);
  std::vector<IndexBand> index(kBands);
  for (uint32_t j = 0; j < kBands; j++) {
    const std::string name = IndexFileName(index_prefix, j);
    Status s = maps[j].Open(name);
    if (!s.ok())
      return Status(s.code(), s.message() + " (doubri 1.0 would read a missing index file as empty; neardup refuses)");
    s = CheckIndexBand(maps[j].data(), maps[j].size(), name, &index[j]);
    if (!s.ok()) return s;
  }
  Group g;
  Status s = OpenGroup(hash_files, &g);
  if (!s.ok()) return s;

  stats->clear();
  stats->resize(g.files.size());
  for (size_t f = 0; f < g.files.size(); f++) {
    (*stats)[f].target = BaseName(hash_files[f]);
    s = MarkOther(index, g.files[f], &g.flags[f].flags(), slots, stop, &(*stats)[f]);
    if (!s.ok()) return s;
  }
  for (const FlagFile& ff : g.flags) {
    s = ff.Write();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace doubri
}  // namespace neardup
