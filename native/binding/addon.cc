// The module entry point: sets up per-environment state and calls each exported class's Init.
#include "addon.h"

#include <cstring>

#include "args.h"
#include "paragraph_filter.h"
#include "runtime.h"
#include "shingles.h"

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

void PromiseWorker::OnOK() {
  Napi::Env env = Env();
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
}

void PromiseWorker::OnError(const Napi::Error& e) { deferred_.Reject(e.Value()); }

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
  ParagraphFilter::Init(env, exports);
  return exports;
}

}  // namespace binding
}  // namespace neardup

static Napi::Object Init(Napi::Env env, Napi::Object exports) { return neardup::binding::InitAddon(env, exports); }

NODE_API_MODULE(neardup, Init)
