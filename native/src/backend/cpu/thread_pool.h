// A small fork-join pool for the per-layer kernels. The calling thread works too; workers
// spin briefly between jobs (a decode step issues a few hundred jobs per token, and waking
// a sleeping thread costs more than a small job) and then sleep on a condition variable.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace leapfrog::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(task, thread_index) for every task in [0, n_tasks), tasks handed out
  // dynamically; returns when all are done. Calls from different threads are serialized.
  void run(int n_tasks, const std::function<void(int task, int thread)>& fn);
  // As run(), but on the calling thread alone when the job is too small (`work` in rough
  // multiply-adds) to pay for waking the pool.
  void run_sized(int n_tasks, double work, const std::function<void(int task, int thread)>& fn) {
    if (work < kMinParallelWork) {
      for (int t = 0; t < n_tasks; ++t) fn(t, 0);
    } else {
      run(n_tasks, fn);
    }
  }
  static constexpr double kMinParallelWork = 200000;

  // Number of physical cores (falls back to hardware_concurrency).
  static int physical_cores();

 private:
  void worker(int index);
  void work(int thread);

  int n_threads_;
  std::vector<std::thread> threads_;
  std::mutex run_mutex_;
  std::mutex sleep_mutex_;  // with wake_: sleeping between jobs
  std::condition_variable wake_;
  const std::function<void(int, int)>* fn_ = nullptr;
  int n_tasks_ = 0;
  std::atomic<int> next_task_{0};
  std::atomic<int> busy_{0};
  std::atomic<uint32_t> generation_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace leapfrog::cpu
