// Linked into every program that links tg::viz: VIZ=-1 / TRACK_MATCH_STATS=2 record a trace without any code, and
// VIZ=1 opens it in tinyviz at exit when a display is available.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "lib/recorder.h"
#include "viz/writer/trace_writer.h"

namespace {

void launch_tinyviz(const std::string& path) {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  bool has_display = (display && *display) || (wayland && *wayland);
  if (!has_display) {
    std::printf("no display: open the trace later with  tinyviz %s  (or tinyviz-cli info %s)\n", path.c_str(),
                path.c_str());
    return;
  }
  std::printf("opening it in tinyviz (close the window to exit)\n");
  std::fflush(nullptr);
  // like the reference's VIZ=1, the program becomes the viewer
#ifdef TG_TINYVIZ_PATH
  if (access(TG_TINYVIZ_PATH, X_OK) == 0) execl(TG_TINYVIZ_PATH, "tinyviz", path.c_str(), (char*)nullptr);
#endif
  execlp("tinyviz", "tinyviz", path.c_str(), (char*)nullptr);
  std::printf("could not start tinyviz (build it with `make`, or put it on PATH); the trace is %s\n", path.c_str());
}

const bool registered = [] {
  tg::viz::install_trace_writer_factory();
  tg::set_viz_launcher(launch_tinyviz);
  return true;
}();

}  // namespace
