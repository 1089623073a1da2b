// The QtTests' shared fixture: a trace of examples/rewrite_demo (TV_DEMO_BIN) recorded with VIZ=-1 into path.
#pragma once
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>

// "" when the trace was recorded, else what went wrong
inline QString record_demo_trace(const QString& path) {
  QProcess demo;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("VIZ", "-1");
  env.insert("VIZ_PATH", path);
  env.insert("PRINT_MATCH_STATS", "0");
  demo.setProcessEnvironment(env);
  demo.setStandardOutputFile(QProcess::nullDevice());
  demo.start(TV_DEMO_BIN, {});
  if (!demo.waitForFinished(60000)) return "the demo did not finish within 60 s";
  if (demo.exitCode() != 0) return QString("the demo exited with %1").arg(demo.exitCode());
  return "";
}
