// Per-environment state and the async worker base shared by every exported class.
//
// Each async batch is a baton (sharp's pattern): options are validated and copied on the JS thread, input
// Buffers are kept alive by references held by the worker, Execute() touches only the baton and the core,
// and OnOK()/OnError() settle the Promise on the JS thread. An environment cleanup hook (worker thread exit,
// process teardown) raises `closing` and waits for every running Execute() to return, so no core thread
// reads a Buffer after its environment freed it; batches queued after that are rejected without running.
// Note: Node lets in-flight thread-pool work finish before it runs cleanup hooks, so worker.terminate()
// during a long batch waits for that batch (the `closing` check between chunks matters for process
// teardown paths that run the hooks first).
// The library itself is pinned at load (io::os::PinLoadedModule, addon.cc): the process-wide core pool's
// threads run its code whatever environment queued the work, so it must not be unloaded with the last
// environment that loaded it (see HACKING.md, "Environment teardown").
#pragma once
#include <napi.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "util/raw_buffer.h"
#include "util/status.h"

namespace neardup {
namespace binding {

struct AddonState {
  std::atomic<bool> closing{false};
  std::mutex mu;
  std::condition_variable cv;
  int executing = 0;
  // The largest result ArrayBuffer handed to JavaScript, in bytes: buffer.constants.MAX_LENGTH (set by
  // lib/native.ts through setMaxResultBytes), lowered by NEARDUP_TEST_MAX_RESULT_BYTES for tests.
  std::atomic<uint64_t> max_result_bytes{uint64_t(1) << 32};

  // Called by the cleanup hook.
  void CloseAndWait();
};

std::shared_ptr<AddonState> State(Napi::Env env);

// Base for promise-returning batches. Subclasses implement Run() (background thread, may throw or return a
// non-ok Status) and Resolve() (JS thread, builds the result).
class PromiseWorker : public Napi::AsyncWorker {
 public:
  explicit PromiseWorker(Napi::Env env)
      : Napi::AsyncWorker(env, "neardup"), deferred_(Napi::Promise::Deferred::New(env)), state_(State(env)) {}

  Napi::Promise QueueAndGetPromise() {
    Queue();
    return deferred_.Promise();
  }

 protected:
  virtual Status Run() = 0;
  virtual Napi::Value Resolve(Napi::Env env) = 0;
  const std::atomic<bool>* stop() const { return &state_->closing; }

 private:
  void Execute() override;
  void OnOK() override;
  void OnError(const Napi::Error& e) override;

  Napi::Promise::Deferred deferred_;
  std::shared_ptr<AddonState> state_;
  Status status_;
};

// The native state behind a closable JS object (an index, a session, a filter). The JS object and every
// worker handed work hold a shared_ptr; close() raises `closed` and drops the object's reference, so it
// returns at once and the state is freed by whichever holder lets go last. Work that has not started when
// `closed` is raised returns Cancelled(); running work finishes (or stops between chunks on teardown).
struct Closable {
  std::atomic<bool> closed{false};
};

// The object's state if it is still open; throws ERR_NEARDUP_CLOSED ("the <what> is closed") otherwise.
template <typename S>
std::shared_ptr<S> LiveState(Napi::Env env, const std::shared_ptr<S>& s, const char* what) {
  if (!s || s->closed.load()) {
    Napi::Error e = Napi::Error::New(env, std::string("the ") + what + " is closed");
    e.Value().Set("code", Napi::String::New(env, "ERR_NEARDUP_CLOSED"));
    throw e;
  }
  return s;
}

// Raises the closed flag and drops the object's reference (Closable's close()).
template <typename S>
void CloseState(std::shared_ptr<S>* s) {
  if (*s) {
    (*s)->closed.store(true);
    s->reset();
  }
}

inline Status Cancelled(const char* what) {
  return Status(Code::kCancelled, std::string("the ") + what + " was closed before this operation ran");
}

// A promise for work given as two closures: `run` on a libuv thread (its argument: the stop flag raised at
// environment teardown), `resolve` on the JS thread.
Napi::Value QueueFn(Napi::Env env, std::function<Status(const std::atomic<bool>*)> run,
                    std::function<Napi::Value(Napi::Env)> resolve);

// Runs the same work synchronously (the *Sync twins): single-threaded on the calling thread.
Napi::Value RunSync(Napi::Env env, const std::function<Status()>& run,
                    const std::function<Napi::Value(Napi::Env)>& resolve);

// Throws ERR_NEARDUP_RESULT_TOO_LARGE when a result of `bytes` bytes cannot be one ArrayBuffer.
void CheckResultSize(Napi::Env env, uint64_t bytes);
// A failed external ArrayBuffer whose finalizer may or may not have run: throws without touching the data.
[[noreturn]] void ThrowExternalFailed(Napi::Env env, napi_status st);

// Moves a vector's storage into an ArrayBuffer without copying where the runtime allows external buffers,
// copying otherwise. A result larger than an ArrayBuffer can hold is refused (CheckResultSize) before any
// N-API call: once napi_create_external_arraybuffer fails, Node may already have run the finalizer, so the
// storage is never touched again after a failure other than "external buffers not allowed".
template <typename T>
Napi::ArrayBuffer ToArrayBuffer(Napi::Env env, std::vector<T>&& v);
template <typename T>
Napi::ArrayBuffer ToArrayBuffer(Napi::Env env, RawBuffer<T>&& v);

// A BigUint64Array over a vector's (or RawBuffer's) storage, without copying where the runtime allows.
template <typename V>
Napi::Value NewBigUint64Array(Napi::Env env, V&& v) {
  const size_t n = v.size();
  Napi::ArrayBuffer ab = ToArrayBuffer(env, std::move(v));
  napi_value ta;
  const napi_status st = napi_create_typedarray(env, napi_biguint64_array, n, ab, 0, &ta);
  NAPI_THROW_IF_FAILED(env, st, Napi::Value());
  return Napi::Value(env, ta);
}

// { a, b }: two BigUint64Arrays of the pairs' first and second members (candidate pairs, SimHash pairs).
Napi::Value PairArrays(Napi::Env env, const std::vector<std::pair<uint64_t, uint64_t>>& pairs);

// One chunk of a stream of pairs (LshIndex.candidatePairsStream, simhashFindAllStream): Run() fills pairs_
// and done_; resolves to { a, b, done }.
class PairChunkWorker : public PromiseWorker {
 public:
  explicit PairChunkWorker(Napi::Env env) : PromiseWorker(env) {}

