// The CPU backend's fork-join pool: every task of every job runs exactly once, on the job
// it belongs to, and a job is over only when all its tasks are; also when a task stalls
// (a thread that lost its core) and when a worker wakes late into a newer job.
#include "backend/cpu/thread_pool.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "test_harness.h"

using leapfrog::cpu::ThreadPool;

namespace {
// Runs `jobs` jobs of varying sizes; each task records that it ran, under which job, on
// which thread. A CHECK fails on any task run twice, never, late, or on a bad thread index.
void run_jobs(ThreadPool& pool, int jobs, int stall_every) {
  std::atomic<int> current{-1};
  std::vector<std::atomic<int>> runs(64);
  std::atomic<int> wrong_job{0}, bad_thread{0};
  for (int j = 0; j < jobs; ++j) {
    const int n = 1 + (j * 7919) % 64;
    for (int t = 0; t < n; ++t) runs[t].store(0);
    current.store(j);
    pool.run(n, [&, j](int task, int thread) {
      if (current.load() != j) wrong_job.fetch_add(1);
      if (thread < 0 || thread >= pool.size()) bad_thread.fetch_add(1);
      // Some tasks stall, as a thread that lost its core does.
      if (stall_every > 0 && (j + task) % stall_every == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      runs[task].fetch_add(1);
    });
    current.store(-1);  // any task of job j running from here on is caught above
    for (int t = 0; t < n; ++t) {
      if (runs[t].load() != 1) {
        CHECK_EQ(runs[t].load(), 1);
        return;
      }
    }
  }
  CHECK_EQ(wrong_job.load(), 0);
  CHECK_EQ(bad_thread.load(), 0);
}
}  // namespace

TEST(every_task_once_on_its_own_job) {
  for (int threads : {2, 3, 4}) {
    ThreadPool pool(threads);
    run_jobs(pool, 20000, 0);
  }
}

TEST(stalled_tasks_hold_their_job_and_no_other) {
  ThreadPool pool(4);
  run_jobs(pool, 3000, 97);
}

TEST(workers_asleep_between_far_apart_jobs_wake_into_the_current_one) {
  ThreadPool pool(3);
  for (int round = 0; round < 5; ++round) {
    // Long enough for the workers to stop spinning and sleep on the condition variable.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    run_jobs(pool, 200, 0);
  }
}

TEST(single_thread_and_single_task_run_inline) {
  ThreadPool one(1);
  int sum = 0;
  one.run(10, [&](int task, int thread) {
    CHECK_EQ(thread, 0);
    sum += task;
  });
  CHECK_EQ(sum, 45);
  ThreadPool two(2);
  int ran = 0;
  two.run(1, [&](int, int thread) {
    CHECK_EQ(thread, 0);
    ++ran;
  });
  CHECK_EQ(ran, 1);
}

TEST_MAIN()
