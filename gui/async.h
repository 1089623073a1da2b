// Runs a job on the query thread and hands its result (or the error it threw) back to the UI thread, unless the
// receiver was destroyed in the meantime.
#pragma once
#include <QCoreApplication>
#include <QPointer>
#include <QThreadPool>
#include <exception>
#include <functional>
#include <memory>

#include "gui/app.h"

namespace tv {

// never destroyed: quitting must not wait for a slow query
inline QThreadPool* query_pool() {
  static QThreadPool* p = [] {
    auto* q = new QThreadPool();
    q->setMaxThreadCount(1);
    q->setExpiryTimeout(-1);
    return q;
  }();
  return p;
}

template <class T>
void run_async(QObject* receiver, std::function<T()> job, std::function<void(T, QString)> done) {
  QPointer<QObject> guard(receiver);
  query_pool()->start([guard, job = std::move(job), done = std::move(done)] {
    auto result = std::make_shared<T>();
    QString error;
    try {
      *result = job();
    } catch (...) {  // a job never ends the process: its error goes to done()
      error = App::describe(std::current_exception());
    }
    QMetaObject::invokeMethod(
        qApp,
        [guard, done, result, error] {
          if (guard) done(std::move(*result), error);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace tv
