// A small fork-join pool for the per-layer kernels. The calling thread works too; workers
// spin briefly between jobs (a decode step issues a few hundred jobs per token, and waking
// a sleeping thread costs more than a small job) and then sleep on a condition variable.
//
// A job is over when its tasks are done, not when every worker has checked in: a worker that
// lost its core (the editor's own processes share the machine) must not hold up jobs it took
// no task of. With one of two cores busy, waiting for every worker made two threads decode
// the bundled model 3x slower than one (209 against 627 tokens/s). Tasks are claimed with a
// compare-and-swap on (job number, next task), so a worker that wakes late can never take a
// task of a job that has ended or not yet begun.
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
  // Claims and runs tasks of job `job` until it has none left (or a newer job has begun).
  void work(uint32_t job, int thread);

  static constexpr uint64_t pack(uint32_t job, uint32_t low) {
    return (static_cast<uint64_t>(job) << 32) | low;
  }

  int n_threads_;
  std::vector<std::thread> threads_;
  std::mutex run_mutex_;
  std::mutex sleep_mutex_;  // with wake_: sleeping between jobs
  std::condition_variable wake_;
  uint32_t last_job_ = 0;  // under run_mutex_
  std::atomic<const std::function<void(int, int)>*> fn_{nullptr};
  // Each on its own cache line: claims, completions and the waiting caller's reads would
  // otherwise bounce one line between the cores.
  alignas(64) std::atomic<uint64_t> job_tasks_{0};  // (job number, its task count)
  alignas(64) std::atomic<uint64_t> next_task_{0};  // (job number, next unclaimed task)
  alignas(64) std::atomic<int> done_{0};            // tasks of the current job finished
  std::atomic<uint32_t> generation_{0};             // the newest job, for workers waiting for one
  std::atomic<bool> stop_{false};
};

}  // namespace leapfrog::cpu
