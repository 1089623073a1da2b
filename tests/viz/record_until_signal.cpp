// A program that records rewrites (VIZ=-1 through tg::viz, like any user program) for the recorder's process tests:
// it prints "recording" once the trace holds committed work, then rewrites until it is signalled, or until
// `--iterations N` rewrites are done (then it exits normally), or for at most 60 s.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lib/helpers.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"

using namespace tg;

int main(int argc, char** argv) {
  long iterations = -1;
  if (argc == 3 && std::strcmp(argv[1], "--iterations") == 0) iterations = std::atol(argv[2]);
  UOp a = UOp::variable("a", 0, 100);
  int64_t t0 = now_ns();
  for (long i = 0; iterations < 0 || i < iterations; i++) {
    track::Group g("loop");
    graph_rewrite((a * (i % 7 + 1) + 3).floordiv(UOp::const_(PyConst((pyint)(i % 5 + 1)))) % UOp::const_(PyConst(9)),
                  sym(), {.name = "spin"});
    if (i == 500 && iterations < 0) {
      std::printf("recording\n");
      std::fflush(stdout);
    }
    if (now_ns() - t0 > 60'000'000'000) return 3;
  }
  return 0;
}
