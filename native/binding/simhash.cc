#include "simhash.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>

#include "addon.h"
#include "args.h"
#include "parallel/pool.h"
#include "simhash/all_pairs.h"
#include "simhash/fingerprint.h"
#include "simhash/layout.h"
#include "simhash/pair_text.h"
#include "texts.h"

namespace neardup {
namespace binding {

U64View GetU64Array(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array)
    ThrowTypeError(env, std::string("Expected ") + what + " to be a BigUint64Array");
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  U64View out;
  out.size = ta.ElementLength();
  if (out.size > 0)
    out.data = reinterpret_cast<const uint64_t*>(static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset());
  return out;
}



namespace {

simhash::FingerprintConfig ParseFingerprint(Napi::Env env, const Napi::Value& v) {
  Napi::Object o = OptionsObject(env, v, "options");
  const int profile = GetEnum(o, "profile", 0, {"default", "seomoz"});
  simhash::FingerprintConfig c = profile == 1 ? simhash::SeomozProfile() : simhash::DefaultProfile();
  TextOptions& t = c.shingles.text;
  ReadTextOptions(o, &t);
  const int hash = GetEnum(o, "hash", c.shingles.hash == ShingleHash::kMd5_64 ? 2 : c.shingles.hash == ShingleHash::kMurmur3_64 ? 1 : 0,
                           {"fast64", "murmur3_64", "md5_64"});
  c.shingles.hash = hash == 0 ? ShingleHash::kFast64 : hash == 1 ? ShingleHash::kMurmur3_64 : ShingleHash::kMd5_64;
  c.shingles.seed = GetUint64(o, "seed", c.shingles.seed);
  c.weighting = static_cast<simhash::Weighting>(GetEnum(o, "weighting", static_cast<int>(c.weighting), {"count", "binary"}));
  Status s = simhash::ValidateFingerprintConfig(c);
  if (!s.ok()) ThrowRangeError(env, s.message());
  return c;
}

Status RunFingerprints(const TextBatch& batch, const simhash::FingerprintConfig& c, size_t slots,
                       const std::atomic<bool>* stop, std::vector<uint64_t>* out) {
  return simhash::FingerprintBatch(batch.docs(), c, slots, stop, out);
}

class FingerprintWorker : public PromiseWorker {
 public:
  FingerprintWorker(Napi::Env env, const Napi::Value& texts, const Napi::Value& options)
      : PromiseWorker(env), config_(ParseFingerprint(env, options)) {
    batch_.Load(env, texts, "texts");
    slots_ = parallel::MaxSlots();
  }

 protected:
  Status Run() override { return RunFingerprints(batch_, config_, slots_, stop(), &out_); }
  Napi::Value Resolve(Napi::Env env) override { return NewBigUint64Array(env, std::move(out_)); }

 private:
  simhash::FingerprintConfig config_;
  TextBatch batch_;
  size_t slots_ = 1;
  std::vector<uint64_t> out_;
};

Napi::Value Fingerprints(const Napi::CallbackInfo& info) {
  return (new FingerprintWorker(info.Env(), info[0], info[1]))->QueueAndGetPromise();
}

Napi::Value FingerprintsSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const simhash::FingerprintConfig c = ParseFingerprint(env, info[1]);
  TextBatch batch;
  batch.Load(env, info[0], "texts");
  std::vector<uint64_t> out;
  return RunSync(
      env, [&] { return RunFingerprints(batch, c, 1, nullptr, &out); },
      [&](Napi::Env e) { return NewBigUint64Array(e, std::move(out)); });
}

// simhashCompute(features: BigUint64Array, weights?: Float64Array) -> bigint
Napi::Value Compute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const U64View f = GetU64Array(env, info[0], "features");
  if (info[1].IsUndefined()) return Napi::BigInt::New(env, simhash::Compute(f.data, f.size));
  if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    ThrowTypeError(env, "Expected weights to be a Float64Array");
  Napi::Float64Array w = info[1].As<Napi::Float64Array>();
  if (w.ElementLength() != f.size) ThrowRangeError(env, "weights must have one value per feature");
  for (size_t i = 0; i < f.size; i++)
    if (!std::isfinite(w[i])) ThrowRangeError(env, "weights must be finite numbers");
  return Napi::BigInt::New(env, simhash::ComputeWeighted(f.data, w.Data(), f.size));
}

