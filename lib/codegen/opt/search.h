// Port of tinygrad/codegen/opt/search.py: BEAM search over kernel optimizations. Every candidate (the beam's
// kernels with one more Opt from `actions`) is generated, compiled and timed on the kernel's device with scratch
// buffers; the `amt` fastest stay in the beam until no candidate is faster by BEAM_MIN_PROGRESS us. The chosen opts
// are cached on disk by (AST, amt, allow_test_size, device, renderer suffix), so a second run reuses them.
//
//   BEAM=2 ./build/examples/beautiful_mnist        (JITBEAM=2: only the kernels a TinyJit captures)
//
// Environment (as the reference): BEAM_UPCAST_MAX (256), BEAM_LOCAL_MAX (1024), BEAM_UOPS_MAX (3000),
// BEAM_MIN_PROGRESS (0.01 us), BEAM_STRICT_MODE, BEAM_DEBUG, IGNORE_BEAM_CACHE, CACHELEVEL (0 disables the disk
// cache); DEBUG>=2 prints the search's progress. The cache lives in $TG_CACHE_DIR, else $XDG_CACHE_HOME/tinygrad-cpp,
// else ~/.cache/tinygrad-cpp (lib/diskcache.h; one small file per kernel under beam_search/).
// Differences from the reference: candidates are compiled and timed in this process one after another (no worker
// pool), and their codegen is not recorded into the trace (the reference records each as a "test" context when VIZ
// is on); the kernel's own context records the codegen of the opts the search chose.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/codegen/opt/postrange.h"

namespace tg {

class Buffer;

// the action list of search.py (TC actions included: the ported Scheduler rejects them)
const std::vector<Opt>& beam_actions();
// every Scheduler one action away from s (key: action index + 1; 0: s itself when include_0)
std::map<int64_t, Scheduler> get_kernel_actions(const Scheduler& s, bool include_0 = true,
                                                std::optional<pyint> max_up = std::nullopt);
// the scratch buffers and variable values (the middle of each Variable's range) a kernel is timed with
std::pair<std::vector<std::shared_ptr<Buffer>>, std::map<std::string, pyint>> args_from_ast(const UOp& ast,
                                                                                            const std::string& device);
// the beam search; returns the Scheduler with the chosen opts applied
Scheduler beam_search(const Scheduler& s, const std::vector<std::shared_ptr<Buffer>>& rawbufs,
                      const std::map<std::string, pyint>& var_vals, int64_t amt, bool allow_test_size = true,
                      std::optional<bool> disable_cache = std::nullopt);

}  // namespace tg
