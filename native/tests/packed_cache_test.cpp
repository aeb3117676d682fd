// The shared packed-weight cache (backend/cpu/packed_cache.h): a model loaded by a second
// backend maps the file the first one wrote and gives bit-identical logits; a stale,
// truncated or foreign file is ignored and rewritten; a cache that cannot be written leaves
// the weights in private memory and the logits unchanged; LEAPFROG_PACKED_CACHE=off writes
// nothing. Every test points LEAPFROG_CACHE_DIR at a temporary directory.
#include "backend/cpu/packed_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels.h"
#include "engine/session.h"
#include "model/model.h"
#include "random_model.h"
#include "test_harness.h"

using namespace leapfrog;
using namespace lftest;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable (or unsets it: nullopt) for one scope.
class EnvVar {
 public:
  EnvVar(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~EnvVar() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh cache directory that LEAPFROG_CACHE_DIR points at, with the cache switched on.
struct CacheDir {
  std::string path = [] {
    char t[] = "/tmp/lf_packed_cache_XXXXXX";
    return std::string(mkdtemp(t));
  }();
  EnvVar dir{"LEAPFROG_CACHE_DIR", path};
  EnvVar on{"LEAPFROG_PACKED_CACHE", std::nullopt};
  ~CacheDir() { fs::remove_all(path); }
  // What is in the cache directory proper (LEAPFROG_CACHE_DIR/packed).
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (!fs::exists(path + "/packed")) return out;
    for (const auto& e : fs::directory_iterator(path + "/packed")) out.push_back(e.path().string());
    return out;
  }
};

// One backend + model, as one sidecar process holds them.
struct Loaded {
  std::shared_ptr<CpuBackend> backend;
  std::unique_ptr<Model> model;
  std::vector<float> logits;
  CpuBackend::PackedCacheStats stats;
};

Loaded load(const std::string& path, CpuBackendOptions o = {}) {
  Loaded l;
  l.backend = std::make_shared<CpuBackend>(o);
  l.model = Model::load(path, l.backend);
  Session s(*l.model, {});
  const std::vector<int32_t> prompt = {1, 17, 42, 99, 5, 250, 7, 8};
  auto lg = s.forward(prompt, true);
  l.logits.assign(lg.begin(), lg.end());
  l.stats = l.backend->packed_cache_stats();
  return l;
}

void expect_same(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  CHECK(a.size() == b.size() && !a.empty());
  if (std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0) {
    throw FailTest{std::string(what) + ": logits differ"};
  }
}

struct Model8 {
  TmpFile file{write_model(Spec{}, "packed_cache")};  // Q8_0: packed on every x86/arm level
};

// The portable level (LEAPFROG_CPU_ISA=scalar, run by the arm64 suite) has no packed layouts:
// nothing to cache, so the tests that need packed weights say so instead of failing.
void skip_unless_q8_0_packs() {
  const cpu::Isa isa = cpu::detect_isa();
  if (cpu::kernels(isa).packed[cpu::kernel_slot(GgmlType::Q8_0)].group == 0) {
    throw SkipTest{std::string("the ") + cpu::isa_name(isa) +
                   " kernel level packs no Q8_0 weights: nothing to cache"};
  }
}

// The logits with the weights packed privately (no cache at all).
std::vector<float> private_logits(const std::string& model) {
  skip_unless_q8_0_packs();
  EnvVar off("LEAPFROG_PACKED_CACHE", "off");
  Loaded l = load(model);
  CHECK(l.stats.private_only == 1);
  return l.logits;
}

Loaded load_and_check_written(const std::string& model) {
  Loaded l = load(model);
  if (l.stats.written + l.stats.mapped + l.stats.private_only == 0) {
    throw SkipTest{"this kernel level packs no Q8_0 weights"};
  }
  CHECK(l.stats.written == 1 && l.stats.mapped == 0);
  return l;
}

}  // namespace

