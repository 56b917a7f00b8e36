#include "minhash/pair_verify.h"

#include <algorithm>
#include <numeric>

#include "hash/crc32c.h"
#include "minhash/shingle_set.h"
#include "minhash/union_find.h"
#include "parallel/pool.h"
#include "util/raw_buffer.h"

namespace neardup {
namespace lsh {

Status VerifyPairsExact(const std::vector<uint64_t>& cand, const TextSource& texts, const TextOptions& topt,
                        double t, uint64_t memory_bytes, size_t slots, const std::atomic<bool>* stop,
                        std::vector<uint8_t>* keep, std::vector<float>* exact, VerifyStats* stats) {
  // The documents of candidate pairs (dense indexes 0..m-1 in document order), ordered by connected
  // component of the candidate graph so that partners sit close together.
  std::vector<uint32_t> docs;
  docs.reserve(cand.size() * 2);
  for (uint64_t c : cand) {
    docs.push_back(static_cast<uint32_t>(c >> 32));
    docs.push_back(static_cast<uint32_t>(c));
  }
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  const size_t m = docs.size();
  auto dense = [&](uint32_t doc) {
    return static_cast<uint32_t>(std::lower_bound(docs.begin(), docs.end(), doc) - docs.begin());
  };
  std::vector<uint32_t> pa(cand.size()), pb(cand.size());  // dense indexes of each pair
  UnionFind uf(m);
  for (size_t i = 0; i < cand.size(); i++) {
    pa[i] = dense(static_cast<uint32_t>(cand[i] >> 32));
    pb[i] = dense(static_cast<uint32_t>(cand[i]));
    uf.Union(pa[i], pb[i]);
  }
  std::vector<uint32_t> order(m), rank(m);
  {
    std::vector<uint32_t> root;
    uf.Roots(&root);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return root[x] < root[y]; });
    for (size_t r = 0; r < m; r++) rank[order[r]] = static_cast<uint32_t>(r);
  }
  auto text_len = [&](uint32_t d) { return texts.Length(docs[d]); };
  auto bound = [&](uint32_t d) { return ShingleBoundOfLength(topt, text_len(d)); };
  // Blocks of consecutive ranks whose sets fit the budget (at least one document each).
  const uint64_t budget = std::max<uint64_t>((memory_bytes ? memory_bytes : kDefaultVerifyBytes) / 8, 1);
  std::vector<uint32_t> block_start{0}, block_of(m);
  uint64_t in_block = 0, largest_block = 0;
  for (size_t r = 0; r < m; r++) {
    const uint64_t b = bound(order[r]);
    if (in_block > 0 && in_block + b > budget) {
      block_start.push_back(static_cast<uint32_t>(r));
      in_block = 0;
    }
    in_block += b;
    largest_block = std::max(largest_block, in_block);
    block_of[r] = static_cast<uint32_t>(block_start.size() - 1);
  }
  block_start.push_back(static_cast<uint32_t>(m));
  const size_t blocks = m ? block_start.size() - 1 : 0;
  // Pairs by (block of the lower rank, higher rank): a block's own pairs first, then those reaching a later
  // block grouped by that later document.
  struct Job {
    uint32_t block, lo, hi, pair;
  };
  std::vector<Job> jobs(cand.size());
  for (size_t i = 0; i < cand.size(); i++) {
    const uint32_t ra = rank[pa[i]], rb = rank[pb[i]];
    const uint32_t lo = std::min(ra, rb), hi = std::max(ra, rb);
    jobs[i] = Job{block_of[lo], lo, hi, static_cast<uint32_t>(i)};
  }
  std::sort(jobs.begin(), jobs.end(), [](const Job& x, const Job& y) {
    return x.block != y.block ? x.block < y.block : x.hi != y.hi ? x.hi < y.hi : x.pair < y.pair;
  });
  std::vector<uint32_t>().swap(pa);
  std::vector<uint32_t>().swap(pb);
  std::vector<uint32_t>().swap(rank);

  auto text_of = [&](uint32_t d, SetScratch* sc, const uint8_t** p) { return texts.Text(docs[d], sc, p); };

