// A closable banner at the top of the window for errors a user can cause (a missing or corrupt trace, a frame that
// cannot be built). Non-modal: the app keeps running and the message stays until closed or replaced.
#pragma once
#include <QFrame>

class QLabel;

namespace tv {

class MessageBar : public QFrame {
  Q_OBJECT
 public:
  explicit MessageBar(QWidget* parent = nullptr);
  void show_error(const QString& text);
  void show_info(const QString& text);
  QString text() const;

 private:
  void show_text(const QString& text, const char* style);
  QLabel* label_;
};

}  // namespace tv