struct FindAllConfig {
  uint32_t blocks = 6, distance = 3;
  bool clusters = false;
  bool pairs = true;            // false: clusters only, without holding the pairs
  uint64_t max_pairs = UINT64_MAX;
};

// options: { blocks, distance, clusters, pairs }; the cap (maxPairs) is the third argument of the native call
// (lib/simhash.ts fills in the default), as LshIndex.candidatePairs takes it.
FindAllConfig ParseFindAll(Napi::Env env, const Napi::Value& v, const Napi::Value& cap) {
  Napi::Object o = OptionsObject(env, v, "options");
  FindAllConfig c;
  c.distance = GetUint32(o, "distance", 3, 0, simhash::kMaxDistance);
  c.blocks = GetUint32(o, "blocks", std::max<uint32_t>(c.distance + 3, 6), 1, 64);  // distance <= 8
  c.clusters = GetBool(o, "clusters", false);
  c.pairs = GetBool(o, "pairs", true);
  if (!cap.IsUndefined()) c.max_pairs = GetCap(env, cap, "maxPairs");
  Status s = simhash::ValidateParams(c.blocks, c.distance);
  if (!s.ok()) ThrowRangeError(env, s.message());
  return c;
}

struct FindAllResult {
  std::vector<uint64_t> pairs;  // a0, b0, a1, b1, ...
  std::vector<uint32_t> cluster_offsets;
  std::vector<uint64_t> cluster_ids;
};

// ids == nullptr: document i has id i.
Status RunFindAll(const uint64_t* ids, const uint64_t* fps, size_t n, const FindAllConfig& c, size_t slots,
                  const std::atomic<bool>* stop, FindAllResult* r) {
  auto id = [ids](size_t i) -> uint64_t { return ids ? ids[i] : i; };
  std::vector<std::pair<uint32_t, uint32_t>> idx;
  std::vector<uint32_t> labels;
  Status s;
  if (c.pairs) {
    s = simhash::AllPairs(fps, n, c.blocks, c.distance, slots, stop, &idx, c.max_pairs);
    if (!s.ok()) return s;
    if (c.clusters) simhash::Components(n, idx, &labels);
    std::vector<std::pair<uint64_t, uint64_t>> p;
    p.reserve(idx.size());
    for (const auto& e : idx) {
      const uint64_t a = id(e.first), b = id(e.second);
      if (a != b) p.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::vector<std::pair<uint32_t, uint32_t>>().swap(idx);
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    r->pairs.resize(p.size() * 2);
    for (size_t i = 0; i < p.size(); i++) {
      r->pairs[2 * i] = p[i].first;
      r->pairs[2 * i + 1] = p[i].second;
    }
  } else if (c.clusters) {
    s = simhash::AllComponents(fps, n, c.blocks, c.distance, slots, stop, &labels);
    if (!s.ok()) return s;
  }
  if (c.clusters) {
    std::vector<std::vector<uint64_t>> groups;
    std::vector<int64_t> slot(n, -1);
    std::vector<uint32_t> size(n, 0);
    for (size_t i = 0; i < n; i++) size[labels[i]]++;
    for (size_t i = 0; i < n; i++) {
      if (size[labels[i]] < 2) continue;
      if (slot[labels[i]] < 0) {
        slot[labels[i]] = static_cast<int64_t>(groups.size());
        groups.emplace_back();
      }
      groups[slot[labels[i]]].push_back(id(i));
    }
    for (auto& g : groups) {
      std::sort(g.begin(), g.end());
      g.erase(std::unique(g.begin(), g.end()), g.end());
    }
    std::sort(groups.begin(), groups.end());
    r->cluster_offsets.push_back(0);
    for (auto& g : groups) {
      if (g.size() < 2) continue;
      r->cluster_ids.insert(r->cluster_ids.end(), g.begin(), g.end());
      r->cluster_offsets.push_back(static_cast<uint32_t>(r->cluster_ids.size()));
    }
  }
  return Status::Ok();
}

Napi::Value FindAllResultObject(Napi::Env env, FindAllResult& r, bool clusters) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("pairs", NewBigUint64Array(env, std::move(r.pairs)));
  if (clusters) {
    const size_t n = r.cluster_offsets.size();
    o.Set("clusterOffsets", Napi::Uint32Array::New(env, n, ToArrayBuffer(env, std::move(r.cluster_offsets)), 0));
    o.Set("clusterIds", NewBigUint64Array(env, std::move(r.cluster_ids)));
  }
  return o;
}

