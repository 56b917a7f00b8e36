#include "filter/onion.h"

#include <algorithm>

#include "filter/onion_hash.h"
#include "hash/fast64.h"

namespace neardup {
namespace filter {

namespace {
constexpr uint64_t kBase = 0x9e3779b97f4a7c15ull;
}

uint64_t TokenHash(const uint8_t* p, size_t len) { return fast64::Hash(p, len, 0); }

NgramHasher::NgramHasher(uint32_t n) : n_(n), bn_(1) {
  for (uint32_t i = 0; i < n; i++) bn_ *= kBase;
}

void NgramHasher::Hash(const uint64_t* tok, size_t ntok, std::vector<uint64_t>* out) const {
  out->clear();
  if (ntok < n_) return;
  out->resize(ntok - n_ + 1);
  uint64_t h = 0;
  for (size_t i = 0; i < n_ - 1; i++) h = h * kBase + tok[i];
  uint64_t* o = out->data();
  for (size_t i = n_ - 1; i < ntok; i++) {
    h = h * kBase + tok[i];
    if (i >= n_) h -= tok[i - n_] * bn_;
    o[i - (n_ - 1)] = fast64::Mix64(h ^ n_);
  }
}

Deduper::Deduper(const OnionOptions& o, std::unique_ptr<SeenSet> seen, DedupPhase phase)
    : o_(o), seen_(std::move(seen)), phase_(phase), hasher_(o.n) {
  if (o_.hash == NgramHashKind::kOnion && o_.trim_bits >= 1 && o_.trim_bits < 64) trim_mask_ = ~0ull >> (64 - o_.trim_bits);
  // R has the seen-set's kind (approx: the same false-positive bound).
  if (phase_ != DedupPhase::kKeepFirst) {
    const double fp = seen_->kind() == SeenKind::kApprox ? static_cast<ApproxSeenSet&>(*seen_).fp_rate() : 0.01;
    repeated_ = MakeSeenSet(seen_->kind(), fp);
  }
}

uint64_t Deduper::HashToken(const uint8_t* p, size_t len) const {
  return o_.hash == NgramHashKind::kOnion ? onion::TokenHash(p, len) : TokenHash(p, len);
}

// kOnion: Onion keeps (hash & trim mask), and with -f (hash & trim mask) without its lowest bit; Mix64 is a
// bijection that spreads those over all 64 bits (the seen-sets index by high bits) without merging keys.
uint64_t Deduper::GlobalKey(uint64_t g) const {
  if (o_.hash != NgramHashKind::kOnion) return g;
  g &= trim_mask_;
  if (dup_ngrams_) g &= ~1ull;
  return fast64::Mix64(g);
}

void Deduper::AddDuplicateNgrams(const uint64_t* hashes, size_t n) {
  if (!dup_ngrams_) dup_ngrams_ = MakeSeenSet(SeenKind::kExact, 0.01);
  to_insert_.resize(std::min<size_t>(n, 1 << 16));
  for (size_t i = 0; i < n;) {
    const size_t m = std::min(n - i, to_insert_.size());
    for (size_t j = 0; j < m; j++) to_insert_[j] = GlobalKey(hashes[i + j]);
    dup_ngrams_->InsertBatch(to_insert_.data(), m);
    i += m;
  }
}

bool Deduper::StartDropAllPass() {
  if (phase_ != DedupPhase::kCollect) return false;
  phase_ = DedupPhase::kDropAll;
  stats_ = OnionStats();
  return true;
}

size_t Deduper::LocalFind(uint64_t key, bool* existed) {
  size_t at = fast64::Mix64(key) & local_mask_;  // keys are mixed already; remix so runs do not align
  for (;;) {
    if (local_gen_[at] != gen_ && local_gen_[at] != gen_ + 1) {
      local_keys_[at] = key;
      local_gen_[at] = gen_;
      *existed = false;
      return at;
    }
    if (local_keys_[at] == key) {
      *existed = true;
      return at;
    }
    at = (at + 1) & local_mask_;
  }
}

bool Deduper::Document(const uint64_t* tok, size_t ntok, const uint32_t* par_end, size_t npar, uint8_t* dup) {
  const uint32_t n = o_.n;
  stats_.documents++;
  stats_.paragraphs += npar;
  stats_.tokens += ntok;
  if (o_.hash == NgramHashKind::kOnion)
    onion::NgramHashes(tok, ntok, n, &grams_);
  else
    hasher_.Hash(tok, ntok, &grams_);
  const size_t ng = grams_.size();
  const uint64_t* keys = grams_.data();
  if (o_.hash == NgramHashKind::kOnion) {
    gkeys_.resize(ng);
    for (size_t g = 0; g < ng; g++) gkeys_[g] = GlobalKey(grams_[g]);
    keys = gkeys_.data();
  }
  in_global_.resize(ng);
  const bool drop_all = phase_ == DedupPhase::kDropAll;
  if (ng) (drop_all ? *repeated_ : *seen_).ContainsBatch(keys, ng, in_global_.data());

  // Local table: generations gen_ (present) and gen_ + 1 (present and added to the seen-set) mark this
  // document's entries; older generations count as empty. Sized for load <= 1/2.
  if (ng) {
    size_t want = 16;
    while (want < 2 * ng) want <<= 1;
    if (want > local_keys_.size()) {
      local_keys_.assign(want, 0);
      local_gen_.assign(want, 0);
      gen_ = 0;
    }
    local_mask_ = std::min(local_keys_.size(), want) - 1;
    // Using a prefix of the table: entries beyond local_mask_ are never probed.
    gen_ += 2;
    if (gen_ == 0 || gen_ == UINT32_MAX) {  // wrapped: clear
      std::fill(local_gen_.begin(), local_gen_.end(), 0);
      gen_ = 2;
    }
  }
  seen_at_.assign(ng, 0);
  for (size_t g = 0; g < ng; g++) {
    bool existed;
    LocalFind(grams_[g], &existed);
    seen_at_[g] = in_global_[g] || (!drop_all && o_.within_doc && existed);
  }

  // Bad tokens per paragraph: token j is bad iff a seen n-gram ends at i in [j, j+n-1] within its
  // paragraph. Backward scan keeping the nearest seen end.
  size_t begin = 0;
  bool any_dup = false;
  for (size_t p = 0; p < npar; p++) {
    const size_t end = par_end[p];
    const size_t total = end - begin;
    size_t bad = 0;
    size_t next_seen = SIZE_MAX;
    for (size_t j = end; j-- > begin;) {
      if (j >= n - 1 && seen_at_[j - (n - 1)]) next_seen = j;
      if (next_seen != SIZE_MAX && next_seen - j < n) bad++;
    }
    dup[p] = total > 0 && static_cast<double>(bad) / static_cast<double>(total) > static_cast<double>(o_.threshold);
    any_dup |= dup[p] != 0;
    begin = end;
  }

  if (phase_ == DedupPhase::kCollect && any_dup) {
    // The seen n-grams of duplicate paragraphs (by the paragraph of their last token) are repeated.
    rep_keys_.clear();
    size_t q = 0;
    for (size_t g = 0; g < ng; g++) {
      while (par_end[q] <= g + n - 1) q++;
      if (dup[q] && seen_at_[g]) rep_keys_.push_back(keys[g]);
    }
    std::sort(rep_keys_.begin(), rep_keys_.end());
    rep_keys_.erase(std::unique(rep_keys_.begin(), rep_keys_.end()), rep_keys_.end());
    rep_found_.resize(rep_keys_.size());
    repeated_->ContainsBatch(rep_keys_.data(), rep_keys_.size(), rep_found_.data());
    size_t w = 0;
    for (size_t i = 0; i < rep_keys_.size(); i++)
      if (!rep_found_[i]) rep_keys_[w++] = rep_keys_[i];
    if (w) repeated_->InsertBatch(rep_keys_.data(), w);
  }

  if (o_.smoothing) {
    size_t p = 0;
    while (p < npar) {
      if (dup[p]) {
        p++;
        continue;
      }
      const size_t run_begin = p;
      uint64_t run_tokens = 0;
      while (p < npar && !dup[p]) {
        run_tokens += par_end[p] - (p ? par_end[p - 1] : 0);
        p++;
      }
      const bool whole = run_begin == 0 && p == npar;
      if (run_tokens <= o_.max_stub && !(whole && o_.keep_unique_short))
        for (size_t q = run_begin; q < p; q++) dup[q] = 1;
    }
  }

  bool removed = false, all_dup = true;
  begin = 0;
  for (size_t p = 0; p < npar; p++) {
    if (dup[p]) {
      removed = true;
      stats_.duplicate_paragraphs++;
      stats_.removed_tokens += par_end[p] - begin;
    } else if (par_end[p] > begin) {
      all_dup = false;
    }
    begin = par_end[p];
  }
  removed = removed && all_dup;
  if (removed) stats_.removed_documents++;

  if (drop_all) return removed;
  // Add the kept paragraphs' n-grams (each once) that the seen-set lacks.
  to_insert_.clear();
  size_t p = 0;
  for (size_t g = 0; g < ng; g++) {
    const size_t last = g + n - 1;
    while (par_end[p] <= last) p++;
    if (dup[p] || in_global_[g]) continue;
    bool existed;
    const size_t at = LocalFind(grams_[g], &existed);
    if (local_gen_[at] == gen_ + 1) continue;  // already queued
    local_gen_[at] = gen_ + 1;
    to_insert_.push_back(keys[g]);
  }
  if (dup_ngrams_ && !to_insert_.empty()) {  // -f: only n-grams listed as duplicates are remembered
    dup_found_.resize(to_insert_.size());
    dup_ngrams_->ContainsBatch(to_insert_.data(), to_insert_.size(), dup_found_.data());
    size_t w = 0;
    for (size_t i = 0; i < to_insert_.size(); i++)
      if (dup_found_[i]) to_insert_[w++] = to_insert_[i];
    to_insert_.resize(w);
  }
  if (!to_insert_.empty()) seen_->InsertBatch(to_insert_.data(), to_insert_.size());
  return removed;
}

void HashWords(const uint8_t* p, size_t len, std::vector<uint64_t>* out, NgramHashKind kind) {
  size_t i = 0;
  auto space = [](uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (i < len) {
    while (i < len && space(p[i])) i++;
    if (i >= len) break;
    const size_t s = i;
    while (i < len && !space(p[i])) i++;
    out->push_back(kind == NgramHashKind::kOnion ? onion::TokenHash(p + s, i - s) : TokenHash(p + s, i - s));
  }
}

}  // namespace filter
}  // namespace neardup
