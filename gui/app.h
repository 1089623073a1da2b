// tinyviz's QApplication: every exception that reaches the event loop (a slot, an event handler, a queued job's
// result) is caught there and handed to on_error, which shows it in the window, and the app goes on. Qt itself does
// not catch: without this, one bad row in a trace would abort the process.
#pragma once
#include <QApplication>
#include <functional>

namespace tv {

class App : public QApplication {
 public:
  App(int& argc, char** argv) : QApplication(argc, argv) {}
  bool notify(QObject* receiver, QEvent* e) override;
  // the window's error banner (set once the window exists; before that, errors go to stderr)
  std::function<void(const QString&)> on_error;
  // the text an exception is shown with: a tg::Error's own message (what and where), anything else as an internal
  // error
  static QString describe(std::exception_ptr e);

 private:
  void report(const QString& text);
  bool reporting_ = false;
};

}  // namespace tv