  if (slots == 0) slots = 1;
  std::vector<std::unique_ptr<SetScratch>> scratch(slots);
  for (auto& sc : scratch) sc = std::make_unique<SetScratch>(topt);
  RawBuffer<uint64_t> arena;
  arena.Allocate(static_cast<size_t>(largest_block));
  std::vector<uint64_t> at;   // per rank of the block: offset of its set in the arena
  std::vector<uint32_t> size;  // and its size
  keep->assign(cand.size(), 0);
  exact->assign(cand.size(), 0.0f);
  auto check = [&](uint32_t pair, const uint64_t* x, size_t nx, const uint64_t* y, size_t ny) {
    double j;
    if (JaccardAtLeast(x, nx, y, ny, t, &j)) {
      (*keep)[pair] = 1;
      (*exact)[pair] = static_cast<float>(j);
    }
  };
  size_t next_job = 0;
  for (size_t blk = 0; blk < blocks; blk++) {
    const uint32_t first = block_start[blk], end = block_start[blk + 1];
    at.assign(end - first + 1, 0);
    for (uint32_t r = first; r < end; r++) at[r - first + 1] = at[r - first] + bound(order[r]);
    size.assign(end - first, 0);
    // The block's sets, built in parallel.
    parallel::ParallelFor(end - first, 1, slots, [&](size_t b, size_t e, size_t slot) {
      SetScratch& sc = *scratch[slot];
      for (size_t x = b; x < e && sc.status.ok(); x++) {
        const uint32_t d = order[first + x];
        const uint8_t* p = nullptr;
        sc.status = text_of(d, &sc, &p);
        if (sc.status.ok()) size[x] = static_cast<uint32_t>(BuildSet(p, text_len(d), &sc, arena.data() + at[x]));
      }
    }, stop);
    for (const auto& sc : scratch)
      if (!sc->status.ok()) return sc->status;
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
    stats->sets += end - first;
    // Its own pairs.
    size_t own_end = next_job;
    while (own_end < jobs.size() && jobs[own_end].block == blk && jobs[own_end].hi < end) own_end++;
    parallel::ParallelFor(own_end - next_job, 256, slots, [&](size_t b, size_t e, size_t) {
      for (size_t x = next_job + b; x < next_job + e; x++) {
        const Job& jb = jobs[x];
        const size_t u = jb.lo - first, v = jb.hi - first;
        check(jb.pair, arena.data() + at[u], size[u], arena.data() + at[v], size[v]);
      }
    }, stop);
    // Pairs reaching later blocks: the later document's set is built once per block, in per-thread scratch.
    const size_t cross_begin = own_end;
    size_t cross_end = cross_begin;
    while (cross_end < jobs.size() && jobs[cross_end].block == blk) cross_end++;
    std::vector<size_t> groups;  // starts of runs of equal hi
    for (size_t x = cross_begin; x < cross_end; x++)
      if (x == cross_begin || jobs[x].hi != jobs[x - 1].hi) groups.push_back(x);
    groups.push_back(cross_end);
    parallel::ParallelFor(groups.size() - 1, 1, slots, [&](size_t b, size_t e, size_t slot) {
      SetScratch& sc = *scratch[slot];
      for (size_t g = b; g < e && sc.status.ok(); g++) {
        const uint32_t d = order[jobs[groups[g]].hi];
        const uint8_t* p = nullptr;
        sc.status = text_of(d, &sc, &p);
        if (!sc.status.ok()) break;
        const uint64_t len = text_len(d);
        if (sc.set.size() < ShingleBoundOfLength(topt, len)) sc.set.resize(ShingleBoundOfLength(topt, len));
        const size_t ny = BuildSet(p, len, &sc, sc.set.data());
        for (size_t x = groups[g]; x < groups[g + 1]; x++) {
          const size_t u = jobs[x].lo - first;
          check(jobs[x].pair, arena.data() + at[u], size[u], sc.set.data(), ny);
        }
      }
    }, stop);
    for (const auto& sc : scratch)
      if (!sc->status.ok()) return sc->status;
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
    stats->sets += groups.size() - 1;
    next_job = cross_end;
  }
  stats->docs = m;
  stats->blocks = blocks;
  return Status::Ok();
}

Status DecidePairs(const Params& params, const TextOptions& topt, Verify verify, double threshold, uint64_t memory_bytes,
                   const std::vector<uint64_t>& cand, const SignatureSource* sigs, const TextSource* texts, size_t slots,
                   const std::atomic<bool>* stop, PairDecisions* out, VerifyStats* stats) {
  out->keep.clear();
  out->est.assign(sigs ? cand.size() : 0, 0.0f);
  out->exact.clear();
  if (verify == Verify::kEstimate && !sigs) return Status(Code::kInvalidArgument, "verification by estimate needs the signatures");
  if (verify == Verify::kExact && !texts) return Status(Code::kInvalidArgument, "exact verification needs the texts");
  if (sigs) {
    parallel::ParallelFor(cand.size(), 1024, slots, [&](size_t b, size_t e, size_t) {
      for (size_t i = b; i < e; i++)
        out->est[i] = static_cast<float>(EstimateJaccard(params, sigs->Signature(static_cast<uint32_t>(cand[i] >> 32)),
                                                         sigs->Signature(static_cast<uint32_t>(cand[i]))));
    }, stop);
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  }
  if (verify == Verify::kExact) return VerifyPairsExact(cand, *texts, topt, threshold, memory_bytes, slots, stop, &out->keep, &out->exact, stats);
  out->keep.resize(cand.size());
  for (size_t i = 0; i < cand.size(); i++) out->keep[i] = verify == Verify::kNone || out->est[i] >= threshold;
  return Status::Ok();
}

