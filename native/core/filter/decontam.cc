#include "filter/decontam.h"

#include <algorithm>
#include <cstring>

#include "hash/fast64.h"
#include "hash/murmur3.h"
#include "parallel/pool.h"

namespace neardup {
namespace filter {
namespace {

constexpr uint32_t kShortRow = 1u << 31;
constexpr uint32_t kSeed = 0x6e64636eu;  // "ndcn"
constexpr size_t kAhead = 8;
constexpr uint64_t kBase = 0x9e3779b97f4a7c13ull;  // odd (3 mod 8): the rolling fingerprint's base
constexpr uint32_t kNoEntry = 0xffffffffu;

inline void Prefetch(const void* p) { __builtin_prefetch(p, 0, 1); }

// The word spans of a prepared Shingler (n = 1): token i is text[begin[i], end[i]).
struct Words {
  const char* base = nullptr;
  std::vector<uint32_t> begin, end;
  std::vector<uint64_t> hash;  // fast64 of each token
  size_t size() const { return begin.size(); }
  void Load(const Shingler& s) {
    base = s.text().data();
    const uint8_t* text_end = reinterpret_cast<const uint8_t*>(base + s.text().size());
    const size_t t = s.size();
    begin.resize(t);
    end.resize(t);
    hash.resize(t);
    const uint64_t seed = fast64::PrepareSeed(kSeed);
    for (size_t i = 0; i < t; i++) {
      const std::string_view w = s[i];
      const uint8_t* q = reinterpret_cast<const uint8_t*>(w.data());
      begin[i] = static_cast<uint32_t>(w.data() - base);
      end[i] = static_cast<uint32_t>(w.data() - base + w.size());
      hash[i] = w.size() <= 8 ? fast64::HashSmall(fast64::LoadSmall(q, w.size(), text_end), w.size(), seed)
                              : fast64::HashPrepared(q, w.size(), seed);
    }
  }
  // The fingerprints of the `count` L-grams at 0..: fp[i] = Mix64(sum_j hash[i+j] * B^(L-1-j)) (mod 2^64),
  // rolled along the tokens.
  void Fingerprints(size_t len, size_t count, std::vector<uint64_t>* fp) const {
    fp->resize(count);
    if (count == 0) return;
    uint64_t top = 1;  // B^(L-1)
    for (size_t j = 1; j < len; j++) top *= kBase;
    uint64_t f = 0;
    for (size_t j = 0; j < len; j++) f = f * kBase + hash[j];
    (*fp)[0] = fast64::Mix64(f);
    for (size_t i = 1; i < count; i++) {
      f = (f - hash[i - 1] * top) * kBase + hash[i + len - 1];
      (*fp)[i] = fast64::Mix64(f);
    }
  }
  // The L-gram at token i: its bytes in the normalised text.
  Key128 Key(size_t i, size_t len) const { return DecontamKey(base + begin[i], end[i + len - 1] - begin[i]); }
  std::string_view Text(size_t i, size_t len) const {
    return std::string_view(base + begin[i], end[i + len - 1] - begin[i]);
  }
};

}  // namespace

TextOptions DecontamTextOptions() {
  TextOptions t;
  t.unit = TextUnit::kWord;
  t.n = 1;
  t.split = WordSplit::kWhitespace;
  t.lowercase = true;
  t.strip_punct = true;
  t.short_text = ShortText::kNone;
  return t;
}

Key128 DecontamKey(const char* data, size_t len) {
  uint64_t h[2];
  Murmur3_x64_128(data, len, kSeed, h);
  Key128 k{h[0], h[1]};
  if (k.lo == 0 && k.hi == 0) k.lo = 1;  // (0, 0) marks an empty slot
  return k;
}

Status DecontamIndex::Create(const DecontamOptions& o, std::unique_ptr<DecontamIndex>* out) {
  if (o.n < 1 || o.n > kMaxN) return Status(Code::kInvalidArgument, "n must be from 1 to " + std::to_string(kMaxN));
  if (o.min_tokens < 1 || o.min_tokens > o.n)
    return Status(Code::kInvalidArgument, "min_tokens must be from 1 to n (" + std::to_string(o.n) + ")");
  if (o.n - o.min_tokens > 63)
    return Status(Code::kInvalidArgument, "n - min_tokens must be at most 63 (short lengths are kept in one word)");
  if (o.approx && !(o.fp_rate > 0 && o.fp_rate <= 0.5))
    return Status(Code::kInvalidArgument, "fp_rate must be in (0, 0.5]");
  out->reset(new DecontamIndex(o));
  return Status::Ok();
}

Status DecontamIndex::Add(const Docs& texts, const uint32_t* rows, size_t slots, const std::atomic<bool>* stop) {
  if (sealed_) return Status(Code::kInvalidArgument, "the index is sealed: no texts can be added");
  const uint32_t n = o_.n, m = o_.min_tokens;
  struct Scratch {
    std::unique_ptr<Shingler> sh;
    Words words;
    std::vector<Rec> recs;
    std::vector<uint64_t> fps;
    uint64_t mask = 0;
  };
  std::vector<Scratch> scratch(std::max<size_t>(slots, 1));
  parallel::ParallelFor(
      texts.n, 64, scratch.size(),
      [&](size_t b, size_t e, size_t slot) {
        Scratch& s = scratch[slot];
        if (!s.sh) s.sh.reset(new Shingler(DecontamTextOptions()));
        for (size_t i = b; i < e; i++) {
          s.sh->Reset(texts.ptr[i], texts.len[i]);
          s.words.Load(*s.sh);
          const size_t k = s.words.size();
          if (k < m) continue;
          const size_t top = std::min<size_t>(n, k);
          for (size_t len = m; len <= top; len++) {
            const uint32_t flags = (len == k && len < n) ? kShortRow : 0;
            if (flags) s.mask |= uint64_t(1) << (len - m);
            s.words.Fingerprints(len, k - len + 1, &s.fps);
            for (size_t at = 0; at + len <= k; at++) {
              const Key128 key = s.words.Key(at, len);
              s.recs.push_back(Rec{key.lo, key.hi, s.fps[at], rows[i], flags});
            }
          }
        }
      },
      stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  texts_ += texts.n;
  size_t total = 0;
  for (auto& s : scratch) total += s.recs.size();
  if (o_.approx) {
    // the low 64 bits only; the Bloom chains are built at Seal(), sized for every key (one stage each)
    for (auto& s : scratch) {
      short_mask_ |= s.mask;
      for (const Rec& r : s.recs) {
        approx_keys_.push_back(r.fp);
        if (r.flags & kShortRow) approx_short_.push_back(r.fp);
      }
      std::vector<Rec>().swap(s.recs);
    }
    return Status::Ok();
  }
  recs_.reserve(recs_.size() + total);
  for (auto& s : scratch) {
    short_mask_ |= s.mask;
    recs_.insert(recs_.end(), s.recs.begin(), s.recs.end());
    std::vector<Rec>().swap(s.recs);
  }
  return Status::Ok();
}

Status DecontamIndex::Seal() {
  if (sealed_) return Status::Ok();
  sealed_ = true;
  if (o_.approx) {
    for (int pass = 0; pass < 2; pass++) {
      std::vector<uint64_t>& v = pass ? approx_short_ : approx_keys_;
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      // one stage holding every key; a chain's first stage is designed for a tenth of the chain's rate, so
      // the chain is asked for 10x (capped at 0.5): that stage's rate, the bound of a lookup, is fp_rate
      // (or less, for fp_rate > 0.05)
      const uint64_t cap = std::max<uint64_t>(1024, v.size());
      std::unique_ptr<ApproxSeenSet>& set = pass ? short_ : all_;
      set.reset(new ApproxSeenSet(std::min(0.5, o_.fp_rate * 10), cap));
      set->InsertBatch(v.data(), v.size());
      std::vector<uint64_t>().swap(v);
    }
    return Status::Ok();
  }
  std::sort(recs_.begin(), recs_.end(), [](const Rec& a, const Rec& b) {
    if (a.lo != b.lo) return a.lo < b.lo;
    if (a.hi != b.hi) return a.hi < b.hi;
    return a.row < b.row;
  });
  size_t distinct = 0;
  for (size_t i = 0; i < recs_.size(); i++)
    if (i == 0 || recs_[i].lo != recs_[i - 1].lo || recs_[i].hi != recs_[i - 1].hi) distinct++;
  if (distinct >= kShortRow) return Status(Code::kInvalidInput, "the benchmark has more than 2^31 distinct n-grams");
  uint64_t cap = 1024;
  while (cap < distinct + distinct / 3 + 1) cap <<= 1;
  slots_.assign(cap, Slot{0, kNoEntry});
  keys_.clear();
  keys_.reserve(distinct);
  mask_ = cap - 1;
  row_start_.clear();
  rows_.clear();
  row_start_.reserve(distinct + 1);
  entries_ = 0;
  for (size_t i = 0; i < recs_.size();) {
    size_t j = i;
    uint32_t flags = 0;
    const uint32_t e = static_cast<uint32_t>(entries_++);
    row_start_.push_back(static_cast<uint32_t>(rows_.size()));
    for (; j < recs_.size() && recs_[j].lo == recs_[i].lo && recs_[j].hi == recs_[i].hi; j++) {
      flags |= recs_[j].flags;
      if (rows_.size() == row_start_.back() || rows_.back() != recs_[j].row) rows_.push_back(recs_[j].row);
    }
    keys_.push_back(Key128{recs_[i].lo, recs_[i].hi});
    uint64_t s = recs_[i].fp & mask_;
    while (slots_[s].entry != kNoEntry) s = (s + 1) & mask_;
    slots_[s] = Slot{recs_[i].fp, e | flags};
    i = j;
  }
  row_start_.push_back(static_cast<uint32_t>(rows_.size()));
  if (rows_.size() > 0xffffffffull) return Status(Code::kInvalidInput, "the benchmark has too many (n-gram, row) pairs");
  std::vector<Rec>().swap(recs_);
  return Status::Ok();
}

int64_t DecontamIndex::Find(uint64_t fp, const Key128& k) const {
  if (slots_.empty()) return -1;
  for (uint64_t s = fp & mask_;; s = (s + 1) & mask_) {
    const Slot& x = slots_[s];
    if (x.entry == kNoEntry) return -1;
    if (x.fp == fp) {
      const Key128& y = keys_[x.entry & ~kShortRow];
      if (y.lo == k.lo && y.hi == k.hi) return x.entry;
    }
  }
}

uint64_t DecontamIndex::keys() const {
  if (o_.approx) return sealed_ ? all_->size() : approx_keys_.size();
  return sealed_ ? entries_ : recs_.size();
}

uint64_t DecontamIndex::memory_bytes() const {
  if (o_.approx)
    return sealed_ ? all_->memory_bytes() + short_->memory_bytes()
                   : (approx_keys_.capacity() + approx_short_.capacity()) * sizeof(uint64_t);
  return recs_.capacity() * sizeof(Rec) + slots_.size() * sizeof(Slot) + keys_.size() * sizeof(Key128) +
         (row_start_.size() + rows_.size()) * sizeof(uint32_t);
}

double DecontamIndex::fp_bound() const {
  if (!o_.approx || !sealed_) return 0;
  return std::max(all_->fp_bound(), short_->fp_bound());
}

Status DecontamIndex::Probe(const Docs& docs, const uint8_t* valid, const ProbeOptions& po, size_t slots,
                            const std::atomic<bool>* stop, ProbeResult* out) const {
  if (!sealed_) return Status(Code::kInvalidArgument, "the index is not sealed yet (seal() before probing)");
  const size_t nd = docs.n;
  const uint32_t n = o_.n, m = o_.min_tokens;
  out->tokens.assign(nd, 0);
  out->ngrams.assign(nd, 0);
  out->matched.assign(nd, 0);
  out->short_found.assign(nd, 0);
  out->covered.assign(nd, 0);
  out->rows_total.assign(nd, 0);
  // Per contaminated document, filled by the chunk that probes it, joined below.
  std::vector<std::vector<uint32_t>> doc_rows(nd);
  std::vector<std::vector<std::string>> doc_samples(nd);
  std::vector<uint32_t> short_lengths;
  for (uint32_t b = 0; b < 64; b++)
    if (short_mask_ >> b & 1) short_lengths.push_back(m + b);

  struct Hit {
    uint32_t at, len;
    int64_t entry;  // exact: the entry; approx: -1
  };
  struct Scratch {
    std::unique_ptr<Shingler> sh;
    Words words;
    std::vector<uint64_t> lows;
    std::vector<uint8_t> found;
    std::vector<Hit> hits;
    std::vector<int32_t> cover;
    std::vector<uint32_t> rows;
  };
  std::vector<Scratch> scratch(std::max<size_t>(slots, 1));
  const bool approx = o_.approx;

  parallel::ParallelFor(
      nd, 32, scratch.size(),
      [&](size_t b, size_t e, size_t slot) {
        Scratch& s = scratch[slot];
        if (!s.sh) s.sh.reset(new Shingler(DecontamTextOptions()));
        for (size_t d = b; d < e; d++) {
          if (valid && !valid[d]) continue;
          s.sh->Reset(docs.ptr[d], docs.len[d]);
          s.words.Load(*s.sh);
          const size_t t = s.words.size();
          out->tokens[d] = static_cast<uint32_t>(t);
          if (t < m) continue;
          s.hits.clear();
          // Probes the `count` spans of `len` tokens at 0.. against the whole index (or, short_only, the
          // short rows) and records the hits.
          auto probe = [&](size_t len, size_t count, bool short_only) {
            s.words.Fingerprints(len, count, &s.lows);
            if (approx) {
              s.found.resize(count);
              (short_only ? *short_ : *all_).ContainsBatch(s.lows.data(), count, s.found.data());
              for (size_t at = 0; at < count; at++)
                if (s.found[at]) s.hits.push_back(Hit{static_cast<uint32_t>(at), static_cast<uint32_t>(len), -1});
              return;
            }
            const uint64_t* fp = s.lows.data();
            for (size_t at = 0; at < count && at < kAhead; at++) Prefetch(&slots_[fp[at] & mask_]);
            for (size_t at = 0; at < count; at++) {
              if (at + kAhead < count) Prefetch(&slots_[fp[at + kAhead] & mask_]);
              // the 128-bit key is computed only when the fingerprint is in the table
              uint64_t sl = fp[at] & mask_;
              bool candidate = false;
              for (;; sl = (sl + 1) & mask_) {
                const Slot& x = slots_[sl];
                if (x.entry == kNoEntry) break;
                if (x.fp == fp[at]) {
                  candidate = true;
                  break;
                }
              }
              if (!candidate) continue;
              const int64_t f = Find(fp[at], s.words.Key(at, len));
              if (f < 0 || (short_only && !(f & kShortRow))) continue;
              s.hits.push_back(Hit{static_cast<uint32_t>(at), static_cast<uint32_t>(len), f});
            }
          };
          if (t >= n) {
            out->ngrams[d] = static_cast<uint32_t>(t - n + 1);
            probe(n, t - n + 1, false);
          } else {
            out->ngrams[d] = 1;
            probe(t, 1, false);
          }
          out->matched[d] = static_cast<uint32_t>(s.hits.size());
          for (uint32_t len : short_lengths) {
            if (len > t || (t < n && len == t)) continue;
            probe(len, t - len + 1, true);
          }
          out->short_found[d] = static_cast<uint32_t>(s.hits.size() - out->matched[d]);
          if (s.hits.empty()) continue;
          // covered tokens: a difference array over the hits' spans
          s.cover.assign(t + 1, 0);
          for (const Hit& h : s.hits) {
            s.cover[h.at]++;
            s.cover[h.at + h.len]--;
          }
          uint32_t covered = 0;
          int32_t depth = 0;
          for (size_t i = 0; i < t; i++) {
            depth += s.cover[i];
            covered += depth > 0;
          }
          out->covered[d] = covered;
          // samples: the first distinct matched spans, as normalised text
          std::vector<std::string>& samples = doc_samples[d];
          for (const Hit& h : s.hits) {
            if (samples.size() >= po.max_samples) break;
            const std::string_view v = s.words.Text(h.at, h.len);
            if (std::find(samples.begin(), samples.end(), v) == samples.end()) samples.emplace_back(v);
          }
          if (approx) continue;
          s.rows.clear();
          for (const Hit& h : s.hits) {
            const uint32_t en = static_cast<uint32_t>(h.entry) & ~kShortRow;
            s.rows.insert(s.rows.end(), rows_.begin() + row_start_[en], rows_.begin() + row_start_[en + 1]);
          }
          std::sort(s.rows.begin(), s.rows.end());
          s.rows.erase(std::unique(s.rows.begin(), s.rows.end()), s.rows.end());
          out->rows_total[d] = static_cast<uint32_t>(s.rows.size());
          doc_rows[d].assign(s.rows.begin(), s.rows.begin() + std::min<size_t>(s.rows.size(), po.max_rows));
        }
      },
      stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  out->row_start.assign(nd + 1, 0);
  out->sample_start.assign(nd + 1, 0);
  out->rows.clear();
  out->sample_off.assign(1, 0);
  out->sample_text.clear();
  for (size_t d = 0; d < nd; d++) {
    out->rows.insert(out->rows.end(), doc_rows[d].begin(), doc_rows[d].end());
    out->row_start[d + 1] = static_cast<uint32_t>(out->rows.size());
    for (const std::string& smp : doc_samples[d]) {
      out->sample_text += smp;
      out->sample_off.push_back(static_cast<uint32_t>(out->sample_text.size()));
    }
    out->sample_start[d + 1] = static_cast<uint32_t>(out->sample_off.size() - 1);
  }
  return Status::Ok();
}

}  // namespace filter
}  // namespace neardup