// The ids argument of simhashFindAll: undefined or null means 0..n-1 (returns a view with data == nullptr).
U64View FindAllIds(Napi::Env env, const Napi::Value& v, size_t n) {
  if (v.IsUndefined() || v.IsNull()) return U64View{nullptr, n};
  const U64View ids = GetU64Array(env, v, "ids");
  if (ids.size != n) ThrowRangeError(env, "ids and fingerprints must have the same length");
  return ids;
}

class FindAllWorker : public PromiseWorker {
 public:
  FindAllWorker(Napi::Env env, const Napi::CallbackInfo& info)
      : PromiseWorker(env), config_(ParseFindAll(env, info[2], info[3])) {
    const U64View fps = GetU64Array(env, info[1], "fingerprints");
    const U64View ids = FindAllIds(env, info[0], fps.size);
    if (ids.data) ids_.assign(ids.data, ids.data + ids.size);
    default_ids_ = !ids.data;
    fps_.assign(fps.data, fps.data + fps.size);
    slots_ = parallel::MaxSlots();
  }

 protected:
  Status Run() override {
    return RunFindAll(default_ids_ ? nullptr : ids_.data(), fps_.data(), fps_.size(), config_, slots_, stop(), &r_);
  }
  Napi::Value Resolve(Napi::Env env) override { return FindAllResultObject(env, r_, config_.clusters); }

 private:
  FindAllConfig config_;
  std::vector<uint64_t> ids_, fps_;
  bool default_ids_ = false;
  size_t slots_ = 1;
  FindAllResult r_;
};

Napi::Value FindAll(const Napi::CallbackInfo& info) {
  return (new FindAllWorker(info.Env(), info))->QueueAndGetPromise();
}

Napi::Value FindAllSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const FindAllConfig c = ParseFindAll(env, info[2], info[3]);
  const U64View fps = GetU64Array(env, info[1], "fingerprints");
  const U64View ids = FindAllIds(env, info[0], fps.size);
  FindAllResult r;
  return RunSync(
      env, [&] { return RunFindAll(ids.data, fps.data, fps.size, c, 1, nullptr, &r); },
      [&](Napi::Env e) { return FindAllResultObject(e, r, c.clusters); });
}

// simhashPairStream(ids, fingerprints, options): an object whose next(chunkPairs) resolves to the next
// { a, b, done } chunk of the sorted id pairs (simhash::PairStream; one chunk computed at a time, in order).
struct PairStreamState {
  std::mutex mu;
  std::unique_ptr<simhash::PairStream> stream;
};

class SimhashPairChunkWorker : public PairChunkWorker {
 public:
  SimhashPairChunkWorker(Napi::Env env, std::shared_ptr<PairStreamState> ps, uint64_t max_pairs)
      : PairChunkWorker(env), ps_(std::move(ps)), max_(max_pairs), slots_(parallel::MaxSlots()) {}

 protected:
  Status Run() override {
    std::lock_guard<std::mutex> g(ps_->mu);
    return ps_->stream->Next(max_, slots_, stop(), &pairs_, &done_);
  }

 private:
  std::shared_ptr<PairStreamState> ps_;
  uint64_t max_;
  size_t slots_;
};

