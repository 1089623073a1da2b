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
