#include "parallel/pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace neardup {
namespace parallel {
namespace {

size_t Clamp(size_t n) { return std::min<size_t>(std::max<size_t>(n, 1), 256); }

size_t DetectDefault() {
  if (const char* env = std::getenv("NEARDUP_THREADS")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return Clamp(static_cast<size_t>(v));
  }
  const unsigned hc = std::thread::hardware_concurrency();
  return Clamp(hc == 0 ? 1 : hc);
}

std::atomic<size_t> g_concurrency{0};

class Pool {
 public:
  // Makes sure at least `n` worker threads exist.
  void EnsureWorkers(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    while (workers_ < n) {
      std::thread([this] { Loop(); }).detach();
      workers_++;
    }
  }
  void Submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void Loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  size_t workers_ = 0;
};

Pool& ThePool() {
  static Pool* pool = new Pool();  // intentionally never destroyed (see pool.h)
  return *pool;
}

struct Job {
  size_t n = 0, grain = 1, chunks = 0;
  const ChunkFn* fn = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::atomic<size_t> next{0};
  std::atomic<size_t> next_slot{1};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable cv;
  size_t done = 0;  // chunks finished (or skipped), under mu
  std::exception_ptr error;

  void Run(size_t slot) {
    size_t finished = 0;
    for (;;) {
      const size_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) break;
      const bool skip = failed.load(std::memory_order_relaxed) || (stop != nullptr && stop->load(std::memory_order_relaxed));
      if (!skip) {
        try {
          const size_t b = c * grain;
          (*fn)(b, std::min(n, b + grain), slot);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::current_exception();
          failed.store(true, std::memory_order_relaxed);
        }
      }
      finished++;
    }
    if (finished > 0) {
      std::lock_guard<std::mutex> lock(mu);
      done += finished;
      if (done == chunks) cv.notify_all();
    }
  }
};

}  // namespace

size_t DefaultConcurrency() {
  static const size_t d = DetectDefault();
  return d;
}

size_t Concurrency() {
  const size_t c = g_concurrency.load(std::memory_order_relaxed);
  return c == 0 ? DefaultConcurrency() : c;
}

void SetConcurrency(size_t n) { g_concurrency.store(n == 0 ? 0 : Clamp(n), std::memory_order_relaxed); }

size_t MaxSlots() { return Concurrency(); }

void ParallelFor(size_t n, size_t grain, size_t slots, const ChunkFn& fn, const std::atomic<bool>* stop) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  const size_t chunks = (n + grain - 1) / grain;
  const size_t helpers = std::min(chunks, std::max<size_t>(slots, 1)) - 1;
  if (helpers == 0) {
    for (size_t b = 0; b < n; b += grain) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
      fn(b, std::min(n, b + grain), 0);
    }
    return;
  }
  auto job = std::make_shared<Job>();
  job->n = n;
  job->grain = grain;
  job->chunks = chunks;
  job->fn = &fn;
  job->stop = stop;
  Pool& pool = ThePool();
  pool.EnsureWorkers(helpers);
  for (size_t i = 0; i < helpers; i++) {
    // A helper that starts after all chunks were claimed finds nothing to do and never touches fn.
    pool.Submit([job] { job->Run(job->next_slot.fetch_add(1, std::memory_order_relaxed)); });
  }
  job->Run(0);
  std::unique_lock<std::mutex> lock(job->mu);
  job->cv.wait(lock, [&] { return job->done == job->chunks; });
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace parallel
}  // namespace neardup
