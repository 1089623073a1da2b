// tinyviz's command line (see kUsage), and applying it to an opened window:
//   tinyviz [TRACE] [--select CONTEXT[/STEP[/MATCH]]] [--tab graph|stats|timeline|code|compare] [--focus N] ...
//   tinyviz --screenshot OUT.png [--select ...] [--tab ...] [--size WxH] TRACE
// MATCH counts from 1 (the frame after that match); 0 is the step's input graph. A hand-written parser rather than
// QCommandLineParser: --interval takes one or two values (START [END]), which QCommandLineParser cannot express.
#pragma once
#include <QSize>
#include <QString>
#include <QStringList>
#include <cstdint>

#include "gui/trace_model.h"

namespace tg::viz {
class Trace;
}
namespace tv {

class MainWindow;

struct Options {
  QString trace, screenshot, tab = "graph", error;  // error: what is wrong with the command line, if anything
  QString compare;  // --compare B: the Compare tab with B beside the trace, on the first divergence
  QSize size{1600, 1000};
  bool has_select = false;
  long long context = 0, step = 0, match = 0;  // --select C/S/M
  bool help = false;
  long long bench_step = 0;  // --bench-step S: time stepping through every match of step S, then exit
  QString run;     // --run N | NAME[@K]: the timeline on a kernel run (the Nth by start, or NAME's Kth), its panel
  bool follow = false;  // --follow: read the trace again as it grows until the window closes
  QString memory;  // --memory DEVICE: that device's memory lane with its buffers stacked
  QStringList interval;  // --interval START [END]: marker names; the timeline opens on that interval, its totals shown
  int focus = 0;  // --focus N: only the nodes within N edges of the match
};
Options parse_options(const QStringList& args);  // args without the program name; error set when invalid
extern const char* const kUsage;

// what --select names, for MainWindow::open_trace to open on (none with --focus: that option is applied first)
Selection first_selection(const Options& o);
// --select, --tab and the timeline options on an opened window; false: a bad --select
bool apply_options(MainWindow& w, const Options& o);
// --run's argument: the index into Trace::kernel_events() of the Nth run or of NAME[@K]; -1 with *err saying why
int64_t find_run(const tg::viz::Trace& t, const QString& spec, QString* err);

}  // namespace tv
