// The module entry point: sets up per-environment state and calls each exported class's Init.
#include "addon.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "args.h"
#include "doubri.h"
#include "lsh_index.h"
#include "lsh_dedup.h"
#include "hashes.h"
#include "exact.h"
#include "jsonl.h"
#include "minhash.h"
#include "paragraph_filter.h"
#include "chunk_index.h"
#include "posting_index.h"
#include "runtime.h"
#include "shingles.h"
#include "simhash.h"
#include "simhash_index.h"
#include "substrings.h"
#include "temp_files.h"
#include "files.h"
#include "decontam_index.h"
#include "code.h"
#include "io/os.h"

namespace neardup {
namespace binding {

struct InstanceData {
  std::shared_ptr<AddonState> state = std::make_shared<AddonState>();
};

void AddonState::CloseAndWait() {
  closing.store(true);
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [this] { return executing == 0; });
}

std::shared_ptr<AddonState> State(Napi::Env env) { return env.GetInstanceData<InstanceData>()->state; }

void PromiseWorker::Execute() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->closing.load()) {
      status_ = Status(Code::kCancelled, "the environment is shutting down");
      return;
    }
    state_->executing++;
  }
  try {
    status_ = Run();
  } catch (const std::bad_alloc&) {
    status_ = Status(Code::kInternal, "out of memory");
  } catch (const std::exception& e) {
    status_ = Status(Code::kInternal, e.what());
  }
  if (status_.ok() && state_->closing.load()) status_ = Status(Code::kCancelled, "the environment is shutting down");
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->executing--;
  state_->cv.notify_all();
}

// When the environment is being torn down (worker.terminate(), process exit) no JavaScript can run: every
// N-API call that could (creating the error's properties, settling the promise) fails, and node-addon-api
// turns that failure into a C++ exception that would escape the completion callback and abort the whole
// process. So a failure to settle is swallowed rather than thrown out of the callback (nobody can observe
// that promise any more), and once the cleanup hook has run nothing is settled at all.
// Note: Node drains pending async work (Environment::CleanupHandles) *before* it runs cleanup hooks, so on
// worker.terminate() a running batch completes in full before `closing` is raised; the completion
// callback then runs with JavaScript disallowed, which is the case the try/catch handles.
void PromiseWorker::OnOK() {
  if (state_->closing.load()) return;
  Napi::Env env = Env();
  try {
    Napi::HandleScope scope(env);
    if (!status_.ok()) {
      deferred_.Reject(StatusError(env, status_).Value());
      return;
    }
    try {
      deferred_.Resolve(Resolve(env));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  } catch (const Napi::Error&) {
    // The promise could not be settled (the environment cannot run JavaScript): nothing left to do.
  }
}

void PromiseWorker::OnError(const Napi::Error& e) {
  if (state_->closing.load()) return;
  try {
    deferred_.Reject(e.Value());
  } catch (const Napi::Error&) {
  }
}

void CheckResultSize(Napi::Env env, uint64_t bytes) {
  const uint64_t max = State(env)->max_result_bytes.load();
  if (bytes > max)
    throw CodedError(env, "ERR_NEARDUP_RESULT_TOO_LARGE",
                     "the result needs " + std::to_string(bytes) + " bytes, more than one ArrayBuffer can hold (" +
                         std::to_string(max) + " bytes, buffer.constants.MAX_LENGTH): split the batch");
}

void ThrowExternalFailed(Napi::Env env, napi_status st) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) throw Napi::Error::New(env);  // takes the pending exception
  throw CodedError(env, "ERR_NEARDUP_INTERNAL", "could not create a result ArrayBuffer (napi status " +
                                                    std::to_string(static_cast<int>(st)) + ")");
}

// setMaxResultBytes(n): the largest result ArrayBuffer (lib/native.ts passes buffer.constants.MAX_LENGTH);
// NEARDUP_TEST_MAX_RESULT_BYTES, when set, caps it (tests). Returns the limit now in force.
Napi::Value SetMaxResultBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto st = State(env);
  if (!info[0].IsUndefined()) {
    if (!info[0].IsNumber()) ThrowTypeError(env, "Expected maxBytes to be a number");
    const double d = info[0].As<Napi::Number>().DoubleValue();
    if (!(d >= 1 && d <= 9007199254740991.0)) ThrowRangeError(env, "maxBytes must be a positive safe integer");
    uint64_t v = static_cast<uint64_t>(d);
    const char* cap = std::getenv("NEARDUP_TEST_MAX_RESULT_BYTES");
    if (cap != nullptr && *cap != '\0') v = std::min<uint64_t>(v, std::strtoull(cap, nullptr, 10));
    st->max_result_bytes.store(v);
  }
  return Napi::Number::New(env, static_cast<double>(st->max_result_bytes.load()));
}

namespace {
class FnWorker : public PromiseWorker {
 public:
  FnWorker(Napi::Env env, std::function<Status(const std::atomic<bool>*)> run,
           std::function<Napi::Value(Napi::Env)> resolve)
      : PromiseWorker(env), run_(std::move(run)), resolve_(std::move(resolve)) {}

 protected:
  Status Run() override { return run_(stop()); }
  Napi::Value Resolve(Napi::Env env) override { return resolve_(env); }

 private:
  std::function<Status(const std::atomic<bool>*)> run_;
  std::function<Napi::Value(Napi::Env)> resolve_;
};
}  // namespace

