// Damaged traces in the window: each of these once aborted tinyviz (an exception reaching Qt's event loop, or thrown
// on a worker thread). Now the window shows an error naming the file and goes on: the next good trace opens.
#include <sqlite3.h>

#include <QEvent>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/app.h"
#include "gui/async.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/tests/demo_trace.h"
#include "gui/message_bar.h"
#include "viz/reader/reader.h"

using namespace tv;

namespace {

// throws from its event handler, as a slot reading a damaged row would
class Thrower : public QObject {
 public:
  bool event(QEvent* e) override {
    if (e->type() == QEvent::User) throw tg::viz::TraceError("trace 'x.db': table steps, row 7: a test error");
    return QObject::event(e);
  }
};


}  // namespace

class TestBadTraces : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  int n_ = 0;

  // a copy of the sample trace changed by SQL
  QString damaged(const QString& sql) {
    QString path = dir_.filePath(QString("bad%1.trace.db").arg(n_++));
    QFile::remove(path);
    if (!QFile::copy(TV_SAMPLE_TRACE, path)) return {};
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    sqlite3* db = nullptr;
    sqlite3_open(path.toStdString().c_str(), &db);
    std::string q = "PRAGMA journal_mode=DELETE; " + sql.toStdString();
    int rc = sqlite3_exec(db, q.c_str(), nullptr, nullptr, nullptr);
    sqlite3_close(db);
    return rc == SQLITE_OK ? path : QString();
  }
  // opening fails with an error naming the file and saying `what`; the window then opens the sample as usual
  void expect_open_error(MainWindow& w, const QString& path, const QString& what) {
    QVERIFY(!path.isEmpty());
    QSignalSpy errors(&w, &MainWindow::error_shown);
    QVERIFY(!w.open_trace(path));
    QVERIFY(!w.message_bar()->isHidden());
    QString m = w.message_bar()->text();
    QVERIFY2(m.contains(path) && m.contains(what), qPrintable(m));
    QCOMPARE(errors.count(), 1);
    QVERIFY(w.open_trace(TV_SAMPLE_TRACE));
    QVERIFY(wait_idle(w));
    QVERIFY(w.graph()->frame());
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(dir_.isValid());
  }

  void a_step_in_a_context_that_does_not_exist() {
    MainWindow w(nullptr, false);
    expect_open_error(w, damaged("UPDATE steps SET context=999999 WHERE id=(SELECT MIN(id) FROM steps)"),
                      "context 999999 does not exist");
  }

  void meta_without_a_value_column() {
    MainWindow w(nullptr, false);
    expect_open_error(w, damaged("ALTER TABLE meta RENAME COLUMN value TO v"), "table meta has no column value");
  }

  void negative_and_huge_match_counts() {
    MainWindow w(nullptr, false);
    for (const char* n : {"-1", "1000000000000000"})
      expect_open_error(
          w, damaged(QString("UPDATE steps SET n_matches=%1 WHERE id=(SELECT MIN(step) FROM matches)").arg(n)),
          QString("n_matches %1").arg(n));
  }

  void a_uop_that_is_its_own_src_is_a_frame_error() {
    MainWindow w(nullptr, false);
    QString p = damaged(
        "UPDATE uops SET src=x'00' WHERE id=(SELECT input_root FROM steps WHERE id=(SELECT MIN(step) FROM matches))");
    QVERIFY(!p.isEmpty());
    QVERIFY(w.open_trace(p));  // the catalog is fine; the step's frames are not
    QVERIFY(wait_idle(w));
    int64_t step = 0;  // the first step with matches, as damaged() chose it
    for (const auto& s : w.session()->ui().steps())
      if (s.n_matches > 0) {
        step = s.id;
        break;
      }
    w.select({0, step, 1});
    QVERIFY(wait_idle(w));
    QString m = w.message_bar()->text();
    QVERIFY2(m.contains(p) && m.contains("itself"), qPrintable(m));
    QVERIFY(w.open_trace(TV_SAMPLE_TRACE));
    QVERIFY(wait_idle(w));
    QVERIFY(w.message_bar()->isHidden());
  }

  void an_exception_in_an_event_handler_is_shown_and_the_app_goes_on() {
    auto* app = dynamic_cast<App*>(qApp);
    QVERIFY(app);
    MainWindow w(nullptr, false);
    app->on_error = [&w](const QString& t) { w.report_error(t); };
    Thrower t;
    QCoreApplication::postEvent(&t, new QEvent(QEvent::User));
    QCoreApplication::processEvents();
    app->on_error = nullptr;
    QVERIFY2(w.message_bar()->text().contains("row 7: a test error"), qPrintable(w.message_bar()->text()));
    QVERIFY(w.open_trace(TV_SAMPLE_TRACE));
    QVERIFY(wait_idle(w));
  }

  void a_worker_job_that_throws_reports_its_error() {
    QObject receiver;
    QString got;
    bool done = false;
    run_async<int>(
        &receiver, []() -> int { throw 42; },  // not even a std::exception
        [&](int, QString err) { got = err, done = true; });
    QTRY_VERIFY_WITH_TIMEOUT(done, 5000);
    QVERIFY2(got.contains("Internal error"), qPrintable(got));
  }
};

int run_bad_trace_tests(int argc, char** argv) {
  TestBadTraces t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_bad_traces.moc"
