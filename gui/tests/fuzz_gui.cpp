// tinyviz_fuzz_gui JOBS: trace_fuzz's GUI worker. One window opens every trace of the job file ("index<TAB>path"
// lines) in turn, as a user would: open, step through frames, every tab, a search. It reports on fd 3
// "B index" when it starts a trace and "E index<TAB>status<TAB>errors" when it is done (status 1: the window showed
// errors, one per line). The driver counts a worker that dies or stops reporting against the trace it was in.
#include <QApplication>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QTableView>
#include <QThread>
#include <cstdio>
#include <fstream>
#include <string>

#include "gui/app.h"
#include "gui/main_window.h"
#include "gui/message_bar.h"
#include "gui/stats_view.h"
#include "gui/timeline_view.h"
#include "gui/trace_model.h"
#include "tests/viz/fuzz_protocol.h"

namespace {

struct Probe {
  tv::MainWindow& w;
  QStringList& errors;  // what the window reported (MainWindow::error_shown)
  void note() {}
  // let the window work (frames, statistics, code) until it is idle, at most ms
  void settle(int ms = 2000) {
    QElapsedTimer t;
    t.start();
    int quiet = 0;
    while (t.elapsed() < ms) {
      QApplication::processEvents(QEventLoop::AllEvents, 10);
      note();
      quiet = w.idle() ? quiet + 1 : 0;
      if (quiet >= 3) break;
      if (!w.idle()) QThread::msleep(2);
    }
    note();
  }
  // what the tree's views ask the model for, row by row (at most a few thousand rows)
  void read_model() {
    tv::TraceModel* m = w.model();
    std::vector<QModelIndex> st{QModelIndex()};
    size_t seen = 0;
    while (!st.empty() && seen < 3000) {
      QModelIndex p = st.back();
      st.pop_back();
      if (p.isValid() && m->canFetchMore(p)) m->fetchMore(p);
      for (int r = 0; r < m->rowCount(p) && seen < 3000; r++, seen++)
        for (int c = 0; c < m->columnCount(p); c++) {
          QModelIndex i = m->index(r, c, p);
          for (int role : {(int)Qt::DisplayRole, (int)Qt::ToolTipRole, (int)Qt::ForegroundRole,
                           (int)tv::TraceModel::SearchRole, (int)tv::TraceModel::FrameRole})
            m->data(i, role);
          if (c == 0) st.push_back(i);
        }
    }
  }
  void exercise() {
    settle();
    read_model();
    note();
    const auto& order = w.model()->step_order();
    for (size_t k = 0; k < order.size() && k < 3; k++) {
      int64_t step = order[k == 2 ? order.size() - 1 : k];
      w.select({0, step, 0});
      settle();
      for (int i = 0; i < 2; i++) {
        w.navigate(Qt::Key_Right);
        settle();
      }
      size_t frames = w.model()->frames_of(step);
      w.select({0, step, frames ? frames - 1 : 0});
      settle();
    }
    w.navigate(Qt::Key_Down);
    settle();
    for (auto tab : {tv::MainWindow::StatsTab, tv::MainWindow::TimelineTab, tv::MainWindow::CodeTab}) {
      w.show_tab(tab);
      settle();
    }
    w.show_tab(tv::MainWindow::StatsTab);
    for (auto scope : {tv::StatsView::ThisContext, tv::StatsView::ThisStep, tv::StatsView::WholeTrace}) {
      w.stats()->set_scope(scope);
      settle(1000);
    }
    if (w.stats()->model()->rowCount()) {
      w.stats()->table()->setCurrentIndex(w.stats()->proxy()->index(0, 0));
      settle(1000);
    }
    w.show_tab(tv::MainWindow::TimelineTab);
    w.timeline()->show_all();
    w.timeline()->repaint();
    w.search_box()->setText("a");
    settle(1000);
    w.search_box()->clear();
    w.show_tab(tv::MainWindow::GraphTab);
    settle();
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tinyviz_fuzz_gui JOBS (run by trace_fuzz)\n");
    return 2;
  }
  FILE* progress = fdopen(3, "w");
  if (!progress) return 3;
  tv::App app(argc, argv);  // as tinyviz runs: App::notify shows what the event loop catches
  tv::apply_theme(app);
  tv::MainWindow w(nullptr, false);
  app.on_error = [&w](const QString& text) { w.report_error(text); };
  QStringList errors;
  QObject::connect(&w, &tv::MainWindow::error_shown, [&errors](const QString& t) {
    if (!errors.contains(t)) errors << t;
  });
  w.resize(1200, 800);
  w.show();
  std::ifstream in(argv[1]);
  for (std::string line; std::getline(in, line);) {
    size_t tab = line.find('\t');
    std::string idx = line.substr(0, tab), path = line.substr(tab + 1);
    std::fprintf(progress, "B %s\n", idx.c_str());
    std::fflush(progress);
    errors.clear();
    Probe p{w, errors};
    w.message_bar()->hide();
    if (w.open_trace(QString::fromStdString(path))) p.exercise();
    p.note();
    std::fprintf(progress, "E %s\t%d\t%s\n", idx.c_str(), errors.isEmpty() ? 0 : 1,
                 fuzz::escape(errors.join('\n').toStdString()).c_str());
    std::fflush(progress);
  }
  return 0;
}
