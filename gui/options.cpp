#include "gui/options.h"

#include <QComboBox>
#include <QLineEdit>
#include <QTableView>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/compare_view.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/message_bar.h"
#include "gui/stats_view.h"
#include "gui/timeline_view.h"
#include "viz/reader/reader.h"

namespace tv {

const char* const kUsage =
    "usage: tinyviz [TRACE] [--select CONTEXT[/STEP[/MATCH]]] [--tab graph|stats|timeline|code|compare] [--focus "
    "2|4|8]\n"
    "               [--interval START [END]] [--run N|NAME[@K]] [--memory DEVICE] [--follow]\n"
    "               [--compare OTHER]\n"
    "       tinyviz --screenshot OUT.png [--select ...] [--tab ...] [--size WxH] TRACE\n"
    "Opens a tinygrad-cpp trace (record one with VIZ=-1 VIZ_PATH=FILE ./program).\n"
    "  --select C/S/M   context C, step S, match M (1-based; 0 = the step's input graph)\n"
    "  --tab T          the tab to show\n"
    "  --focus N        draw only the nodes within N edges of what the match touched\n"
    "  --interval A [B] open the timeline between the markers A and B (default: the run's end) with its totals\n"
    "  --run R          the timeline on a kernel run and its details: the Nth run by start time, or the Kth run of\n"
    "                   the kernel NAME (NAME@K; K defaults to 1)\n"
    "  --memory DEV     the timeline with DEV's memory lane drawn as its buffers stacked over time\n"
    "  --follow         keep reading the trace as its program records it (a trace still being recorded is\n"
    "                   followed until the program finishes it; this keeps following after that)\n"
    "  --compare OTHER  the Compare tab: OTHER's rewrites aligned with TRACE's, on their first divergence (with\n"
    "                   --select: on that step of TRACE and its twin)\n"
    "  --screenshot F   render headless (offscreen) to the PNG F once the view is drawn, then exit\n"
    "  --size WxH       window size for --screenshot (default 1600x1000)\n"
    "  --bench-step S   time stepping through every match of step S (headless), print the numbers, exit\n";

Options parse_options(const QStringList& args) {
  Options o;
  for (int i = 0; i < args.size(); i++) {
    const QString& a = args[i];
    auto value = [&](const char* what) -> QString {
      if (i + 1 >= args.size()) {
        o.error = QString("%1 needs a value").arg(what);
        return {};
      }
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--screenshot") {
      o.screenshot = value("--screenshot");
    } else if (a == "--tab") {
      o.tab = value("--tab").toLower();
      if (!QStringList{"graph", "stats", "timeline", "code", "compare"}.contains(o.tab))
        o.error = QString("--tab %1: expected graph, stats, timeline, code or compare").arg(o.tab);
    } else if (a == "--size") {
      QStringList wh = value("--size").split('x');
      bool ok1 = false, ok2 = false;
      if (wh.size() == 2) o.size = QSize(wh[0].toInt(&ok1), wh[1].toInt(&ok2));
      if (!ok1 || !ok2 || o.size.width() < 200 || o.size.height() < 150)
        o.error = "--size: expected WxH, e.g. 1600x1000";
    } else if (a == "--focus") {
      o.focus = value("--focus").toInt();
      if (o.focus != 2 && o.focus != 4 && o.focus != 8) o.error = "--focus: expected 2, 4 or 8";
    } else if (a == "--bench-step") {
      bool ok = false;
      o.bench_step = value("--bench-step").toLongLong(&ok);
      if (!ok || o.bench_step <= 0) o.error = "--bench-step: expected a step id";
    } else if (a == "--compare") {
      o.compare = value("--compare");
    } else if (a == "--run") {
      o.run = value("--run");
    } else if (a == "--follow") {
      o.follow = true;
    } else if (a == "--memory") {
      o.memory = value("--memory");
    } else if (a == "--interval") {
      o.interval << value("--interval");
      if (i + 1 < args.size() && !args[i + 1].startsWith("-") && i + 2 < args.size()) o.interval << args[++i];
    } else if (a == "--select") {
      QStringList parts = value("--select").split('/');
      bool ok = parts.size() <= 3;
      long long v[3] = {0, 0, 0};
      for (int k = 0; k < parts.size() && k < 3; k++) {
        bool good = false;
        v[k] = parts[k].toLongLong(&good);
        ok &= good && v[k] >= 0;
      }
      if (!ok) o.error = "--select: expected CONTEXT[/STEP[/MATCH]] ids, e.g. 1/5/3";
      o.has_select = true;
      o.context = v[0], o.step = v[1], o.match = v[2];
    } else if (a.startsWith("-") && a != "-") {
      o.error = QString("unknown option %1").arg(a);
    } else if (o.trace.isEmpty()) {
      o.trace = a;
    } else {
      o.error = QString("one trace at a time (got %1 and %2)").arg(o.trace, a);
    }
    if (!o.error.isEmpty()) return o;
  }
  if ((!o.screenshot.isEmpty() || o.bench_step) && o.trace.isEmpty()) o.error = "--screenshot needs a TRACE";
  return o;
}

Selection first_selection(const Options& o) {
  if (!o.has_select || o.focus) return {};
  return {o.context, o.step, (size_t)o.match};
}

bool apply_options(MainWindow& w, const Options& o) {
  bool ok = true;
  if (o.focus) w.focus_box()->setCurrentIndex(w.focus_box()->findData(o.focus));
  if (o.has_select && w.session()) {
    Selection s{o.context, o.step, (size_t)o.match};
    try {
      if (s.step) {
        int64_t ctx = w.session()->ui().step(s.step).context;
        if (s.context && ctx != s.context)
          std::fprintf(stderr, "tinyviz: step %lld is in context %lld, not %lld\n", (long long)s.step, (long long)ctx,
                       (long long)s.context);
        size_t frames = w.model()->frames_of(s.step);
        if (s.frame >= frames) {
          std::fprintf(stderr, "tinyviz: step %lld has %zu matches, not %zu\n", (long long)s.step, frames - 1, s.frame);
          ok = false;
        }
      } else {
        w.session()->ui().context(s.context);
      }
      w.select(s);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tinyviz: --select: %s\n", e.what());
      w.message_bar()->show_error(QString("--select: %1").arg(e.what()));
      ok = false;
    }
  }
  static const QStringList tabs{"graph", "stats", "timeline", "code", "compare"};
  w.show_tab((MainWindow::Tab)std::max<qsizetype>(0, tabs.indexOf(o.tab)));
  if (!o.compare.isEmpty()) {
    if (!w.compare_with(o.compare)) {
      std::fprintf(stderr, "tinyviz: --compare: cannot compare with %s\n", qPrintable(o.compare));
      ok = false;
    } else if (o.has_select && o.step && !w.compare()->select_a_step(o.step, (size_t)o.match)) {
      std::fprintf(stderr, "tinyviz: --compare: step %lld has no twin in %s\n", o.step, qPrintable(o.compare));
      ok = false;
    } else if (o.tab != "graph" && o.tab != "compare") {
      w.show_tab((MainWindow::Tab)tabs.indexOf(o.tab));  // e.g. the Stats tab with its per-rule deltas
    }
  }
  if (o.tab == "stats" && w.selection().step && w.selection().frame) {
    if (const auto* m = w.model()->match(w.selection().step, w.selection().frame)) w.stats()->select_rule(m->rule);
  }
  // the timeline shows the selected step when one was asked for, else the whole run (as the window opens)
  if (o.tab == "timeline" && o.has_select && w.selection().step) w.timeline()->reveal(w.selection().step);
  if (!o.interval.isEmpty()) {
    w.show_tab(MainWindow::TimelineTab);
    QString err = w.timeline()->show_markers(o.interval[0], o.interval.size() > 1 ? o.interval[1] : QString());
    if (!err.isEmpty()) {
      std::fprintf(stderr, "tinyviz: --interval: %s\n", qPrintable(err));
      w.message_bar()->show_error("--interval: " + err);
      ok = false;
    }
  }
  if (!o.memory.isEmpty()) {
    w.show_tab(MainWindow::TimelineTab);
    const auto& lanes = w.timeline()->memory_lanes();
    size_t i = 0;
    while (i < lanes.size() && QString::fromStdString(lanes[i].device) != o.memory) i++;
    if (i < lanes.size()) {
      w.timeline()->set_memory_expanded(i, true);
    } else {
      QString err = QString("no memory lane for device %1 (the trace has %2)").arg(o.memory).arg(lanes.size());
      std::fprintf(stderr, "tinyviz: --memory: %s\n", qPrintable(err));
      w.message_bar()->show_error("--memory: " + err);
      ok = false;
    }
  }
  if (!o.run.isEmpty() && w.session()) {
    QString err;
    int64_t ev = find_run(w.session()->ui(), o.run, &err);
    if (ev >= 0) {
      w.show_tab(MainWindow::TimelineTab);
      w.timeline()->reveal_kernel((size_t)ev);
      w.timeline()->select_run(ev);
    } else {
      std::fprintf(stderr, "tinyviz: --run: %s\n", qPrintable(err));
      w.message_bar()->show_error("--run: " + err);
      ok = false;
    }
  }
  return ok;
}

int64_t find_run(const tg::viz::Trace& t, const QString& spec, QString* err) {
  const auto& evs = t.kernel_events();
  bool num = false;
  long long n = spec.toLongLong(&num);
  if (num) {
    if (n >= 1 && (size_t)n <= evs.size()) return n - 1;
    *err = QString("run %1: the trace has %2 kernel runs").arg(n).arg(evs.size());
    return -1;
  }
  QString name = spec;
  long long k = 1;
  if (int at = spec.lastIndexOf('@'); at > 0) {
    bool ok = false;
    k = spec.mid(at + 1).toLongLong(&ok);
    if (!ok || k < 1) return *err = QString("%1: expected NAME@K with K >= 1").arg(spec), -1;
    name = spec.left(at);
  }
  long long seen = 0;
  for (size_t i = 0; i < evs.size(); i++)
    if (QString::fromStdString(evs[i].name) == name && ++seen == k) return (int64_t)i;
  *err = seen ? QString("kernel %1 ran %2 times, not %3").arg(name).arg(seen).arg(k)
              : QString("no kernel run named %1").arg(name);
  return -1;
}

}  // namespace tv