 protected:
  Napi::Value Resolve(Napi::Env env) override;
  std::vector<std::pair<uint64_t, uint64_t>> pairs_;
  bool done_ = false;
};

// { next(chunkPairs) }: each call checks chunkPairs (an integer from 1 to 2^28) and queues the worker that
// make(env, chunkPairs) returns; make (and what it holds) lives as long as the object.
Napi::Object PairStreamObject(Napi::Env env, std::function<PairChunkWorker*(Napi::Env, uint64_t)> make);
}  // namespace binding
}  // namespace neardup

#include <utility>
#include <vector>

namespace neardup {
namespace binding {

template <typename T>
Napi::ArrayBuffer ToArrayBuffer(Napi::Env env, std::vector<T>&& v) {
  CheckResultSize(env, static_cast<uint64_t>(v.size()) * sizeof(T));
  const size_t bytes = v.size() * sizeof(T);
  if (bytes > 0) {
    auto* owned = new std::vector<T>(std::move(v));
    napi_value ab;
    const napi_status st = napi_create_external_arraybuffer(
        env, owned->data(), bytes,
        [](napi_env, void*, void* hint) { delete static_cast<std::vector<T>*>(hint); }, owned, &ab);
    if (st == napi_ok) return Napi::ArrayBuffer(env, ab);
    // Only "not allowed" (a sandboxed runtime) is refused before Node takes the finalizer: copy instead.
    // Any other failure may have run it already, so `owned` is neither read nor freed here.
    if (st != napi_no_external_buffers_allowed) ThrowExternalFailed(env, st);
    v = std::move(*owned);
    delete owned;
  }
  Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, bytes);
  if (bytes > 0) std::memcpy(ab.Data(), v.data(), bytes);
  return ab;
}

template <typename T>
Napi::ArrayBuffer ToArrayBuffer(Napi::Env env, RawBuffer<T>&& v) {
  CheckResultSize(env, static_cast<uint64_t>(v.size()) * sizeof(T));
  const size_t bytes = v.size() * sizeof(T);
  if (bytes > 0) {
    napi_value ab;
    const napi_status st = napi_create_external_arraybuffer(
        env, v.data(), bytes, [](napi_env, void* data, void*) { std::free(data); }, nullptr, &ab);
    if (st == napi_ok) {
      v.Release();
      return Napi::ArrayBuffer(env, ab);
    }
    if (st != napi_no_external_buffers_allowed) {
      v.Release();  // the finalizer may have freed it already: never free (or read) it again
      ThrowExternalFailed(env, st);
    }
  }
  Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, bytes);
  if (bytes > 0) std::memcpy(ab.Data(), v.data(), bytes);
  return ab;
}

}  // namespace binding
}  // namespace neardup
