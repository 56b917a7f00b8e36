// An uninitialised, malloc-backed array for large results: no zero-fill (fresh pages are touched only when
// written), shrinkable with realloc, and releasable to an owner that frees it with std::free (the binding
// hands it to JavaScript as an external ArrayBuffer).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace neardup {

// Large blocks (>= 8 MiB, not yet written): ask for transparent huge pages (far fewer page faults when they
// are written, and far fewer TLB misses when they are read at random).
inline void AdviseHugePages(void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= (8u << 20)) {
    const uintptr_t huge = uintptr_t(2) << 20;
    const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + huge - 1) & ~(huge - 1);
    const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(huge - 1);
    if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
  }
#else
  (void)p;
  (void)bytes;
#endif
}

// A std::allocator that advises huge pages for large blocks (for vectors read at random).
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    T* p = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (p == nullptr) throw std::bad_alloc();
    AdviseHugePages(p, n * sizeof(T));
    return p;
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

template <typename T>
class RawBuffer {
 public:
  RawBuffer() = default;
  ~RawBuffer() { std::free(p_); }
  RawBuffer(const RawBuffer&) = delete;
  RawBuffer& operator=(const RawBuffer&) = delete;
  RawBuffer(RawBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  RawBuffer& operator=(RawBuffer&& o) noexcept {
    if (this != &o) {
      std::free(p_);
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  // Throws std::bad_alloc when the memory cannot be had.
  void Allocate(size_t n) {
    std::free(p_);
    p_ = nullptr;
    n_ = 0;
    if (n == 0) return;
    p_ = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (p_ == nullptr) throw std::bad_alloc();
    n_ = n;
    AdviseHugePages(p_, n * sizeof(T));
  }
  // Keeps the first n elements (n <= size()).
  void Shrink(size_t n) {
    if (n >= n_) return;
    if (n == 0) {
      std::free(p_);
      p_ = nullptr;
      n_ = 0;
      return;
    }
    if (T* q = static_cast<T*>(std::realloc(p_, n * sizeof(T)))) p_ = q;
    n_ = n;
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  // Gives up ownership: the caller frees with std::free.
  T* Release() {
    n_ = 0;
    return std::exchange(p_, nullptr);
  }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace neardup
