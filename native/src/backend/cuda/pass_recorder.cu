#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/pass_recorder.h"

namespace leapfrog::cuda {

namespace {

// Graphs kept per stream: a target's decode pass, its verification passes of each size
// (1..33 tokens, with and without all rows' logits) and a draft model's passes fit.
constexpr size_t kMaxGraphs = 96;

uint64_t hash_words(const std::vector<uint64_t>& w) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the words' bytes
  for (uint64_t x : w) {
    for (int i = 0; i < 8; ++i) {
      h ^= (x >> (8 * i)) & 0xFF;
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace

void Graveyard::empty() {
  if (!device_.empty() || !host_.empty()) note_free();
  for (void* p : device_) (void)cudaFree(p);
  for (void* p : host_) (void)cudaFreeHost(p);
  device_.clear();
  host_.clear();
}

PassRecorder::PassRecorder(cudaStream_t stream, bool graphs) : graphs_(graphs), stream_(stream) {
  LF_CUDA(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  LF_CUDA(cudaMalloc(&params_dev_, 64));
}

void PassRecorder::forget_graphs() {
  for (auto& [h, g] : graphs_by_hash_) {
    if (g->exec) (void)cudaGraphExecDestroy(g->exec);
  }
  graphs_by_hash_.clear();
}

PassRecorder::~PassRecorder() {
  if (done_) (void)cudaEventSynchronize(done_);
  forget_graphs();
  if (done_) (void)cudaEventDestroy(done_);
  (void)cudaFree(params_dev_);
  if (staging_) (void)cudaFreeHost(staging_);
}

void PassRecorder::begin(int first_pos, bool graphable) {
  if (active_) {
    // The previous pass threw before its end (an op refused its arguments): what it left on
    // the tape is dropped, never issued; what it had issued already is waited for below.
    tape_.clear();
    active_ = false;
    LF_CUDA(cudaEventRecord(done_, stream_));
  }
  // The previous pass read its staging when it ran: it must be done before it is rewritten.
  LF_CUDA(cudaEventSynchronize(done_));
  graveyard_.empty();
  const uint64_t frees = memory_frees().load(std::memory_order_relaxed);
  if (frees != frees_seen_) {
    if (!graphs_by_hash_.empty()) ++counters_.forgotten;
    forget_graphs();
    frees_seen_ = frees;
  }
  active_ = true;
  interrupted_ = false;
  graphable_ = graphs_ && graphable;
  first_pos_ = first_pos;
  words_.clear();
  tape_.clear();
  staging_used_ = 0;
  upload(params_dev_, &first_pos, sizeof first_pos);
}

uint8_t* PassRecorder::stage(const void* src, size_t bytes) {
  const size_t at = (staging_used_ + 63) / 64 * 64;
  if (at + bytes > staging_cap_) {
    // Earlier copies of this pass still point at the old area: it is freed at the next begin.
    if (staging_) graveyard_.bury_host(staging_);
    staging_ = nullptr;
    staging_cap_ = std::max<size_t>(2 * (at + bytes), 1 << 20);
    LF_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&staging_), staging_cap_, cudaHostAllocDefault));
    staging_used_ = 0;
    return stage(src, bytes);
  }
  std::memcpy(staging_ + at, src, bytes);
  staging_used_ = at + bytes;
  return staging_ + at;
}

void PassRecorder::upload(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (!active_) {
    LF_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    return;
  }
  const uint8_t* from = stage(src, bytes);
  add({0x55504C44ull /* "UPLD" */, word(dst), word(from), bytes}, [=](cudaStream_t s) {
    LF_CUDA(cudaMemcpyAsync(dst, from, bytes, cudaMemcpyHostToDevice, s));
  });
}

void PassRecorder::add(std::initializer_list<uint64_t> words, Launch launch,
                       std::span<const uint64_t> more) {
  if (!active_ || interrupted_) {
    launch(stream_);
    return;
  }
  words_.push_back(words.size() + more.size());
  last_at_ = words_.size();
  words_.insert(words_.end(), words.begin(), words.end());
  words_.insert(words_.end(), more.begin(), more.end());
  tape_.push_back(std::move(launch));
}

std::span<const uint64_t> PassRecorder::last() const {
  if (!active_ || interrupted_ || tape_.empty()) return {};
  return std::span<const uint64_t>(words_).subspan(last_at_);
}

void PassRecorder::replace_last(std::initializer_list<uint64_t> words, Launch launch,
                                std::span<const uint64_t> more) {
  if (!active_ || interrupted_ || tape_.empty()) {
    throw std::logic_error("cuda: no launch to replace");
  }
  words_.resize(last_at_ - 1);
  tape_.pop_back();
  add(words, std::move(launch), more);
}

void PassRecorder::run_tape(cudaStream_t s) {
  for (const Launch& f : tape_) f(s);
}

bool PassRecorder::capture(Graph& g) {
  cudaGraph_t graph = nullptr;
  LF_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  bool ok = true;
  try {
    run_tape(stream_);
  } catch (...) {
    ok = false;
  }
  const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
  ok = ok && ended == cudaSuccess && graph;
  if (ok && cudaGraphInstantiate(&g.exec, graph, 0) != cudaSuccess) {
    ok = false;
    g.exec = nullptr;
  }
  if (graph) (void)cudaGraphDestroy(graph);
  if (!ok) (void)cudaGetLastError();  // the failed capture's error is not the next op's
  return ok;
}

void PassRecorder::evict_one() {
  auto oldest = graphs_by_hash_.end();
  for (auto it = graphs_by_hash_.begin(); it != graphs_by_hash_.end(); ++it) {
    if (oldest == graphs_by_hash_.end() || it->second->last_use < oldest->second->last_use) {
      oldest = it;
    }
  }
  if (oldest == graphs_by_hash_.end()) return;
  if (oldest->second->exec) (void)cudaGraphExecDestroy(oldest->second->exec);
  graphs_by_hash_.erase(oldest);
}

void PassRecorder::interrupt() {
  if (!active_ || interrupted_) return;
  run_tape(stream_);
  tape_.clear();
  words_.clear();
  interrupted_ = true;
  graphable_ = false;
  ++counters_.interrupted;
}

void PassRecorder::end() {
  if (!active_) return;
  active_ = false;
  if (interrupted_) {  // its launches are all issued already
    interrupted_ = false;
    ++counters_.eager;
    LF_CUDA(cudaEventRecord(done_, stream_));
    return;
  }
  Graph* g = nullptr;
  if (graphable_) {
    const uint64_t h = hash_words(words_);
    auto it = graphs_by_hash_.find(h);
    if (it == graphs_by_hash_.end()) {
      if (graphs_by_hash_.size() >= kMaxGraphs) evict_one();
      it = graphs_by_hash_.emplace(h, std::make_unique<Graph>()).first;
      it->second->words = words_;
    }
    // A hash collision between different passes (never seen) runs plain launches.
    if (it->second->words == words_) g = it->second.get();
  }
  if (g) {
    g->last_use = ++clock_;
    ++g->seen;
    if (!g->exec && !g->failed && g->seen >= 2) {
      if (capture(*g)) {
        ++counters_.captured;
      } else {
        g->failed = true;
        ++counters_.capture_failed;
      }
    } else if (g->exec) {
      ++counters_.replayed;
    }
  }
  if (g && g->exec) {
    LF_CUDA(cudaGraphLaunch(g->exec, stream_));
  } else {
    ++counters_.eager;
    run_tape(stream_);
  }
  LF_CUDA(cudaEventRecord(done_, stream_));
  tape_.clear();
}

}  // namespace leapfrog::cuda