Napi::Value QueueFn(Napi::Env env, std::function<Status(const std::atomic<bool>*)> run,
                    std::function<Napi::Value(Napi::Env)> resolve) {
  return (new FnWorker(env, std::move(run), std::move(resolve)))->QueueAndGetPromise();
}

Napi::Value RunSync(Napi::Env env, const std::function<Status()>& run,
                    const std::function<Napi::Value(Napi::Env)>& resolve) {
  Status s;
  try {
    s = run();
  } catch (const std::bad_alloc&) {
    s = Status(Code::kInternal, "out of memory");
  } catch (const std::exception& ex) {
    s = Status(Code::kInternal, ex.what());
  }
  if (!s.ok()) throw StatusError(env, s);
  return resolve(env);
}

// interrupt(): raises `closing` now, from a SIGINT/SIGTERM handler about to exit. Node lets running thread-pool
// work finish before the process exits; with the flag raised, every loop that polls it (between chunks of a
// parallel loop) stops at once instead of finishing a step that can take minutes. Work queued after it is
// rejected: the process is exiting.
Napi::Value Interrupt(const Napi::CallbackInfo& info) {
  State(info.Env())->closing.store(true);
  return info.Env().Undefined();
}

namespace {
// The addon is never unloaded. Node dlcloses an addon when the last environment that loaded it is freed
// (a Worker that required it while the main thread did not), but the process-wide pool's threads
// (parallel/pool.cc) are not the environment's: they sleep in code of this library, and a helper that
// started after its batch's chunks were all claimed may still be returning through it when the batch's
// completion callback has run. Unmapping the library under them was the SIGSEGV on worker.terminate()
// (issue 25). Pinned, the next environment that loads the addon gets the same copy and the same pool.
const char kModuleAnchor = 0;
std::once_flag g_pin_once;
}  // namespace

Napi::Object InitAddon(Napi::Env env, Napi::Object exports) {
  std::call_once(g_pin_once, [] { io::os::PinLoadedModule(&kModuleAnchor); });
  auto* data = new InstanceData();
  env.SetInstanceData<InstanceData>(data);
  if (const char* cap = std::getenv("NEARDUP_TEST_MAX_RESULT_BYTES"); cap != nullptr && *cap != '\0')
    data->state->max_result_bytes.store(std::min<uint64_t>(data->state->max_result_bytes.load(), std::strtoull(cap, nullptr, 10)));
  exports.Set("setMaxResultBytes", Napi::Function::New(env, SetMaxResultBytes, "setMaxResultBytes"));
  exports.Set("interrupt", Napi::Function::New(env, Interrupt, "interrupt"));
  // The hook owns its own reference: it may run before or after the instance data is finalized.
  napi_add_env_cleanup_hook(
      env,
      [](void* arg) {
        auto* held = static_cast<std::shared_ptr<AddonState>*>(arg);
        (*held)->CloseAndWait();
        delete held;
      },
      new std::shared_ptr<AddonState>(data->state));
  Runtime::Init(env, exports);
  Shingles::Init(env, exports);
  Doubri::Init(env, exports);
  LshIndexBinding::Init(env, exports);
  LshDedupBinding::Init(env, exports);
  Simhash::Init(env, exports);
  SimhashIndexClass::Init(env, exports);
  Hashes::Init(env, exports);
  MinHash::Init(env, exports);
  ParagraphFilter::Init(env, exports);
  PostingIndexClass::Init(env, exports);
  ChunkIndexClass::Init(env, exports);
  TempFiles::Init(env, exports);
  Files::Init(env, exports);
  Jsonl::Init(env, exports);
  ExactDedupClass::Init(env, exports);
  DecontamIndexClass::Init(env, exports);
  SubstringsBinding::Init(env, exports);
  CodeBinding::Init(env, exports);
  return exports;
}

Napi::Value PairArrays(Napi::Env env, const std::vector<std::pair<uint64_t, uint64_t>>& pairs) {
  std::vector<uint64_t> a(pairs.size()), b(pairs.size());
  for (size_t i = 0; i < pairs.size(); i++) {
    a[i] = pairs[i].first;
    b[i] = pairs[i].second;
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("a", NewBigUint64Array(env, std::move(a)));
  o.Set("b", NewBigUint64Array(env, std::move(b)));
  return o;
}

Napi::Value PairChunkWorker::Resolve(Napi::Env env) {
  Napi::Object o = PairArrays(env, pairs_).As<Napi::Object>();
  o.Set("done", Napi::Boolean::New(env, done_));
  return o;
}

namespace {
using MakeChunk = std::function<PairChunkWorker*(Napi::Env, uint64_t)>;

Napi::Value PairStreamNext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint64_t max = GetCap(env, info[0], "chunkPairs");
  if (max < 1 || max > (uint64_t(1) << 28)) ThrowRangeError(env, "chunkPairs must be from 1 to 2^28");
  return (*static_cast<MakeChunk*>(info.Data()))(env, max)->QueueAndGetPromise();
}
}  // namespace

Napi::Object PairStreamObject(Napi::Env env, MakeChunk make) {
  auto* holder = new MakeChunk(std::move(make));
  Napi::Function next = Napi::Function::New(env, PairStreamNext, "next", holder);
  next.AddFinalizer([](Napi::Env, MakeChunk* h) { delete h; }, holder);  // the data's owner
  Napi::Object o = Napi::Object::New(env);
  o.Set("next", next);
  return o;
}

}  // namespace binding
}  // namespace neardup

static Napi::Object Init(Napi::Env env, Napi::Object exports) { return neardup::binding::InitAddon(env, exports); }

NODE_API_MODULE(neardup, Init)
