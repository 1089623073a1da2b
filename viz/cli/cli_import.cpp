// tinyviz-cli import-tinygrad: the reference's VIZ pickles into a trace (viz/import/import_tinygrad.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "viz/cli/cli_common.h"
#include "viz/import/import_tinygrad.h"

namespace tg::viz {

using json = nlohmann::ordered_json;

int cmd_import_tinygrad(int argc, char** argv, bool as_json) {
  if (argc < 2 || argc > 3)
    throw TraceError("import-tinygrad takes REWRITES.pkl [PROFILE.pkl] OUT.db (tinygrad's VIZ=-1 files: " +
                     std::string("rewrites.pkl.<user> and profile.pkl.<user> in its temp dir)"));
  ImportOptions o;
  o.rewrites_path = argv[0];
  if (argc == 3) o.profile_path = argv[1];
  o.out_path = argv[argc - 1];
  // progress on stderr when it is a terminal and the import takes a while
  auto t0 = std::chrono::steady_clock::now();
  bool tty = isatty(2);
  o.progress = [&](const char* what, uint64_t done, uint64_t total) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (tty && s > 1)
      std::fprintf(stderr, "\rimport-tinygrad: %s %llu/%llu   ", what, (unsigned long long)done,
                   (unsigned long long)total);
  };
  ImportSummary s = import_tinygrad(o);
  if (tty && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > 1)
    std::fprintf(stderr, "\r%60s\r", "");
  if (as_json) {
    json j = {{"trace", o.out_path},
              {"producer", s.producer},
              {"contexts", s.contexts},
              {"steps", s.steps},
              {"matches", s.matches},
              {"rule_errors", s.rule_errors},
              {"uops", s.uops},
              {"uop_records", s.uop_records},
              {"rules", s.rules},
              {"programs", s.programs},
              {"kernel_events", s.kernel_events},
              {"mem_events", s.mem_events},
              {"markers", s.markers},
              {"ranges", s.ranges},
              {"devices", s.devices},
              {"replayed_steps", s.replayed_steps},
              {"replay_uops", s.replay_uops}};
    std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("imported %s%s%s into %s\n", o.rewrites_path.c_str(), o.profile_path.empty() ? "" : " and ",
              o.profile_path.c_str(), o.out_path.c_str());
  std::printf(
      "contexts   %llu\nsteps      %llu\nmatches    %llu (+%llu rule errors)\nuops       %llu (%llu records, %llu "
      "built by replaying steps to their outputs)\n"
      "rules      %llu\nkernels    %llu\n",
      (unsigned long long)s.contexts, (unsigned long long)s.steps, (unsigned long long)s.matches,
      (unsigned long long)s.rule_errors, (unsigned long long)s.uops, (unsigned long long)s.uop_records,
      (unsigned long long)s.replay_uops, (unsigned long long)s.rules, (unsigned long long)s.programs);
  if (!o.profile_path.empty())
    std::printf(
        "runs       %llu\nbuffers    %llu allocs and frees\nmarkers    %llu\nranges     %llu\ndevices    %llu\n",
        (unsigned long long)s.kernel_events, (unsigned long long)s.mem_events, (unsigned long long)s.markers,
        (unsigned long long)s.ranges, (unsigned long long)s.devices);
  return 0;
}

}  // namespace tg::viz
