// tinyviz's headless modes: --screenshot renders the window into a PNG, --bench-step times stepping through a step.
// The command line itself is gui/options.h.
#pragma once
#include "gui/options.h"

namespace tv {

// renders the window with the trace at o.size into o.screenshot once everything is drawn; returns an exit status
int take_screenshot(MainWindow& w, const Options& o, int timeout_ms = 60000);
// --bench-step: opens the trace, steps through every frame of the step with the Right key as a user would, and
// prints the time from key to drawn frame (min / median / max), then the same backwards
int bench_stepping(MainWindow& w, const Options& o);

}  // namespace tv
