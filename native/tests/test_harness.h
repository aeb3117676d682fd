// A minimal test harness for the C++ tests. Each test binary prints one line per test
// ("ok - name", "not ok - name: why", "skip - name: why") and a final summary line
// "# passed N failed M skipped K" that test/run-all.mjs sums across suites.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lftest {

struct SkipTest {
  std::string why;
};
struct FailTest {
  std::string why;
};

struct Registry {
  std::vector<std::pair<std::string, std::function<void()>>> tests;
  static Registry& get() {
    static Registry r;
    return r;
  }
};

struct Register {
  Register(const char* name, std::function<void()> fn) {
    Registry::get().tests.emplace_back(name, std::move(fn));
  }
};

// Runs every registered test whose name contains `filter` (argv[1], optional).
inline int run_all(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  int passed = 0, failed = 0, skipped = 0;
  for (auto& [name, fn] : Registry::get().tests) {
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    try {
      fn();
      std::printf("ok - %s\n", name.c_str());
      ++passed;
    } catch (const SkipTest& s) {
      std::printf("skip - %s: %s\n", name.c_str(), s.why.c_str());
      ++skipped;
    } catch (const FailTest& f) {
      std::printf("not ok - %s: %s\n", name.c_str(), f.why.c_str());
      ++failed;
    } catch (const std::exception& e) {
      std::printf("not ok - %s: unexpected exception: %s\n", name.c_str(), e.what());
      ++failed;
    }
    std::fflush(stdout);
  }
  std::printf("# passed %d failed %d skipped %d\n", passed, failed, skipped);
  return failed == 0 ? 0 : 1;
}

// Directory of ../shared/data, or "" when absent (tests then skip with a visible reason).
inline std::string shared_data_dir() {
  if (const char* env = std::getenv("LEAPFROG_SHARED_DATA")) return env;
  for (const char* candidate : {"../shared/data", "../../shared/data", "../../../shared/data"}) {
    std::string probe = std::string(candidate) + "/vocab";
    if (FILE* f = std::fopen((probe + "/ggml-vocab-qwen2.gguf").c_str(), "rb")) {
      std::fclose(f);
      return candidate;
    }
  }
  return "";
}

}  // namespace lftest

#define LF_CONCAT2(a, b) a##b
#define LF_CONCAT(a, b) LF_CONCAT2(a, b)
#define TEST(name)                                             \
  static void name();                                          \
  static lftest::Register LF_CONCAT(reg_, name)(#name, &name); \
  static void name()

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::ostringstream lf_os;                                            \
      lf_os << __FILE__ << ":" << __LINE__ << ": CHECK(" #cond ") failed"; \
      throw lftest::FailTest{lf_os.str()};                                 \
    }                                                                      \
  } while (0)

#define CHECK_EQ(a, b)                                                                      \
  do {                                                                                      \
    auto lf_a = (a);                                                                        \
    auto lf_b = (b);                                                                        \
    if (!(lf_a == lf_b)) {                                                                  \
      std::ostringstream lf_os;                                                             \
      lf_os << __FILE__ << ":" << __LINE__ << ": CHECK_EQ(" #a ", " #b ") failed: " << lf_a \
            << " vs " << lf_b;                                                              \
      throw lftest::FailTest{lf_os.str()};                                                  \
    }                                                                                       \
  } while (0)

#define SKIP(why) \
  throw lftest::SkipTest { why }
#define TEST_MAIN() \
  int main(int argc, char** argv) { return lftest::run_all(argc, argv); }
