// tinyviz: opens a tinygrad-cpp trace and shows what the engine did. See options.h for the command line.
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QFileInfo>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "gui/app.h"
#include "gui/frame_loader.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/screenshot.h"

// the offscreen platform warns about a window feature it lacks on every top-level window: noise for users
static void message_handler(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
  if (msg.contains("propagateSizeHints")) return;
  std::fprintf(stderr, "%s\n", qPrintable(qFormatLogMessage(type, ctx, msg)));
}

int main(int argc, char** argv) {
  auto launch = std::chrono::steady_clock::now();
  // a few worker threads (frames, Graphviz, queries, opening) each got a 64 MB malloc arena whose freed pages stayed
  // resident: two arenas keep the heap compact (the GUI thread does little allocation that would contend)
  mallopt(M_ARENA_MAX, 2);
  // a trace's strings can be any length: what the views show of each is cut (viz/reader/reader.h), before anything is read
  tg::viz::set_display_text_limit(tv::kShownTextLimit);
  QStringList args;
  for (int i = 1; i < argc; i++) args << QString::fromLocal8Bit(argv[i]);
  tv::Options o = tv::parse_options(args);
  if (o.help) {
    std::fputs(tv::kUsage, stdout);
    return 0;
  }
  if (!o.error.isEmpty()) {
    std::fprintf(stderr, "tinyviz: %s\n%s", qPrintable(o.error), tv::kUsage);
    return 2;
  }
  // headless screenshots need no display; Qt warns without a runtime dir (root, CI)
  if ((!o.screenshot.isEmpty() || o.bench_step) && !std::getenv("QT_QPA_PLATFORM"))
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
  if (!std::getenv("XDG_RUNTIME_DIR")) {
    std::string dir = "/tmp/tinyviz-runtime-" + std::to_string(getuid());
    mkdir(dir.c_str(), 0700);
    chmod(dir.c_str(), 0700);
    setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  }
  // a launch onto a deep frame: its replay starts while Qt does
  if (!o.trace.isEmpty()) {
    tv::Selection first = tv::first_selection(o);
    tv::TraceSession::prepare(o.trace.toStdString(), first.step, first.frame);
  }
  int rc;
  {
    qInstallMessageHandler(message_handler);
    tv::App app(argc, argv);
    QApplication::setApplicationName("tinyviz");
    QApplication::setOrganizationName("tinygrad-cpp");
    tv::apply_theme(app);
    tv::MainWindow w(nullptr, o.screenshot.isEmpty() && !o.bench_step);  // headless runs: the default layout
    w.set_first_frame_clock(launch);
    app.on_error = [&w](const QString& text) { w.report_error(text); };
    if (o.bench_step) {
      rc = tv::bench_stepping(w, o);
    } else if (!o.screenshot.isEmpty()) {
      rc = tv::take_screenshot(w, o);
    } else {
      w.show();
      if (o.follow) w.set_follow(true, 1000, o.trace);  // (a trace not written yet is opened once it appears)
      if (o.follow && !o.trace.isEmpty() && !QFileInfo::exists(o.trace))
        w.graph()->show_message(QObject::tr("Waiting for %1 to be recorded…").arg(o.trace));
      else if (!o.trace.isEmpty() && w.open_trace(o.trace, tv::first_selection(o)))
        tv::apply_options(w, o);
      rc = app.exec();
    }
    app.on_error = nullptr;
    if (!tv::FrameLoader::workers_idle()) {
      // a Graphviz run cannot be interrupted: do not wait for it
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(rc);
    }
  }
  return rc;
}