TEST(second_load_maps_the_cache_with_identical_logits) {
  Model8 m;
  const std::vector<float> ref = private_logits(m.file.path);
  CacheDir dir;
  Loaded cold = load_and_check_written(m.file.path);
  CHECK(dir.files().size() == 1 && dir.files()[0] == cold.stats.file);
  expect_same(cold.logits, ref, "cold cache");
  // A second backend while the first still holds the model: two windows at once.
  Loaded warm = load(m.file.path);
  CHECK(warm.stats.mapped == 1 && warm.stats.written == 0 && warm.stats.private_only == 0);
  CHECK(warm.stats.file == cold.stats.file);
  expect_same(warm.logits, ref, "warm cache");
  CHECK(dir.files().size() == 1);
}

TEST(a_load_waits_for_the_process_writing_the_cache_and_maps_its_file) {
  Model8 m;
  CacheDir dir;
  const std::string file = load_and_check_written(m.file.path).stats.file;
  const std::string aside = dir.path + "/aside";
  fs::rename(file, aside);
  // This test is the other process: it holds the lock while "writing" the cache.
  std::optional<cpu::PackedCacheLock> writing;
  writing.emplace(file, 10);
  CHECK(writing->held());
  std::optional<Loaded> second;
  std::atomic<bool> done{false};
  std::thread t([&] {
    second = load(m.file.path);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const bool waited = !done;
  fs::rename(aside, file);
  writing.reset();
  t.join();
  CHECK(waited);
  CHECK(second && second->stats.mapped == 1 && second->stats.written == 0);
  CHECK(dir.files().size() == 1);  // the cache; no lock file left
}

TEST(truncated_cache_is_ignored_and_rewritten) {
  Model8 m;
  const std::vector<float> ref = private_logits(m.file.path);
  CacheDir dir;
  const std::string file = load_and_check_written(m.file.path).stats.file;
  const auto full = fs::file_size(file);
  for (const auto cut : {full - 1, full / 2, uintmax_t(16), uintmax_t(0)}) {
    fs::resize_file(file, cut);
    Loaded l = load(m.file.path);
    CHECK(l.stats.written == 1 && l.stats.mapped == 0);
    CHECK(fs::file_size(file) == full);
    expect_same(l.logits, ref, "after truncation");
  }
}

TEST(cache_of_another_version_or_garbage_is_ignored_and_rewritten) {
  Model8 m;
  const std::vector<float> ref = private_logits(m.file.path);
  CacheDir dir;
  const std::string file = load_and_check_written(m.file.path).stats.file;
  const auto patch = [&](size_t at, const std::string& bytes) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(at);
    f.write(bytes.data(), bytes.size());
  };
  // The header: magic at 0, file format at 8, layout version at 12; then the key at 40.
  const std::vector<std::pair<size_t, std::string>> corruptions = {
      {12, std::string("\x7f\0\0\0", 4)},
      {8, std::string("\x7f\0\0\0", 4)},
      {0, "NOTACACH"},
      {60, "#"}};
  for (const auto& [at, bytes] : corruptions) {
    patch(at, bytes);
    Loaded l = load(m.file.path);
    CHECK(l.stats.written == 1 && l.stats.mapped == 0);
    expect_same(l.logits, ref, "after a corrupt header");
    CHECK(load(m.file.path).stats.mapped == 1);  // the rewritten file is good
  }
  // A longer file than its header says is refused as well.
  fs::resize_file(file, fs::file_size(file) + 4096);
  CHECK(load(m.file.path).stats.written == 1);
}

TEST(changed_model_file_gets_a_new_cache_that_replaces_the_old) {
  Model8 m;
  CacheDir dir;
  const std::string first = load_and_check_written(m.file.path).stats.file;
  // Same bytes, new modification time: another key (the identity holds the mtime).
  const struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  CHECK(utimensat(AT_FDCWD, m.file.path.c_str(), times, 0) == 0);
  // A temporary file of a writer that died long ago, and one of a writer still at work.
  const std::string stem = first.substr(0, first.rfind('-') + 1);
  const std::string dead = stem + "0.lfpacked.tmp.dead01", busy = stem + "0.lfpacked.tmp.busy01";
  std::ofstream(dead) << "x";
  std::ofstream(busy) << "x";
  fs::last_write_time(dead, fs::file_time_type::clock::now() - std::chrono::hours(2));
  Loaded l = load(m.file.path);
  CHECK(l.stats.written == 1 && l.stats.file != first);
  // The old model's cache and the dead writer's file are gone; the new cache stays.
  std::vector<std::string> left = dir.files();
  std::sort(left.begin(), left.end());
  std::vector<std::string> want = {busy, l.stats.file};
  std::sort(want.begin(), want.end());
  CHECK(left == want);
}

TEST(each_kernel_level_has_its_own_cache) {
  Model8 m;
  CacheDir dir;
  std::vector<std::string> files;
  for (cpu::Isa isa : cpu::runnable_isas()) {
    CpuBackendOptions o;
    o.isa = isa;
    Loaded cold = load(m.file.path, o);
    if (cold.stats.written + cold.stats.mapped == 0) continue;  // this level packs nothing
    // Not another level's file, even where the layouts agree (AVX2 and AVX-VNNI).
    CHECK(cold.stats.written == 1);
    Loaded warm = load(m.file.path, o);
    CHECK(warm.stats.mapped == 1);
    expect_same(warm.logits, cold.logits, cpu::isa_name(isa));
    for (const auto& f : files) CHECK(f != cold.stats.file);
    files.push_back(cold.stats.file);
  }
  CHECK(dir.files().size() == files.size());
}

TEST(unwritable_cache_dir_falls_back_to_private_packing) {
  Model8 m;
  const std::vector<float> ref = private_logits(m.file.path);
  CacheDir dir;
  // A directory below a regular file cannot be made, not even by root.
  const std::string blocker = dir.path + "/a-file";
  std::ofstream(blocker) << "x";
  EnvVar bad("LEAPFROG_CACHE_DIR", blocker);
  Loaded l = load(m.file.path);
  CHECK(l.stats.private_only == 1 && l.stats.written == 0 && l.stats.mapped == 0);
  expect_same(l.logits, ref, "private fallback");
}

TEST(failed_write_leaves_no_file_and_packs_privately) {
  Model8 m;
  const std::vector<float> ref = private_logits(m.file.path);
  CacheDir dir;
  // A file size limit makes the writes fail part way, as a full disk does.
  struct rlimit old {};
  CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 8192;
  CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
  Loaded l = load(m.file.path);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  CHECK(l.stats.private_only == 1 && l.stats.written == 0);
  CHECK(fs::is_empty(dir.path));  // the temporary file is gone, and the directory made for it
  expect_same(l.logits, ref, "after a failed write");
}

TEST(cache_off_writes_nothing) {
  Model8 m;
  CacheDir dir;
  EnvVar off("LEAPFROG_PACKED_CACHE", "off");
  CHECK(cpu::packed_cache_dir().empty());
  skip_unless_q8_0_packs();
  Loaded l = load(m.file.path);
  CHECK(l.stats.private_only == 1 && l.stats.written == 0 && l.stats.mapped == 0);
  CHECK(fs::is_empty(dir.path));  // not even the directory
}

TEST(cache_dir_from_the_environment) {
  EnvVar on("LEAPFROG_PACKED_CACHE", std::nullopt);
  {
    EnvVar d("LEAPFROG_CACHE_DIR", "/some/where");
    CHECK(cpu::packed_cache_dir() == "/some/where/packed");
  }
  EnvVar d("LEAPFROG_CACHE_DIR", std::nullopt);
  {
    EnvVar x("XDG_CACHE_HOME", "/xdg");
    CHECK(cpu::packed_cache_dir() == "/xdg/leapfrog/packed");
  }
  EnvVar x("XDG_CACHE_HOME", std::nullopt);
  EnvVar h("HOME", "/home/someone");
  CHECK(cpu::packed_cache_dir() == "/home/someone/.cache/leapfrog/packed");
}

// A file of `bytes` bytes last used `age` ago.
void fake_cache(const std::string& path, size_t bytes, std::chrono::hours age) {
  std::ofstream(path) << std::string(bytes, 'x');
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

TEST(trim_removes_long_unused_caches_then_the_least_recently_used_over_the_bound) {
  CacheDir dir;
  const std::string d = dir.path;
  using std::chrono::hours;
  fake_cache(d + "/a-1.lfpacked", 100, hours(24 * 40));  // unused for 40 days
  fake_cache(d + "/b-1.lfpacked", 600, hours(1));
  fake_cache(d + "/c-1.lfpacked", 600, hours(2));        // the least recently used of the rest
  fake_cache(d + "/k-1.lfpacked", 600, hours(24 * 90));  // just written: kept, whatever its age
  fake_cache(d + "/notes.txt", 5000, hours(24 * 90));    // not a cache file: not ours
  // 1,800 bytes of caches after the old one goes, against a bound of 1,500: c goes too.
  cpu::trim_packed_caches(d, d + "/k-1.lfpacked", 1500, cpu::kPackedCacheMaxUnused);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(d)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  CHECK((left == std::vector<std::string>{"b-1.lfpacked", "k-1.lfpacked", "notes.txt"}));
  // Within the bound and recently used: nothing more goes.
  cpu::trim_packed_caches(d, d + "/k-1.lfpacked", 1500, cpu::kPackedCacheMaxUnused);
  CHECK(fs::exists(d + "/b-1.lfpacked"));
}

TEST(a_load_marks_its_cache_used_and_a_new_cache_evicts_others_over_the_bound) {
  skip_unless_q8_0_packs();
  Model8 first;
  TmpFile second{write_model(Spec{}, "packed_cache_second")};  // another model file
  CacheDir dir;
  const std::string a = load_and_check_written(first.file.path).stats.file;
  // Long unused, as far as its time says; mapping it again marks it used now.
  fs::last_write_time(a, fs::file_time_type::clock::now() - std::chrono::hours(24 * 60));
  CHECK(load(first.file.path).stats.mapped == 1);
  CHECK(fs::file_time_type::clock::now() - fs::last_write_time(a) < std::chrono::hours(1));
  {
    // A bound under two models' files: the second model's cache evicts the first's.
    EnvVar bound("LEAPFROG_PACKED_CACHE_MAX_GB",
                 std::to_string(1.5 * fs::file_size(a) / (1 << 30)));
    const std::string b = load_and_check_written(second.path).stats.file;
    CHECK((dir.files() == std::vector<std::string>{b}));
  }
  // Within the default bound both stay.
  CHECK(load_and_check_written(first.file.path).stats.file == a);
  CHECK(dir.files().size() == 2);
}

TEST(cache_bound_from_the_environment) {
  const uint64_t gib = uint64_t(1) << 30;
  {
    EnvVar v("LEAPFROG_PACKED_CACHE_MAX_GB", std::nullopt);
    CHECK(cpu::packed_cache_max_bytes() == 20 * gib);
  }
  {
    EnvVar v("LEAPFROG_PACKED_CACHE_MAX_GB", "2.5");
    CHECK(cpu::packed_cache_max_bytes() == 5 * gib / 2);
  }
  for (const char* bad : {"", "0", "-3", "ten", "4GB"}) {
    EnvVar v("LEAPFROG_PACKED_CACHE_MAX_GB", bad);
    CHECK(cpu::packed_cache_max_bytes() == 20 * gib);
  }
}

TEST_MAIN()
