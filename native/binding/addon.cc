// The module entry point: sets up per-environment state and calls each exported class's Init.
#include "addon.h"

#include <cstring>

#include "args.h"
#include "doubri.h"
#include "lsh_index.h"
#include "lsh_dedup.h"
#include "hashes.h"
#include "minhash.h"
#include "paragraph_filter.h"
#include "posting_index.h"
#include "runtime.h"
#include "shingles.h"
#include "simhash.h"
#include "simhash_index.h"

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

Napi::Object InitAddon(Napi::Env env, Napi::Object exports) {
  auto* data = new InstanceData();
  env.SetInstanceData<InstanceData>(data);
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
  return exports;
}

}  // namespace binding
}  // namespace neardup

static Napi::Object Init(Napi::Env env, Napi::Object exports) { return neardup::binding::InitAddon(env, exports); }

NODE_API_MODULE(neardup, Init)
