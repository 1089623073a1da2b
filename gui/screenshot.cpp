#include "gui/screenshot.h"

#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QPixmap>
#include <QTableView>
#include <QThread>
#include <QTimer>
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

int take_screenshot(MainWindow& w, const Options& o, int timeout_ms) {
  w.resize(o.size);
  w.show();
  bool opened = w.open_trace(o.trace, first_selection(o)), selected = opened && apply_options(w, o);
  QElapsedTimer t;
  t.start();
  // wait for the frame (layout runs on a worker), statistics and code to arrive, then for the paint
  int quiet = 0;
  while (t.elapsed() < timeout_ms) {
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    quiet = w.idle() ? quiet + 1 : 0;
    if (quiet >= 5) break;
    if (!w.idle()) QThread::msleep(5);
  }
  bool timed_out = quiet < 5;
  QApplication::processEvents();
  QPixmap pm = w.grab();
  if (pm.isNull() || !pm.save(o.screenshot, "PNG")) {
    std::fprintf(stderr, "tinyviz: cannot write %s\n", qPrintable(o.screenshot));
    return 1;
  }
  std::printf("tinyviz: wrote %s (%dx%d)%s\n", qPrintable(o.screenshot), pm.width(), pm.height(),
              timed_out ? " before the view finished loading" : "");
  return selected ? 0 : 2;
}

}  // namespace tv

