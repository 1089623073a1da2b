#include "gui/app.h"

#include <cstdio>
#include <exception>
#include <new>

#include "lib/error.h"

namespace tv {

QString App::describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const tg::Error& err) {
    return QString::fromStdString(err.what());
  } catch (const std::bad_alloc&) {
    return QStringLiteral("Out of memory: the last action needed more memory than there is.");
  } catch (const std::exception& err) {
    return QStringLiteral("Internal error: %1").arg(QString::fromStdString(err.what()));
  } catch (...) {
    return QStringLiteral("Internal error (an unknown exception)");
  }
}

bool App::notify(QObject* receiver, QEvent* e) {
  try {
    return QApplication::notify(receiver, e);
  } catch (...) {
    report(describe(std::current_exception()));
  }
  return false;
}

void App::report(const QString& text) {
  std::fprintf(stderr, "tinyviz: %s\n", qPrintable(text));
  if (!on_error || reporting_) return;  // an error while showing an error: stderr only
  reporting_ = true;
  try {
    on_error(text);
  } catch (...) {
  }
  reporting_ = false;
}

}  // namespace tv
