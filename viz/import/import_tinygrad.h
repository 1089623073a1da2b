// Import of tinygrad's own VIZ files (`VIZ=-1` writes rewrites.pkl.<user>, `PROFILE` profile.pkl.<user>) into a trace
// file, so tinyviz and tinyviz-cli open a recording of the reference like one of the port. The pickles are read by the
// restricted unpickler of viz/import/pickle.h (an allow-list of the reference's classes; nothing in them is executed).
//
// What maps to what (tinygrad/viz/serve.py is the meaning of every field):
//   RewriteTrace.keys[i] (TracingKey.display_name)      -> contexts (names as the reference shows them, colours kept)
//   RewriteTrace.rewrites[i][j] (TrackedGraphRewrite)    -> steps: name, loc (file:line), depth (parent: the enclosing
//                                                          step one level up), bottom_up/walk/enter_calls, input root;
//                                                          the output root is the step's replayed last frame
//   TrackedGraphRewrite.matches (before, after, loc, s)  -> matches (rule = the UPat's file:line) or, when `after` is a
//                                                          REWRITE_ERROR node, rule_errors with its message
//   RewriteTrace.uop_fields (op, dtype, src, arg, tag)   -> uops, equal content merged; args and dtypes in exactly the
//                                                          encoding the port's writer gives the same UOp
//   PROGRAM nodes of a codegen context                   -> programs (source, linearized UOps, launch dims, estimates)
//   profile: TINY ranges -> context and step times; USER ranges -> ranges; kernel ranges, graph entries and exec
//   points -> kernel_events; alloc/free -> mem_events; markers; ProfileDeviceEvent -> devices; graphs -> "<DEV> Graph"
// Not carried over: stack traces (TracingKey.tb), rule source text and attempt counts (the reference records neither),
// ProfileProgramEvent binaries, SQTT/PMC/PMA counters, metadata (TRACEMETA>=2).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "lib/error.h"

namespace tg::viz {

class ImportError : public tg::Error {
 public:
  using tg::Error::Error;
};

struct ImportSummary {
  uint64_t contexts = 0, steps = 0, matches = 0, rule_errors = 0, uops = 0, uop_records = 0, rules = 0, programs = 0;
  uint64_t kernel_events = 0, mem_events = 0, markers = 0, ranges = 0, devices = 0;
  uint64_t replayed_steps = 0;  // steps whose output root is their replayed last frame
  uint64_t replay_uops = 0;     // of uops: nodes built by those replays (the reference stores no output roots)
  std::string producer;         // kImportedProducer
};

// the meta row `producer` of an imported trace (the port's writer says "tinygrad-cpp"): `diff` compares a trace of
// each by their nodes only. The pickles name no version of tinygrad, so none is given
inline constexpr const char* kImportedProducer = "tinygrad (imported)";

struct ImportOptions {
  std::string rewrites_path, profile_path;  // profile_path empty: no profile
  std::string out_path;                     // replaced if it is a trace (or absent); anything else is refused
  // progress on long input: (what, done, total), called now and then
  std::function<void(const char*, uint64_t, uint64_t)> progress;
};

// Throws ImportError (or pickle::PickleError, both tg::Error) naming the file and what and where is wrong.
ImportSummary import_tinygrad(const ImportOptions& opt);

}  // namespace tg::viz