namespace tv {

int bench_stepping(MainWindow& w, const Options& o) {
  w.resize(o.size);
  w.show();
  // the longest the event loop went without turning (what a user feels as a freeze), per activity
  QElapsedTimer tick_clock;
  tick_clock.start();
  struct Activity {
    std::string what;
    double stall_ms = 0;
    long rss_kb = 0, hwm_kb = 0;  // resident memory when it ended, and the peak so far (Linux; 0 elsewhere)
  };
  std::vector<Activity> stalls;  // activity -> longest stall, in the order they ran
  auto memory = [](Activity& a) {
    QFile f("/proc/self/status");
    if (!f.open(QIODevice::ReadOnly)) return;
    for (const QByteArray& line : f.readAll().split('\n')) {
      if (line.startsWith("VmRSS:")) a.rss_kb = line.mid(6).trimmed().split(' ').front().toLong();
      if (line.startsWith("VmHWM:")) a.hwm_kb = line.mid(6).trimmed().split(' ').front().toLong();
    }
  };
  qint64 last_tick = 0;
  auto note = [&] {
    qint64 now = tick_clock.elapsed();
    double gap = (double)(now - last_tick);
    if (!stalls.empty()) stalls.back().stall_ms = std::max(stalls.back().stall_ms, gap);
    // in the order of the other timings, so that what filled a long stall can be read off before it
    if (gap > 60 && std::getenv("TINYVIZ_TIMING")) std::fprintf(stderr, "tinyviz: event loop stalled %.0f ms\n", gap);
    last_tick = now;
  };
  auto doing = [&](std::string what) {
    note();
    if (!stalls.empty()) memory(stalls.back());
    stalls.push_back({std::move(what)});
  };
  QTimer ticker;
  QObject::connect(&ticker, &QTimer::timeout, note);
  ticker.start(5);
  doing("show the empty window");
  QApplication::processEvents();
  doing("open");
  last_tick = tick_clock.elapsed();
  if (!w.open_trace(o.trace)) return 2;
  note();  // opening runs inside one turn of the event loop
  auto wait = [&] {
    QElapsedTimer t;
    t.start();
    while (!w.idle() && t.elapsed() < 60000) QApplication::processEvents(QEventLoop::AllEvents, 5);
    QApplication::processEvents();
  };
  auto settle = [&](int ms) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms || !w.idle()) {
      QApplication::processEvents(QEventLoop::AllEvents, 5);
      if (t.elapsed() > 60000) break;
    }
  };
  wait();
  doing("select the step");
  w.select({0, o.bench_step, 0});
  wait();
  // a jump to the step's last frame (its replay has built frame 0 only), then back to the start
  if (size_t last = w.model()->frames_of(o.bench_step); last > 1) {
    doing("jump to the last frame");
    QElapsedTimer t;
    t.start();
    w.select({0, o.bench_step, last - 1});
    wait();
    double ms = t.nsecsElapsed() / 1e6;
    std::printf("step %lld: jump from frame 0 to its last frame (%zu) drawn in %.1f ms (%zu nodes)\n", o.bench_step,
                last - 1, ms, w.graph()->frame() ? w.graph()->frame()->graph->n_uops : (size_t)0);
    w.select({0, o.bench_step, 0});
    wait();
  }
  // a step of a real training trace can hold ~20,000 matches: time the first 300 frames forward and back
  size_t frames = std::min<size_t>(w.model()->frames_of(o.bench_step), 301);
  auto run = [&](int key, const char* what) {
    std::vector<double> ms;
    size_t nodes = 0;
    for (size_t i = 1; i < frames; i++) {
      QElapsedTimer t;
      t.start();
      w.navigate(key);
      wait();
      ms.push_back(t.nsecsElapsed() / 1e6);
      if (w.graph()->frame()) nodes = std::max(nodes, w.graph()->frame()->graph->n_uops);
    }
    if (ms.empty()) return;
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    std::printf(
        "step %lld, %zu frames %s (up to %zu nodes): key to drawn frame min %.1f ms, median %.1f ms, "
        "max %.1f ms\n",
        o.bench_step, ms.size(), what, nodes, s.front(), s[s.size() / 2], s.back());
  };
  doing("stepping forward");
  run(Qt::Key_Right, "forward");
  doing("stepping back");
  run(Qt::Key_Left, "back (cached)");
  // the biggest context (most steps), then up/down through its first steps
  if (const auto& cs = w.session()->ui().contexts(); !cs.empty()) {
    auto big = std::max_element(cs.begin(), cs.end(), [](auto& a, auto& b) { return a.steps.size() < b.steps.size(); });
    doing("select the biggest context");
    w.select({big->id, 0, 0});
    wait();
    doing("up/down through steps");
    for (int i = 0; i < 20; i++) {
      w.navigate(Qt::Key_Down);
      wait();
    }
  }
  // the search box on the whole tree: a step name, an op, a rule's file:line, a kernel name, then cleared
  std::vector<std::string> searches{"graph", "ADD", "symbolic.cpp:4"};
  if (const auto& rs = w.session()->rules(); !rs.empty()) {
    const auto& r = rs[rs.size() / 2];
    searches.push_back(QFileInfo(QString::fromStdString(r.file)).fileName().toStdString() + ":" +
                       std::to_string(r.line));
  }
  if (const auto& ps = w.session()->ui().programs(); !ps.empty()) searches.push_back(ps.front().name);
  searches.push_back("");
  for (const std::string& text : searches) {
    doing("search \"" + text + "\"");
    w.search_box()->setText(QString::fromStdString(text));
    settle(600);
  }
  for (int tab = 0; tab < 4; tab++) {  // every tab once, statistics of the whole trace included
    static const char* names[] = {"graph tab", "stats tab", "timeline tab", "code tab"};
    doing(names[tab]);
    w.show_tab((MainWindow::Tab)tab);
    settle(200);
  }
  // the statistics: every scope, and the matches of the busiest rule
  w.show_tab(MainWindow::StatsTab);
  for (auto scope : {StatsView::ThisContext, StatsView::ThisStep, StatsView::WholeTrace}) {
    doing("stats scope");
    w.stats()->set_scope(scope);
    settle(100);
  }
  if (w.stats()->model()->rowCount()) {
    doing("stats: every match of a rule");
    w.stats()->table()->sortByColumn(StatsModel::Matches, Qt::DescendingOrder);
    w.stats()->table()->setCurrentIndex(w.stats()->proxy()->index(0, 0));
    settle(300);
  }
  doing("timeline");
  w.show_tab(MainWindow::TimelineTab);
  w.timeline()->show_all();
  std::vector<double> paints;
  for (int i = 0; i < 10; i++) {
    w.timeline()->repaint();
    paints.push_back(w.timeline()->last_paint_ms());
  }
  settle(50);
  note();
  memory(stalls.back());
  std::sort(paints.begin(), paints.end());
  std::printf("timeline: %zu spans, whole trace on screen: paint %.1f ms (median of 10)\n", w.timeline()->span_count(),
              paints[5]);
  auto worst = std::max_element(stalls.begin(), stalls.end(), [](auto& a, auto& b) { return a.stall_ms < b.stall_ms; });
  if (std::getenv("TINYVIZ_TIMING"))
    for (auto& a : stalls)
      std::fprintf(stderr, "tinyviz: stall %-40s %4.0f ms   resident %6.1f MB, peak %6.1f MB\n", a.what.c_str(),
                   a.stall_ms, a.rss_kb / 1024.0, a.hwm_kb / 1024.0);
  std::printf("longest event-loop stall (open, step, search, every tab): %.0f ms (%s)\n", worst->stall_ms,
              worst->what.c_str());
  return 0;
}

}  // namespace tv
