// The QtTests' shared fixtures: traces recorded at test time with VIZ=-1 (examples/rewrite_demo, TV_DEMO_BIN;
// examples/hello_tensor, TV_TENSOR_BIN), and waiting until a window has drawn what it was asked for.
#pragma once
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QThread>

#include "gui/main_window.h"

// "" when the program ran and recorded its trace into path, else what went wrong
// extra_env: more variables, "NAME=VALUE"
inline QString record_trace(const QString& program, const QString& path, int timeout_ms = 120000,
                            const QStringList& extra_env = {}) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const QString& kv : extra_env) env.insert(kv.section('=', 0, 0), kv.section('=', 1));
  env.insert("VIZ", "-1");
  env.insert("VIZ_PATH", path);
  env.insert("PRINT_MATCH_STATS", "0");
  p.setProcessEnvironment(env);
  p.setStandardOutputFile(QProcess::nullDevice());
  p.start(program, {});
  if (!p.waitForFinished(timeout_ms)) return program + " did not finish in time";
  if (p.exitCode() != 0) return QString("%1 exited with %2").arg(program).arg(p.exitCode());
  return "";
}

inline QString record_demo_trace(const QString& path) { return record_trace(TV_DEMO_BIN, path, 60000); }

// processes events until the window has nothing loading (three quiet turns in a row); false after ms
inline bool wait_idle(tv::MainWindow& w, int ms = 20000) {
  QElapsedTimer t;
  t.start();
  int quiet = 0;
  while (t.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    quiet = w.idle() ? quiet + 1 : 0;
    if (quiet >= 3) return true;
    QThread::msleep(2);
  }
  return false;
}