Napi::Value PairStream(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const FindAllConfig c = ParseFindAll(env, info[2], Napi::Value());
  const U64View fps = GetU64Array(env, info[1], "fingerprints");
  const U64View ids = FindAllIds(env, info[0], fps.size);
  if (fps.size >= UINT32_MAX) ThrowRangeError(env, "at most 4294967294 fingerprints per call");
  auto ps = std::make_shared<PairStreamState>();
  // ids that are the fingerprints themselves (find-all of bare fingerprints): one copy, not two
  const bool same = ids.data != nullptr && ids.data == fps.data && ids.size == fps.size;
  ps->stream = std::make_unique<simhash::PairStream>(
      std::vector<uint64_t>(fps.data, fps.data + fps.size),
      ids.data && !same ? std::vector<uint64_t>(ids.data, ids.data + ids.size) : std::vector<uint64_t>(), c.blocks, c.distance, same);
  return PairStreamObject(env, [ps](Napi::Env e, uint64_t max) -> PairChunkWorker* {
    return new SimhashPairChunkWorker(e, ps, max);
  });
}

// simhashFormatPairs(a, b, first, into): "a b\n" lines from pair `first` on, into the Uint8Array `into` while
// whole lines fit; returns [bytes written, the next pair]. Bounded work per call (the buffer's size), in place.
Napi::Value FormatPairs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const U64View a = GetU64Array(env, info[0], "a");
  const U64View b = GetU64Array(env, info[1], "b");
  if (a.size != b.size) ThrowRangeError(env, "a and b must have the same length");
  if (!info[2].IsNumber()) ThrowTypeError(env, "Expected first to be a number");
  const double first = info[2].As<Napi::Number>().DoubleValue();
  if (!(first >= 0 && first <= static_cast<double>(a.size)) || std::floor(first) != first)
    ThrowRangeError(env, "first must be an integer from 0 to the number of pairs");
  if (!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected into to be a Uint8Array");
  Napi::TypedArray into = info[3].As<Napi::TypedArray>();
  if (into.ByteLength() < simhash::kMaxPairLine) ThrowRangeError(env, "into must hold at least one line (" + std::to_string(simhash::kMaxPairLine) + " bytes)");
  char* out = reinterpret_cast<char*>(static_cast<uint8_t*>(into.ArrayBuffer().Data()) + into.ByteOffset());
  size_t next = 0;
  const size_t written = simhash::FormatPairLines(a.data, b.data, a.size, static_cast<size_t>(first), out, into.ByteLength(), &next);
  Napi::Array r = Napi::Array::New(env, 2);
  r.Set(0u, Napi::Number::New(env, static_cast<double>(written)));
  r.Set(1u, Napi::Number::New(env, static_cast<double>(next)));
  return r;
}

// simhashParseFingerprintText(piece, final, state, out, at): find-all's plain input, parsed in place
// (simhash::ParseFingerprintText); state is the caller's Uint8Array of the line under way, values go to the
// BigUint64Array out from index `at`. Returns [at after, bytes taken, non-empty lines, newlines, bad (0/1)].
// Bounded work per call: the piece's length.
Napi::Value ParseFingerprintText(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected piece to be a Uint8Array");
  if (!info[1].IsBoolean()) ThrowTypeError(env, "Expected final to be a boolean");
  if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    ThrowTypeError(env, "Expected state to be a Uint8Array");
  Napi::TypedArray piece = info[0].As<Napi::TypedArray>(), state = info[2].As<Napi::TypedArray>();
  if (state.ByteLength() != sizeof(simhash::FingerprintLineState))
    ThrowRangeError(env, "state must be " + std::to_string(sizeof(simhash::FingerprintLineState)) + " bytes");
  if (!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array)
    ThrowTypeError(env, "Expected out to be a BigUint64Array");
  Napi::TypedArray out = info[3].As<Napi::TypedArray>();
  if (!info[4].IsNumber()) ThrowTypeError(env, "Expected at to be a number");
  const double at = info[4].As<Napi::Number>().DoubleValue();
  if (!(at >= 0 && at <= static_cast<double>(out.ElementLength())) || std::floor(at) != at)
    ThrowRangeError(env, "at must be an integer from 0 to the length of out");
  const uint8_t* text = piece.ByteLength() ? static_cast<const uint8_t*>(piece.ArrayBuffer().Data()) + piece.ByteOffset() : nullptr;
  uint8_t* st_bytes = static_cast<uint8_t*>(state.ArrayBuffer().Data()) + state.ByteOffset();
  simhash::FingerprintLineState st;
  std::memcpy(&st, st_bytes, sizeof st);  // the caller's bytes need no alignment
  uint64_t* values = out.ElementLength() ? reinterpret_cast<uint64_t*>(static_cast<uint8_t*>(out.ArrayBuffer().Data()) + out.ByteOffset()) : nullptr;
  const size_t first = static_cast<size_t>(at);
  simhash::FingerprintParse r;
  simhash::ParseFingerprintText(text, piece.ByteLength(), info[1].As<Napi::Boolean>().Value(), &st,
                                values ? values + first : nullptr, out.ElementLength() - first, &r);
  std::memcpy(st_bytes, &st, sizeof st);
  Napi::Array a = Napi::Array::New(env, 5);
  a.Set(0u, Napi::Number::New(env, static_cast<double>(first + r.values)));
  a.Set(1u, Napi::Number::New(env, static_cast<double>(r.consumed)));
  a.Set(2u, Napi::Number::New(env, static_cast<double>(r.lines)));
  a.Set(3u, Napi::Number::New(env, static_cast<double>(r.newlines)));
  a.Set(4u, Napi::Number::New(env, r.bad ? 1 : 0));
  return a;
}

