// A forward pass recorded as a tape of launches, replayed as a CUDA graph when it repeats.
//
// Why: a 1.5B model's decode pass is ~670 small kernels. Launched one by one from the host,
// the GPU waits on the launches (3.2 ms per token where the kernels need well under 1 ms).
// Between begin() and end(), the backend's ops only append a closure and the words that
// identify it exactly (kernel, every pointer and size it uses) to the tape; end() looks the
// words up: a pass seen before with the same words replays its graph (one launch), a pass
// seen for the second time is captured into one, anything else runs the tape as plain
// launches. Equal words mean equal launches, so a replay does what the tape would do.
//
// What changes from pass to pass without changing the words travels through memory the
// kernels read when they run: token ids, positions and the pass's first cache position are
// copied into the tape's pinned staging area when recorded, and the tape's first nodes copy
// them to the device. Memory a tape points at (scratch, staging) is never freed while a pass
// may still use it: a buffer that grows goes to the graveyard, emptied at the next begin()
// once the previous pass has finished.
//
// A pass may read results back in the middle (a download: the MoE layer's router logits,
// model/moe_ffn.cpp). Those results come from launches that are still only on the tape, and
// what the pass does next may depend on them (which experts, how many rows each), so
// interrupt() issues the tape so far as plain launches and the rest of that pass launches
// op by op as it comes: never a graph, always the right results.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace leapfrog::cuda {

// Counts the frees of device memory a recorded pass may point at (buffers, caches,
// scratch). A captured graph is only valid while the memory it was captured with lives:
// memory freed and allocated again at the same address gives a pass the same words, but
// replaying the old graph then crashes inside the driver (seen on the H200: a decode graph
// of one session replayed in the next). So every recorder drops its graphs at the first
// pass after the count moves.
inline std::atomic<uint64_t>& memory_frees() {
  static std::atomic<uint64_t> frees{0};
  return frees;
}
inline void note_free() { memory_frees().fetch_add(1, std::memory_order_relaxed); }

// Freed device or pinned host memory whose last user may still be in flight.
class Graveyard {
 public:
  void bury_device(void* p) { device_.push_back(p); }
  void bury_host(void* p) { host_.push_back(p); }
  // Call only when no recorded work is in flight.
  void empty();
  ~Graveyard() { empty(); }

 private:
  std::vector<void*> device_, host_;
};

class PassRecorder {
 public:
  using Launch = std::function<void(cudaStream_t)>;
  struct Counters {
    uint64_t eager = 0, captured = 0, replayed = 0, capture_failed = 0;
    uint64_t interrupted = 0;  // passes that read results back before their end (interrupt)
    uint64_t forgotten = 0;    // times the graphs were dropped after memory was freed
  };

  // Records for `stream`. `graphs`: whether repeated passes become graphs
  // (LEAPFROG_CUDA_GRAPHS=0 turns it off).
  PassRecorder(cudaStream_t stream, bool graphs);
  ~PassRecorder();
  PassRecorder(const PassRecorder&) = delete;
  PassRecorder& operator=(const PassRecorder&) = delete;

  bool active() const { return active_; }
  // Starts a pass on `stream` (waits for the previous pass to finish first; a previous pass
  // never ended, because it threw, is dropped). `first_pos`
  // (the first cache position this pass writes) is readable by kernels at first_pos_device().
  // `graphable`: false for passes whose launches depend on values outside the words (a token
  // tree's mask sized by the context): those always run as plain launches.
  void begin(int first_pos, bool graphable);
  // Appends one launch (or runs it now outside a pass or after interrupt()). `words` (and `more`)
  // identify it completely: every pointer and value the launch uses, except what it reads from
  // memory.
  void add(std::initializer_list<uint64_t> words, Launch launch,
           std::span<const uint64_t> more = {});
  // The words of the pass's last recorded launch (empty outside a pass, before the first
  // and after interrupt(): a launch already issued is not fused with): the
  // backend fuses a launch into the one before it where the two read as one kernel.
  std::span<const uint64_t> last() const;
  // Replaces the last launch (after last() showed it is the one to fuse with).
  void replace_last(std::initializer_list<uint64_t> words, Launch launch,
                    std::span<const uint64_t> more = {});
  // Copies `bytes` of host data to device memory `dst` as part of the pass (the bytes are
  // taken now, into pinned staging; outside a pass: an ordinary asynchronous copy).
  void upload(void* dst, const void* src, size_t bytes);
  // Issues what the pass recorded so far as plain launches, and every later launch of the
  // pass at once (add() no longer records): for a host read in the middle of a pass. Does
  // nothing outside a pass or once interrupted.
  void interrupt();
  // Issues the pass: a graph launch, a capture, or the tape as plain launches.
  void end();

  int first_pos() const { return first_pos_; }
  const int* first_pos_device() const { return params_dev_; }
  Graveyard& graveyard() { return graveyard_; }
  const Counters& counters() const { return counters_; }

 private:
  struct Graph {
    std::vector<uint64_t> words;
    cudaGraphExec_t exec = nullptr;
    int seen = 0;
    bool failed = false;  // capture did not work: plain launches from now on
    uint64_t last_use = 0;
  };
  void run_tape(cudaStream_t s);
  void forget_graphs();
  bool capture(Graph& g);
  void evict_one();
  uint8_t* stage(const void* src, size_t bytes);

  bool graphs_;
  bool active_ = false;
  bool graphable_ = false;
  bool interrupted_ = false;  // this pass launches op by op (interrupt)
  cudaStream_t stream_ = nullptr;
  int first_pos_ = 0;
  std::vector<uint64_t> words_;
  size_t last_at_ = 0;  // where the last launch's words start (after its length word)
  std::vector<Launch> tape_;
  std::unordered_map<uint64_t, std::unique_ptr<Graph>> graphs_by_hash_;
  uint64_t clock_ = 0;
  cudaEvent_t done_ = nullptr;  // recorded after each pass
  int* params_dev_ = nullptr;   // [first_pos]
  uint8_t* staging_ = nullptr;  // pinned
  size_t staging_cap_ = 0, staging_used_ = 0;
  Graveyard graveyard_;
  uint64_t frees_seen_ = 0;  // memory_frees() when the graphs were last known valid
  Counters counters_;
};

inline uint64_t word(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace leapfrog::cuda
