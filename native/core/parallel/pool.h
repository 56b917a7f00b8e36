// One process-wide, bounded thread pool, created on first use and never torn down (its threads sleep on a
// condition variable; leaving it alive avoids joining at process exit while a batch may still run).
//
// ParallelFor runs a range in chunks on the pool *and* on the calling thread, so a caller always makes
// progress even when every pool thread is busy with another caller's batch: concurrent batches share the
// pool without deadlock, and the number of threads never exceeds the configured concurrency (plus callers).
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>

namespace neardup {
namespace parallel {

// Concurrency used by ParallelFor: NEARDUP_THREADS from the environment if set, otherwise the number of
// available cores. SetConcurrency(0) restores that default. Values are clamped to [1, 256].
size_t Concurrency();
void SetConcurrency(size_t n);
size_t DefaultConcurrency();

// fn(begin, end, slot) for consecutive chunks [begin, end) of [0, n) of at most `grain` items; `slot` is
// in [0, slots) and no two chunks run concurrently with the same slot (an index for per-thread scratch:
// call MaxSlots() once, size the scratch, pass the same value here).
// Returns when every chunk is done. The first exception thrown by fn is rethrown here once all running
// chunks have finished; the remaining chunks are skipped. `stop`, when given, is polled between chunks.
using ChunkFn = std::function<void(size_t begin, size_t end, size_t slot)>;
void ParallelFor(size_t n, size_t grain, size_t slots, const ChunkFn& fn,
                 const std::atomic<bool>* stop = nullptr);

// Upper bound on slots for a ParallelFor started now (= Concurrency()).
size_t MaxSlots();

}  // namespace parallel
}  // namespace neardup