StageTexts::~StageTexts() {
  for (File& f : files_) io::os::CloseQuietly(f.fd);
}

Status StageTexts::Open(std::vector<StageTextFile> files, uint64_t skip) {
  skip_ = skip;
  uint64_t next = files.empty() ? 0 : files[0].first;
  for (StageTextFile& sf : files) {
    if (sf.first < next || sf.crc.size() != sf.len.size())
      return Status(Code::kInvalidArgument, "stage text files: document ranges must be ascending, one CRC per length");
    next = sf.first + sf.len.size();
    files_.emplace_back();
    File& f = files_.back();
    f.off.resize(sf.len.size() + 1, 0);
    for (size_t d = 0; d < sf.len.size(); d++) f.off[d + 1] = f.off[d] + sf.len[d];
    f.f = std::move(sf);
    Status s = io::os::OpenRead(f.f.path, &f.fd);
    if (!s.ok()) return s;
    uint64_t size = 0;
    bool regular = false;
    s = io::os::FileSize(f.fd, f.f.path, &size, &regular);
    if (!s.ok()) return s;
    if (size != skip + f.off.back())
      return Status(Code::kCorrupt, "'" + f.f.path + "' is corrupt: " + std::to_string(size) + " bytes, its texts need " +
                                        std::to_string(skip + f.off.back()));
  }
  return Status::Ok();
}

const StageTexts::File& StageTexts::FileOf(uint32_t doc) const {
  size_t lo = 0, hi = files_.size() - 1;  // the last file whose first document is <= doc
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    if (files_[mid].f.first <= doc) lo = mid;
    else hi = mid - 1;
  }
  return files_[lo];
}

uint64_t StageTexts::Length(uint32_t doc) const {
  if (files_.empty()) return 0;
  const File& f = FileOf(doc);
  const uint64_t d = doc - f.f.first;
  return d < f.f.len.size() ? f.f.len[d] : 0;
}

Status StageTexts::Text(uint32_t doc, SetScratch* sc, const uint8_t** p) const {
  const File* f = files_.empty() ? nullptr : &FileOf(doc);
  if (!f || doc < f->f.first || doc - f->f.first >= f->f.len.size())
    return Status(Code::kInvalidArgument, "document " + std::to_string(doc) + " is in no stage text file");
  const uint64_t d = doc - f->f.first, len = f->f.len[d], off = skip_ + f->off[d];
  if (sc->text.size() < len) sc->text.resize(len);
  uint8_t* q = sc->text.data();
  for (uint64_t at = 0; at < len;) {
    size_t got = 0;
    Status s = io::os::ReadAt(f->fd, f->f.path, off + at, q + at, static_cast<size_t>(len - at), &got);
    if (!s.ok()) return s;
    if (got == 0) return Status(Code::kCorrupt, "'" + f->f.path + "' is corrupt: truncated at offset " + std::to_string(off + at));
    at += got;
  }
  if (Crc32c(q, len) != f->f.crc[d])
    return Status(Code::kCorrupt, "'" + f->f.path + "' is corrupt: the text of document " + std::to_string(doc) + " (offset " +
                                      std::to_string(off) + ", " + std::to_string(len) + " bytes) fails its checksum");
  bytes_read_ += len;
  *p = q;
  return Status::Ok();
}

void ShardSignatures::Add(uint64_t first, uint64_t count, const uint8_t* data) {
  first_.push_back(first);
  count_.push_back(count);
  data_.push_back(data);
}

bool ShardSignatures::Covers(uint32_t doc) const {
  const size_t i = std::upper_bound(first_.begin(), first_.end(), uint64_t(doc)) - first_.begin();
  return i > 0 && doc - first_[i - 1] < count_[i - 1];
}

const uint8_t* ShardSignatures::Signature(uint32_t doc) const {
  size_t i = std::upper_bound(first_.begin(), first_.end(), uint64_t(doc)) - first_.begin() - 1;
  return data_[i] + (doc - first_[i]) * sb_;
}

}  // namespace lsh
}  // namespace neardup
