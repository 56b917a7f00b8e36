#include "minhash/lsh_dedup.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "hash/crc32c.h"
#include "hash/fast64.h"
#include "io/file.h"
#include "io/os.h"
#include "minhash/lsh_dedup_index.h"
#include "minhash/pair_verify.h"
#include "minhash/shingle_set.h"
#include "parallel/pool.h"
#include "parallel/sort.h"
#include "text/shingle.h"
#include "util/raw_buffer.h"

namespace neardup {
namespace lsh {

// A document without shingles (empty, or shorter than one shingle with ShortText::kNone) has the all-ones
// signature; its set is no near-duplicate of anything (not even of another empty set), so it goes in no bucket.
// Sign marks it with all-ones band keys, which the stages pass back through AddKeys without the signatures.
static bool EmptyDocument(const Params& p, const uint8_t* sigs, const uint64_t* keys, size_t i) {
  if (sigs) {
    const uint8_t* sig = sigs + i * p.signature_bytes();
    for (size_t k = 0; k < p.signature_bytes(); k++)
      if (sig[k] != 0xff) return false;
    return true;
  }
  for (uint32_t j = 0; j < p.b; j++)
    if (keys[i * p.b + j] != ~uint64_t(0)) return false;
  return true;
}

Dedup::Dedup(const DedupOptions& o)
    : o_(o), runs_(o.params.b, o.memory_bytes, o.tmp_dir), spill_(o.memory_bytes > 0),
      keep_sigs_(o.verify == Verify::kEstimate || (o.want_pairs && o.want_estimates) || (o.index && o.index->options().write)) {}

Status Dedup::Init() {
  Status s = Validate(o_.params);
  if (!s.ok()) return s;
  if (o_.index && o_.clustering != Clustering::kKept)
    return Status(Code::kInvalidArgument, "an index works with the keep rule only (connected components of a later run could join "
                                          "documents an earlier run kept)");
  s = minhash::Plan::Create(o_.minhash, &plan_);
  if (!s.ok()) return s;
  const bool text_file = o_.verify == Verify::kExact && (spill_ || o_.spill_texts);
  if (spill_ || text_file) {
    s = spill_dir_.Create(o_.tmp_dir);
    if (!s.ok()) return s;
    runs_.set_tmp_dir(spill_dir_.path());
  }
  if (spill_ && keep_sigs_) {
    sigs_file_ = std::make_unique<TempFile>();
    s = sigs_file_->Create(spill_dir_.path(), "sigs");
    if (!s.ok()) return s;
  }
  if (text_file) {
    text_file_ = std::make_unique<TempFile>();
    s = text_file_->Create(spill_dir_.path(), "texts");
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status Dedup::Store(std::vector<uint8_t>* mem, TempFile* file, const void* data, size_t bytes) {
  if (file) return file->Append(data, bytes);
  const uint8_t* p = static_cast<const uint8_t*>(data);
  mem->insert(mem->end(), p, p + bytes);
  return Status::Ok();
}

Status Dedup::Add(const Docs& docs, const uint8_t* valid, size_t slots, const std::atomic<bool>* stop) {
  if (docs_ + docs.size() >= (uint64_t(1) << 32)) return Status(Code::kUnsupported, "more than 2^32-1 documents");
  Status s = SignBatch(docs, valid, o_.verify == Verify::kExact, slots, stop, &batch_sigs_, &batch_keys_);
  if (!s.ok()) return s;
  return Insert(batch_sigs_.data(), batch_keys_.data(), docs.size(), valid, nullptr, slots, stop);
}

Status Dedup::Sign(const Docs& docs, const uint8_t* valid, size_t slots, const std::atomic<bool>* stop,
                   std::vector<uint8_t>* sigs, std::vector<uint64_t>* keys, std::vector<uint32_t>* crcs) {
  return SignBatch(docs, valid, false, slots, stop, sigs, keys, crcs);
}

Status Dedup::AddKeys(const uint64_t* keys, const uint8_t* sigs, size_t n, const uint8_t* valid, const Docs* texts,
                      size_t slots, const std::atomic<bool>* stop) {
  if (docs_ + n >= (uint64_t(1) << 32)) return Status(Code::kUnsupported, "more than 2^32-1 documents");
  if (o_.verify == Verify::kExact && (!texts || texts->size() != n))
    return Status(Code::kInvalidArgument, "exact verification needs the text of every document");
  if (keep_sigs_ && !sigs) return Status(Code::kInvalidArgument, "estimates need the signature of every document");
  return Insert(sigs, keys, n, valid, texts, slots, stop);
}

Status Dedup::SignBatch(const Docs& docs, const uint8_t* valid, bool store_texts, size_t slots,
                        const std::atomic<bool>* stop, std::vector<uint8_t>* sigs, std::vector<uint64_t>* keys,
                        std::vector<uint32_t>* crcs) {
  const Params& p = o_.params;
  if (p.value_bytes != 4 || plan_->k() != p.num_perm)
    return Status(Code::kInvalidArgument, "the signing options do not match the LSH parameters (numPerm, 32-bit values)");
  const size_t n = docs.size();
  if (slots == 0) slots = 1;
  const size_t sb = p.signature_bytes();
  sigs->resize(n * sb);
  keys->resize(n * p.b);
  if (crcs) crcs->assign(n, 0);
  if (signers_.size() < slots) signers_.resize(slots);
  // Each document is shingled once, signed and cut into band keys. Small chunks (~32 per thread, at most 16
  // documents) balance uneven documents and keep the wait at the end of each batch short. Item 0 keeps the
  // batch's texts (exact verification; a sequential write): it runs while the other threads sign, not alone
  // after them.
  const size_t grain = std::max<size_t>(1, std::min<size_t>(16, n / (slots * 32 + 1)));
  Status text_status;
  parallel::ParallelFor(n + 1, grain, slots, [&](size_t b, size_t e, size_t slot) {
    if (!signers_[slot]) signers_[slot] = std::make_unique<minhash::Signer>(plan_);
    minhash::Signer& signer = *signers_[slot];
    if (b == 0) {
      if (store_texts) text_status = StoreTexts(docs, valid);
      b = 1;
    }
    for (size_t i = b - 1; i < e - 1; i++) {
      uint8_t* sig = sigs->data() + i * sb;
      if (crcs) (*crcs)[i] = Crc32c(docs.ptr[i], docs.len[i]);
      if (valid && !valid[i]) {
        std::memset(sig, 0xff, sb);  // never compared: a skipped line is in no bucket
        std::fill_n(keys->data() + i * p.b, p.b, ~uint64_t(0));
        continue;
      }
      signer.Sign(docs.ptr[i], docs.len[i], reinterpret_cast<uint32_t*>(sig));
      if (EmptyDocument(p, sigs->data(), nullptr, i)) std::fill_n(keys->data() + i * p.b, p.b, ~uint64_t(0));  // in no bucket
      else BandKeys(p, sig, keys->data() + i * p.b);
    }
  }, stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  return text_status;
}

Status Dedup::AddSigned(const uint8_t* sigs, size_t n, const uint8_t* valid, const Docs* texts, size_t slots,
                        const std::atomic<bool>* stop) {
  if (docs_ + n >= (uint64_t(1) << 32)) return Status(Code::kUnsupported, "more than 2^32-1 documents");
  if (o_.verify == Verify::kExact && (!texts || texts->size() != n))
    return Status(Code::kInvalidArgument, "exact verification needs the text of every document");
  batch_keys_.resize(n * o_.params.b);
  BandKeysBatch(o_.params, sigs, n, batch_keys_.data(), slots, stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  return Insert(sigs, batch_keys_.data(), n, valid, texts, slots, stop);
}

Status Dedup::Insert(const uint8_t* sigs, const uint64_t* keys, size_t n, const uint8_t* valid, const Docs* texts,
                     size_t slots, const std::atomic<bool>* stop) {
  const uint8_t* in_buckets = valid;
  bool masked = false;
  for (size_t i = 0; i < n; i++) {
    if ((valid && !valid[i]) || !EmptyDocument(o_.params, sigs, keys, i)) continue;
    if (!masked) {
      if (valid) empty_mask_.assign(valid, valid + n);
      else empty_mask_.assign(n, 1);
      in_buckets = empty_mask_.data();
      masked = true;
    }
    empty_mask_[i] = 0;
  }
  Status s = runs_.Add(keys, n, docs_, in_buckets, slots, stop);
  if (!s.ok()) return s;
  if (keep_sigs_) {
    s = Store(&sigs_mem_, sigs_file_.get(), sigs, n * o_.params.signature_bytes());
    if (!s.ok()) return s;
  }
  if (o_.verify == Verify::kExact && texts) {  // (Add stores them while signing)
    s = StoreTexts(*texts, valid);
    if (!s.ok()) return s;
  }
  if (o_.index) {
    s = o_.index->AddBatch(keys, n, in_buckets, slots, stop);
    if (!s.ok()) return s;
  }
  docs_ += n;
  return Status::Ok();
}

// The texts of a batch, appended in order; adjacent documents (packed input) go out in one write.
Status Dedup::StoreTexts(const Docs& docs, const uint8_t* valid) {
  const uint8_t* run = nullptr;
  size_t run_len = 0;
  for (size_t i = 0; i < docs.size(); i++) {
    const size_t len = valid && !valid[i] ? 0 : docs.len[i];
    text_off_.push_back(text_off_.back() + len);
    if (len == 0) continue;
    if (run && docs.ptr[i] == run + run_len) {
      run_len += len;
      continue;
    }
    if (run_len) {
      Status s = Store(&text_mem_, text_file_.get(), run, run_len);
      if (!s.ok()) return s;
    }
    run = docs.ptr[i];
    run_len = len;
  }
  return run_len ? Store(&text_mem_, text_file_.get(), run, run_len) : Status::Ok();
}

uint64_t ShingleBoundOfLength(const TextOptions& o, uint64_t len) {
  if (o.normalize != text::NormalForm::kNone) {
    bool exact;
    return ShingleBound(o, nullptr, static_cast<size_t>(len), &exact);  // reads no byte under normalisation
  }
  const uint64_t units = o.unit == TextUnit::kChar ? len : (len + 1) / 2;
  if (units >= o.n) return units - o.n + 1;
  return units > 0 && o.short_text == ShortText::kWhole ? 1 : 0;
}

// The hashes are sorted in per-thread scratch (which stays in cache for a typical document) and only the
// distinct ones are copied out.
size_t BuildSet(const uint8_t* text, size_t len, SetScratch* sc, uint64_t* out) {
  Shingler& sh = sc->shingler;
  sh.Reset(text, len);
  const size_t n = sh.size();
  if (sc->work.size() < n) sc->work.resize(n);
  uint64_t* w = sc->work.data();
  ForEachFast64(sh, fast64::PrepareSeed(0), [w](size_t i, uint64_t h) { w[i] = h; });
  SortHashes(w, n, &sc->tmp, &sc->cnt);
  if (n == 0) return 0;
  // the distinct values, branch-free (repeats are common and unpredictable: about a third of a text's shingles)
  out[0] = w[0];
  size_t m = 1;
  for (size_t i = 1; i < n; i++) {
    out[m] = w[i];
    m += w[i] != w[i - 1];
  }
  return m;
}

// This run's signatures and texts, for the index hook.
class EngineDocs : public RunDocs {
 public:
  explicit EngineDocs(Dedup* d) : d_(d) {}
  Status Open() {
    sigs_ = d_->sigs_mem_.data();
    if (d_->sigs_file_) {
      Status s = d_->sigs_file_->Finish();
      if (s.ok() && d_->sigs_file_->size() > 0) s = sig_map_.Open(d_->sigs_file_->path());
      if (!s.ok()) return s;
      sigs_ = sig_map_.data();
    }
    texts_ = d_->text_mem_.data();
    if (d_->text_file_) {
      Status s = d_->text_file_->Finish();
      if (s.ok() && d_->text_file_->size() > 0) s = text_map_.Open(d_->text_file_->path());
      if (!s.ok()) return s;
      texts_ = text_map_.data();
    }
    return Status::Ok();
  }
  const uint8_t* Signature(uint64_t d) override {
    return d_->keep_sigs_ ? sigs_ + d * d_->o_.params.signature_bytes() : nullptr;
  }
  bool Text(uint64_t d, const uint8_t** p, uint64_t* len) override {
    if (d_->o_.verify != Verify::kExact) return false;
    *p = texts_ + d_->text_off_[d];
    *len = d_->text_off_[d + 1] - d_->text_off_[d];
    return true;
  }

 private:
  Dedup* d_;
  io::MappedFile sig_map_, text_map_;
  const uint8_t* sigs_ = nullptr;
  const uint8_t* texts_ = nullptr;
};

Status Dedup::WriteIndex(const std::string& path, const std::string& meta, size_t slots, const std::atomic<bool>* stop,
                         uint64_t* entries) {
  if (!o_.index) return Status(Code::kInvalidArgument, "this dedup session has no index to write");
  EngineDocs docs(this);
  Status s = docs.Open();
  if (!s.ok()) return s;
  return o_.index->Write(path, meta, &docs, slots, stop, entries);
}

// Candidate pairs from the band buckets; without pairs to enumerate, the clusters come from the buckets here.
Status Dedup::Candidates(size_t slots, const std::atomic<bool>* stop, PairRuns* cand, UnionFind* uf,
                         DedupResult* out, std::vector<uint64_t>* member_out, uint64_t* buckets_out) {
  const uint64_t n = docs_;
  // The verified keep rule alone is decided from the buckets' members too (DecideKeptExact), without pairs.
  const bool lazy_kept = LazyKept();
  const bool need_pairs = !lazy_kept && (o_.want_pairs || o_.want_candidates || o_.verify != Verify::kNone);
  // Unverified doubri rule: decided from the buckets themselves (every member, however large the bucket).
  const bool bucket_kept = (o_.verify == Verify::kNone && o_.clustering == Clustering::kKept) || lazy_kept;
  std::vector<uint64_t> member;  // doc << 32 | bucket, buckets of 2 or more documents
  uint64_t buckets = 0;
  Status add_status;
  const bool on_pool = bucket_kept && !need_pairs && runs_.runs() == 0;
  if (on_pool) {
    // only the buckets' members (the buckets in memory): the bands on the pool, numbered as one pass would
    const uint32_t nbands = o_.params.b;
    std::vector<std::vector<uint64_t>> per(nbands);
    std::vector<uint64_t> count(nbands, 0);
    std::vector<Status> status(nbands);
    parallel::ParallelFor(nbands, 1, slots, [&](size_t b, size_t e, size_t) {
      for (size_t j = b; j < e; j++) {
        uint64_t local = 0;
        std::vector<uint64_t>& v = per[j];
        status[j] = runs_.ForEachBucket(static_cast<uint32_t>(j), 1, [&](const uint64_t* d, size_t m) {
          for (size_t x = 0; x < m; x++) v.push_back(d[x] << 32 | (local & 0xffffffffu));
          local++;
        });
        count[j] = local;
      }
    }, stop);
    for (const Status& s : status)
      if (!s.ok()) return s;
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
    size_t total = 0;
    for (const auto& v : per) total += v.size();
    member.reserve(total);
    for (uint32_t j = 0; j < nbands; j++) {
      if (buckets + count[j] > 0xffffffffu)
        return Status(Code::kUnsupported, "more than 2^32 band buckets of duplicates");
      for (uint64_t e : per[j]) member.push_back(e + buckets);  // the bucket number in the low half: no carry
      buckets += count[j];
      std::vector<uint64_t>().swap(per[j]);
    }
  }
  for (uint32_t j = 0; j < o_.params.b && !on_pool; j++) {
    Status s = runs_.ForEachBucket(j, slots, [&](const uint64_t* d, size_t m) {
      if (bucket_kept) {
        for (size_t x = 0; x < m; x++) member.push_back(d[x] << 32 | (buckets & 0xffffffffu));
        buckets++;
      } else if (!need_pairs) {
        for (size_t x = 1; x < m; x++) uf->Union(static_cast<uint32_t>(d[0]), static_cast<uint32_t>(d[x]));
      }
      if (!need_pairs || !add_status.ok()) return;
      if (o_.want_groups && bucket_kept && m > kAllPairsBucket) {
        for (size_t x = 0; x < m; x++) out->group_docs.push_back(static_cast<uint32_t>(d[x]));
        out->group_ends.push_back(out->group_docs.size());
      }
      // every pair, however large the bucket (its documents need not be copies of one text); the buffer is
      // compacted, and spilled to sorted runs when it stays full (PairRuns)
      for (size_t x = 0; x < m; x++)
        for (size_t y = x + 1; y < m; y++) {
          Status t = cand->Add(d[x] << 32 | d[y]);
          if (!t.ok()) {
            add_status = t;
            return;
          }
        }
    });
    if (s.ok()) s = add_status;
    if (!s.ok()) return s;
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  }
  if (buckets >> 32) return Status(Code::kUnsupported, "more than 2^32 band buckets of duplicates");
  if (bucket_kept) {
    parallel::SortOnPool(&member, slots, stop);
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  }
  if (lazy_kept) {
    *member_out = std::move(member);
    *buckets_out = buckets;
    return Status::Ok();
  }
  if (bucket_kept) {
    std::vector<uint32_t> holder(buckets, UINT32_MAX);  // the kept document of a bucket
    out->rep.resize(n);
    std::iota(out->rep.begin(), out->rep.end(), 0u);
    if (o_.index) o_.index->MarkMatched(&out->rep);
    for (size_t x = 0; x < member.size();) {
      const uint32_t doc = static_cast<uint32_t>(member[x] >> 32);
      size_t y = x;
      if (out->rep[doc] == kIndexRep) {  // dropped for an indexed document: holds no bucket
        while (y < member.size() && (member[y] >> 32) == doc) y++;
        x = y;
        continue;
      }
      uint32_t by = UINT32_MAX;
      for (; y < member.size() && (member[y] >> 32) == doc; y++) by = std::min(by, holder[member[y] & 0xffffffffu]);
      if (by != UINT32_MAX) {
        out->rep[doc] = by;
      } else {
        for (size_t z = x; z < y; z++) holder[member[z] & 0xffffffffu] = doc;
      }
      x = y;
    }
  }
  return cand->Seal(stop);
}

// The session's texts (in memory, or read back from their temporary file) and signatures, for DecidePairs.
class SessionTexts : public TextSource {
 public:
  SessionTexts(const std::vector<uint64_t>& off, const std::vector<uint8_t>& mem, const std::string& path, io::os::Fd fd)
      : off_(off), mem_(mem), path_(path), fd_(fd) {}
  uint64_t Length(uint32_t doc) const override { return off_[doc + 1] - off_[doc]; }
  Status Text(uint32_t doc, SetScratch* sc, const uint8_t** p) const override {
    const uint64_t off = off_[doc], len = Length(doc);
    if (fd_ == io::os::kNoFd) {
      *p = mem_.data() + off;
      return Status::Ok();
    }
    if (sc->text.size() < len) sc->text.resize(len);
    uint8_t* q = sc->text.data();
    for (uint64_t at = 0; at < len;) {
      size_t got = 0;
      Status s = io::os::ReadAt(fd_, path_, off + at, q + at, static_cast<size_t>(len - at), &got);
      if (!s.ok()) return s;
      if (got == 0) return Status(Code::kIo, "cannot read the temporary file '" + path_ + "': truncated");
      at += got;
    }
    *p = q;
    return Status::Ok();
  }

 private:
  const std::vector<uint64_t>& off_;
  const std::vector<uint8_t>& mem_;
  const std::string& path_;
  io::os::Fd fd_;
};

class FlatSignatures : public SignatureSource {
 public:
  FlatSignatures(const uint8_t* data, size_t sb) : data_(data), sb_(sb) {}
  const uint8_t* Signature(uint32_t doc) const override { return data_ + uint64_t(doc) * sb_; }

 private:
  const uint8_t* data_;
  size_t sb_;
};

uint64_t Dedup::PairBuffer() const {
  if (o_.pair_buffer) return o_.pair_buffer;
  if (o_.memory_bytes) return std::max<uint64_t>(o_.memory_bytes / kBytesPerBufferedPair, 4096);
  return kDefaultPairBuffer;
}

Status Dedup::SpillPath(std::string* dir) {
  if (spill_dir_.path().empty()) {
    Status s = spill_dir_.Create(o_.tmp_dir);
    if (!s.ok()) return s;
  }
  *dir = spill_dir_.path();
  return Status::Ok();
}

// The candidate pairs, ascending, in chunks (the whole list when it fit the buffer; else chunks of the buffer's
// size from the merged runs): each chunk decided (DecidePairs: the same decision per pair whatever the chunk),
// its kept pairs applied to the clusters as they come and reported (in memory, or to the pairs file).
// doubri's rule over pairs in (a, b) order: when (a, b) comes, every pair (x, a) with x < a came before it, so
// a is decided; b is dropped for the first kept a it meets, which is the smallest (the same as deciding over
// the pairs sorted by b, in document order).
Status Dedup::DecideStream(PairRuns* cand, const SignatureSource* sigs, const TextSource* texts, size_t slots,
                           const std::atomic<bool>* stop, UnionFind* uf, DedupResult* out) {
  const bool bucket_kept = o_.verify == Verify::kNone && o_.clustering == Clustering::kKept;
  const bool pair_kept = o_.clustering == Clustering::kKept && o_.verify != Verify::kNone;
  const bool to_file = o_.want_pairs && o_.pairs_file;
  if (pair_kept) {
    out->rep.resize(docs_);
    std::iota(out->rep.begin(), out->rep.end(), 0u);
    if (o_.index) o_.index->MarkMatched(&out->rep);  // never kept: never a representative
  }
  Status s;
  if (to_file) {
    std::string dir;
    s = SpillPath(&dir);
    if (!s.ok()) return s;
    pairs_file_ = std::make_unique<TempFile>();
    s = pairs_file_->Create(dir, "reported");
    if (!s.ok()) return s;
  }
  const bool whole = !cand->spilled();
  std::vector<uint64_t> chunk;
  const size_t chunk_pairs = static_cast<size_t>(std::max<uint64_t>(PairBuffer(), 2));
  struct Record {  // the pairs file: docs/lsh.md
    uint32_t a, b;
    float estimate, exact;
  };
  std::vector<Record> rec;
  PairDecisions dec;
  VerifyStats vs;
  for (bool first = true;; first = false) {
    if (whole) {
      if (!first) break;
    } else {
      s = cand->Next(chunk_pairs, &chunk);
      if (!s.ok()) return s;
      if (chunk.empty()) break;
    }
    const std::vector<uint64_t>& c = whole ? cand->memory() : chunk;
    if (whole && c.empty()) break;
    out->candidate_pairs += c.size();
    VerifyStats cs;
    s = DecidePairs(o_.params, o_.minhash.text, o_.verify, o_.threshold, o_.memory_bytes, c, sigs, texts, slots,
                    stop, &dec, &cs);
    if (!s.ok()) return s;
    vs.docs += cs.docs;
    vs.sets += cs.sets;
    vs.blocks += cs.blocks;
    if (o_.want_pairs && !to_file) {
      uint64_t reported = out->kept_pairs;
      for (uint8_t k : dec.keep) reported += k;
      if (reported > o_.max_pairs)
        return Status(Code::kTooManyResults, "more than " + std::to_string(o_.max_pairs) + " reported pairs (" +
                                                 (whole ? std::to_string(reported) + "; " : std::string()) + "raise maxPairs)");
    }
    rec.clear();
    for (size_t i = 0; i < c.size(); i++) {
      if (!dec.keep[i]) continue;
      const uint32_t a = static_cast<uint32_t>(c[i] >> 32), b = static_cast<uint32_t>(c[i]);
      if (pair_kept) {
        if (out->rep[a] == a && out->rep[b] == b) out->rep[b] = a;
      } else if (!bucket_kept) {
        uf->Union(a, b);
      }
      out->kept_pairs++;
      if (!o_.want_pairs) continue;
      const float est = keep_sigs_ ? dec.est[i] : 0.f, ex = o_.verify == Verify::kExact ? dec.exact[i] : 0.f;
      if (to_file) {
        rec.push_back(Record{a, b, est, ex});
        continue;
      }
      out->pair_a.push_back(a);
      out->pair_b.push_back(b);
      if (keep_sigs_) out->pair_estimate.push_back(est);
      if (o_.verify == Verify::kExact) out->pair_exact.push_back(ex);
    }
    if (to_file) {
      s = pairs_file_->Append(rec.data(), rec.size() * sizeof(Record));
      if (!s.ok()) return s;
    }
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  }
  out->verify_docs = vs.docs;
  out->verify_sets = vs.sets;
  out->verify_blocks = vs.blocks;
  if (o_.want_candidates) out->candidates = std::move(cand->memory());
  cand->Clear();
  if (to_file) {
    s = pairs_file_->Finish();
    if (!s.ok()) return s;
    out->pairs_path = pairs_file_->path();
  }
  return Status::Ok();
}

Status Dedup::Finish(size_t slots, const std::atomic<bool>* stop, DedupResult* out) {
  *out = DedupResult();
  Status s = runs_.Seal(slots, stop);
  if (!s.ok()) return s;
  const uint64_t n = docs_;
  UnionFind uf(o_.clustering == Clustering::kComponents ? n : 0);
  const bool need_pairs = o_.want_pairs || o_.want_candidates || o_.verify != Verify::kNone;
  if (o_.index) {
    // documents matching an entry of the prior index are dropped for it before the keep rule runs
    EngineDocs docs(this);
    s = docs.Open();
    if (s.ok()) s = o_.index->Match(&docs, o_.want_pairs, slots, stop);
    if (!s.ok()) return s;
  }
  PairRuns cand;  // a << 32 | b
  cand.Reset(PairBuffer(), !o_.want_candidates, [this](std::string* dir) { return SpillPath(dir); });
  std::vector<uint64_t> member;  // LazyKept(): doc << 32 | bucket
  uint64_t buckets = 0;
  s = Candidates(slots, stop, &cand, &uf, out, &member, &buckets);
  if (!s.ok()) return s;
  out->runs = runs_.runs();
  out->pair_runs = cand.runs();
  out->spilled_bytes = runs_.spilled_bytes() + cand.spilled_bytes() + (sigs_file_ ? sigs_file_->size() : 0) +
                       (text_file_ ? text_file_->size() : 0);
  runs_.Clear();  // the buckets are read: their memory and files go before verification
  if (need_pairs) {
    // Signatures for the estimates: in memory, or the temporary file mapped; texts in memory or read back.
    io::MappedFile sig_map;
    std::unique_ptr<FlatSignatures> sigs;
    if (keep_sigs_) {
      const uint8_t* data = sigs_mem_.data();
      if (sigs_file_) {
        s = sigs_file_->Finish();
        if (s.ok() && sigs_file_->size() > 0) s = sig_map.Open(sigs_file_->path());
        if (!s.ok()) return s;
        data = sig_map.data();
      }
      sigs = std::make_unique<FlatSignatures>(data, o_.params.signature_bytes());
    }
    io::os::Fd fd = io::os::kNoFd;
    if (o_.verify == Verify::kExact && text_file_) {
      s = text_file_->Finish();
      if (s.ok()) s = io::os::OpenRead(text_file_->path(), &fd);
      if (!s.ok()) return s;
    }
    struct FdCloser {
      io::os::Fd fd;
      ~FdCloser() { io::os::CloseQuietly(fd); }
    } closer{fd};
    static const std::string kNoPath;
    SessionTexts texts(text_off_, text_mem_, text_file_ ? text_file_->path() : kNoPath, fd);
    VerifyStats vs;
    if (LazyKept()) {
      // the keep rule alone: each document checked against kept documents only, until its first match
      out->rep.resize(n);
      std::iota(out->rep.begin(), out->rep.end(), 0u);
      if (o_.index) o_.index->MarkMatched(&out->rep);
      uint64_t checked = 0;
      cand.Clear();
      s = DecideKeptExact(member, buckets, texts, o_.minhash.text, o_.threshold, o_.memory_bytes, slots, stop, &out->rep, &vs, &checked);
      if (!s.ok()) return s;
      out->verify_docs = vs.docs;
      out->verify_sets = vs.sets;
      out->verify_blocks = vs.blocks;
      out->verify_checked = checked;
      out->pairs_complete = false;
      for (uint64_t i = 0; i < n; i++) out->kept_pairs += out->rep[i] != i && out->rep[i] != kIndexRep;
    } else {
      s = DecideStream(&cand, sigs.get(), &texts, slots, stop, &uf, out);
      if (!s.ok()) return s;
    }
  }
  if (o_.clustering == Clustering::kComponents) uf.Roots(&out->rep);
  std::vector<uint8_t> is_rep_of_many(n, 0);
  if (o_.index) o_.index->Tally(out);
  for (uint64_t i = 0; i < n; i++) {
    if (out->rep[i] == kIndexRep) continue;  // counted by Tally
    if (out->rep[i] != i) {
      out->duplicates++;
      if (!is_rep_of_many[out->rep[i]]) {
        is_rep_of_many[out->rep[i]] = 1;
        out->clusters++;
      }
    }
  }
  return Status::Ok();
}

}  // namespace lsh
}  // namespace neardup
