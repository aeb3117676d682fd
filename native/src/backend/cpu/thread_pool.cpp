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
  generation_.store(last_job_ + 1);
  { std::lock_guard<std::mutex> l(sleep_mutex_); }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::work(uint32_t job, int thread) {
  // The task count is this very job's, or the job is not current: a newer job's count (and
  // function) must never be taken for this one's.
  const uint64_t jt = job_tasks_.load(std::memory_order_acquire);
  if (static_cast<uint32_t>(jt >> 32) != job) return;
  const uint32_t n_tasks = static_cast<uint32_t>(jt);
  const std::function<void(int, int)>* fn = nullptr;
  int finished = 0;
  uint64_t v = next_task_.load(std::memory_order_acquire);
  while (static_cast<uint32_t>(v >> 32) == job && static_cast<uint32_t>(v) < n_tasks) {
    if (!next_task_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
      continue;  // v now holds the current value
    }
    // A claimed task keeps its job from ending (its completion is counted below), so fn_
    // is still this job's.
    if (!fn) fn = fn_.load(std::memory_order_acquire);
    (*fn)(static_cast<int>(static_cast<uint32_t>(v)), thread);
    ++finished;
    ++v;  // the likeliest next value; a failed exchange corrects it
  }
  if (finished) done_.fetch_add(finished, std::memory_order_acq_rel);
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
    work(g, index);
  }
}

void ThreadPool::run(int n_tasks, const std::function<void(int, int)>& fn) {
  if (n_tasks <= 0) return;
  if (n_threads_ == 1 || n_tasks == 1) {
    for (int t = 0; t < n_tasks; ++t) fn(t, 0);
    return;
  }
  std::lock_guard<std::mutex> lock(run_mutex_);
  const uint32_t job = ++last_job_;
  // The previous job is over (all its tasks done): nobody reads these until the job is
  // published by the release stores below.
  fn_.store(&fn, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  job_tasks_.store(pack(job, static_cast<uint32_t>(n_tasks)), std::memory_order_release);
  next_task_.store(pack(job, 0), std::memory_order_release);
  generation_.store(job, std::memory_order_release);
  // Taking the lock orders this wake-up after any worker's check-then-sleep (no lost wake).
  { std::lock_guard<std::mutex> l(sleep_mutex_); }
  wake_.notify_all();
  work(job, 0);
  // Wait for the tasks other threads claimed; yield after a while in case one of them lost
  // its core (a spinning waiter would then hold the core that thread needs).
  for (int spin = 0; done_.load(std::memory_order_acquire) != n_tasks; ++spin) {
    if (spin < 4000) {
      LF_PAUSE();
    } else {
      std::this_thread::yield();
    }
  }
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
