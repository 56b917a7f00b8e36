// class LshIndex (MinHash LSH with datasketch MinHashLSH's semantics: insert/query/remove/has by integer or
// string key, candidate pairs, clusters, save; a saved index loads memory-mapped and stays appendable) and
// lshOptimalParam(threshold, numPerm, fpWeight, fnWeight).
#pragma once
#include <napi.h>

#include <atomic>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "addon.h"
#include "minhash/lsh.h"

namespace neardup {
namespace binding {

// The index behind a JS LshIndex (Closable: workers hold a shared_ptr, close() never waits for them and never
// frees the index under them). `mu` orders changes (exclusive) against reads (shared). A dedup session that
// reads the index pins it: while pins > 0, changes are refused.
struct LshIndexState : Closable {
  std::shared_mutex mu;
  std::unique_ptr<lsh::Index> index;
  std::atomic<int> pins{0};
};

// Handles of an index turned into keys while it is locked (their bytes copied), made JS values later:
// integer keys as a BigUint64Array, string keys as an array of strings.
class KeyList {
 public:
  explicit KeyList(lsh::KeyType type = lsh::KeyType::kInt) : type_(type) {}
  Status Add(const lsh::Index& ix, uint64_t handle);
  Status AddAll(const lsh::Index& ix, const std::vector<uint64_t>& handles);
  void Reserve(size_t n);
  size_t size() const { return type_ == lsh::KeyType::kInt ? ints_.size() : ends_.size(); }
  Napi::Value ToJs(Napi::Env env);

 private:
  lsh::KeyType type_;
  std::vector<uint64_t> ints_;
  std::string bytes_;
  std::vector<size_t> ends_;
};

struct LshIndexBinding {
  static void Init(Napi::Env env, Napi::Object exports);
  // The state of an LshIndex object (TypeError for anything else; ERR_NEARDUP_CLOSED when closed).
  static std::shared_ptr<LshIndexState> FromValue(Napi::Env env, const Napi::Value& v);
};

}  // namespace binding
}  // namespace neardup
