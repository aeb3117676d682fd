#include "backend/cpu/thread_pool.h"

#include <fstream>
#include <set>
#include <string>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#define LF_PAUSE() _mm_pause()
#else
#define LF_PAUSE() ((void)0)
#endif

namespace leapfrog::cpu {

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  { std::lock_guard<std::mutex> l(sleep_mutex_); }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::work(int thread) {
  for (;;) {
    const int task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= n_tasks_) break;
    (*fn_)(task, thread);
  }
}

void ThreadPool::worker(int index) {
  uint32_t seen = 0;
  for (;;) {
    // Spin a little (jobs come in quick succession within a forward pass), then sleep.
    uint32_t g = generation_.load(std::memory_order_acquire);
    for (int spin = 0; g == seen && spin < 4000; ++spin) {
      LF_PAUSE();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load()) return;
    work(index);
    busy_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run(int n_tasks, const std::function<void(int, int)>& fn) {
  if (n_tasks <= 0) return;
  if (n_threads_ == 1 || n_tasks == 1) {
    for (int t = 0; t < n_tasks; ++t) fn(t, 0);
    return;
  }
  std::lock_guard<std::mutex> lock(run_mutex_);
  fn_ = &fn;
  n_tasks_ = n_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  busy_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  // Taking the lock orders this wake-up after any worker's check-then-sleep (no lost wake).
  { std::lock_guard<std::mutex> l(sleep_mutex_); }
  wake_.notify_all();
  work(0);
  // Wait for the workers; yield after a while in case a worker lost its core (the machine
  // may be shared, and a spinning waiter would then hold the core the worker needs).
  for (int spin = 0; busy_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < 4000) {
      LF_PAUSE();
    } else {
      std::this_thread::yield();
    }
  }
  fn_ = nullptr;
}

int ThreadPool::physical_cores() {
  // Distinct (physical id, core id) pairs in /proc/cpuinfo; SMT siblings share a core and
  // do not speed up memory-bound decoding.
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string line, phys = "0";
  while (std::getline(in, line)) {
    auto value = [&] { return line.substr(line.find(':') + 1); };
    if (line.rfind("physical id", 0) == 0) phys = value();
    if (line.rfind("core id", 0) == 0) cores.insert({phys, value()});
  }
  int n = static_cast<int>(cores.size());
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0 || (hw > 0 && n > hw)) n = hw;
  return n > 0 ? n : 1;
}

}  // namespace leapfrog::cpu