// simhashSortDistinct(values, n): a promise of a new BigUint64Array of the distinct values of values[0..n),
// ascending (sorted on a libuv thread; values is copied first and not touched after the call returns).
Napi::Value SortDistinct(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const U64View v = GetU64Array(env, info[0], "values");
  if (!info[1].IsNumber()) ThrowTypeError(env, "Expected n to be a number");
  const double n = info[1].As<Napi::Number>().DoubleValue();
  if (!(n >= 0 && n <= static_cast<double>(v.size)) || std::floor(n) != n)
    ThrowRangeError(env, "n must be an integer from 0 to the length of values");
  auto values = std::make_shared<std::vector<uint64_t>>(v.data, v.data + static_cast<size_t>(n));
  return QueueFn(
      env,
      [values](const std::atomic<bool>*) {
        std::vector<uint64_t> tmp;
        values->resize(simhash::SortDistinct(values->data(), values->size(), &tmp));
        return Status::Ok();
      },
      [values](Napi::Env e) { return NewBigUint64Array(e, std::move(*values)); });
}

Napi::Value PickBlocks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) ThrowTypeError(env, "Expected n to be a number");
  const double n = info[0].As<Napi::Number>().DoubleValue();
  if (!(n >= 0) || !std::isfinite(n)) ThrowRangeError(env, "n must be a non-negative number");
  if (!info[1].IsNumber()) ThrowTypeError(env, "Expected distance to be a number");
  const double k = info[1].As<Napi::Number>().DoubleValue();
  if (!(k >= 0 && k <= simhash::kMaxDistance) || std::floor(k) != k)
    ThrowRangeError(env, "distance must be an integer from 0 to " + std::to_string(simhash::kMaxDistance));
  return Napi::Number::New(env, simhash::PickBlocks(static_cast<uint64_t>(n), static_cast<uint32_t>(k)));
}

}  // namespace

void Simhash::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("simhashFingerprints", Napi::Function::New(env, Fingerprints, "simhashFingerprints"));
  exports.Set("simhashFingerprintsSync", Napi::Function::New(env, FingerprintsSync, "simhashFingerprintsSync"));
  exports.Set("simhashCompute", Napi::Function::New(env, Compute, "simhashCompute"));
  exports.Set("simhashFindAll", Napi::Function::New(env, FindAll, "simhashFindAll"));
  exports.Set("simhashFindAllSync", Napi::Function::New(env, FindAllSync, "simhashFindAllSync"));
  exports.Set("simhashPairStream", Napi::Function::New(env, PairStream, "simhashPairStream"));
  exports.Set("simhashPickBlocks", Napi::Function::New(env, PickBlocks, "simhashPickBlocks"));
  exports.Set("simhashFormatPairs", Napi::Function::New(env, FormatPairs, "simhashFormatPairs"));
  exports.Set("simhashParseFingerprintText", Napi::Function::New(env, ParseFingerprintText, "simhashParseFingerprintText"));
  exports.Set("simhashSortDistinct", Napi::Function::New(env, SortDistinct, "simhashSortDistinct"));
}

}  // namespace binding
}  // namespace neardup
