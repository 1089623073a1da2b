#include "gui/code_view.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#include "gui/async.h"
#include "gui/frame_builder.h"

namespace tv {

CodeView::CodeView(QWidget* parent) : QWidget(parent) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  title_ = new QLabel(this);
  text_ = new QPlainTextEdit(this);
  text_->setReadOnly(true);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono(QStringLiteral("DejaVu Sans Mono"));
  mono.setStyleHint(QFont::Monospace);
  mono.setPointSizeF(9);
  text_->setFont(mono);
  lay->addWidget(title_);
  lay->addWidget(text_, 1);
}

QString CodeView::text() const { return text_->toPlainText(); }

void CodeView::set_session(SessionPtr s) {
  session_ = std::move(s);
  shown_step_ = -1;
  text_->clear();
  title_->clear();
}

void CodeView::set_selection(const Selection& s) {
  sel_ = s;
  if (isVisible()) load();
}

void CodeView::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  load();
}

void CodeView::load() {
  if (!session_ || sel_.step == shown_step_) return;
  shown_step_ = sel_.step;
  if (!sel_.step) {
    title_->setText(tr("Select a step to see its graphs as text."));
    text_->clear();
    return;
  }
  title_->setText(
      tr("Step %1: input and output graphs (kernel source appears here once traces record kernels)").arg(sel_.step));
  uint64_t gen = ++gen_;
  loading_ = true;
  SessionPtr s = session_;
  int64_t step = sel_.step;
  run_async<std::string>(
      this, [s, step] { return s->with_frames([&](TraceSession::Frames& fr) { return step_graph_text(fr, step); }); },
      [this, gen](std::string text, QString err) {
        if (gen != gen_) return;
        loading_ = false;
        text_->setPlainText(err.isEmpty() ? QString::fromStdString(text) : err);
      });
}

}  // namespace tv
