#include "gui/message_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace tv {

MessageBar::MessageBar(QWidget* parent) : QFrame(parent) {
  auto* lay = new QHBoxLayout(this);
  lay->setContentsMargins(10, 6, 6, 6);
  label_ = new QLabel(this);
  label_->setWordWrap(true);
  label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* close = new QToolButton(this);
  close->setText(QStringLiteral("✕"));
  close->setAutoRaise(true);
  close->setToolTip(tr("Close"));
  connect(close, &QToolButton::clicked, this, &QWidget::hide);
  lay->addWidget(label_, 1);
  lay->addWidget(close);
  hide();
}

QString MessageBar::text() const { return isVisible() || !isHidden() ? label_->text() : QString(); }

void MessageBar::show_text(const QString& text, const char* style) {
  setStyleSheet(style);
  label_->setText(text);
  show();
}

void MessageBar::show_error(const QString& text) {
  show_text(text, "tv--MessageBar{background:#5a2326;border:1px solid #a04048;} QLabel{color:#ffe0e0;}");
}

void MessageBar::show_info(const QString& text) {
  show_text(text, "tv--MessageBar{background:#23385a;border:1px solid #4060a0;} QLabel{color:#e0ecff;}");
}

}  // namespace tv
