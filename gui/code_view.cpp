#include "gui/code_view.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSyntaxHighlighter>
#include <QTabBar>
#include <QTimer>
#include <QVBoxLayout>
#include <functional>
#include <memory>

#include "gui/async.h"
#include "gui/frame_builder.h"

namespace tv {

using namespace tg::viz;

// C and LLVM IR: keywords, types, numbers, comments, LLVM %values and @globals, preprocessor lines
class SourceHighlighter : public QSyntaxHighlighter {
 public:
  explicit SourceHighlighter(QTextDocument* doc) : QSyntaxHighlighter(doc) {
    auto fmt = [](QRgb c, bool bold = false) {
      QTextCharFormat f;
      f.setForeground(QColor::fromRgb(c));
      if (bold) f.setFontWeight(QFont::Bold);
      return f;
    };
    rules_ = {
        {QRegularExpression(R"(\b(if|else|for|while|return|void|define|declare|ret|br|label|phi|call|store|load|)"
                            R"(getelementptr|inbounds|alloca|icmp|fcmp|select|to|nsw|nuw|nnan|ninf|nsz|arcp|contract|)"
                            R"(afn|reassoc|fast|restrict|const|static|inline|struct|typedef|unsigned|signed|align)\b)"),
         fmt(0xc678dd, true)},
        {QRegularExpression(R"(\b(float|double|half|bool|char|short|int|long|__bf16|_Float16|i1|i8|i16|i32|i64|)"
                            R"(ptr|size_t|u?int(8|16|32|64)_t|float[0-9]+|half[0-9]+|int[0-9]+)\b|<\d+ x [a-z0-9]+>)"),
         fmt(0xe5c07b)},
        {QRegularExpression(R"(\b(add|fadd|sub|fsub|mul|fmul|sdiv|udiv|fdiv|srem|urem|frem|shl|lshr|ashr|and|or|xor|)"
                            R"(sitofp|uitofp|fptosi|fptoui|fpext|fptrunc|zext|sext|trunc|bitcast|extractelement|)"
                            R"(insertelement|shufflevector)\b)"),
         fmt(0x61afef)},
        {QRegularExpression(R"([%@][A-Za-z0-9_.]+)"), fmt(0xe06c75)},
        {QRegularExpression(R"(\b(0x[0-9a-fA-F]+|[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?[fFuUlL]*)\b)"), fmt(0xd19a66)},
        {QRegularExpression(R"(^\s*#.*$)"), fmt(0x98c379)},
        {QRegularExpression(R"((//|;).*$)"), fmt(0x7f848e)},
    };
  }

 protected:
  void highlightBlock(const QString& text) override {
    for (const auto& [re, f] : rules_) {
      auto it = re.globalMatch(text);
      while (it.hasNext()) {
        auto m = it.next();
        setFormat((int)m.capturedStart(), (int)m.capturedLength(), f);
      }
    }
  }

 private:
  std::vector<std::pair<QRegularExpression, QTextCharFormat>> rules_;
};

CodeView::CodeView(QWidget* parent) : QWidget(parent) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  title_ = new QLabel(this);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  title_->setWordWrap(true);
  modes_ = new QTabBar(this);
  modes_->addTab(tr("Source"));
  modes_->addTab(tr("Linearized UOps"));
  modes_->addTab(tr("Step graphs"));
  modes_->setDrawBase(false);
  text_ = new QPlainTextEdit(this);
  text_->setReadOnly(true);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono(QStringLiteral("DejaVu Sans Mono"));
  mono.setStyleHint(QFont::Monospace);
  mono.setPointSizeF(9);
  text_->setFont(mono);
  hl_ = new SourceHighlighter(text_->document());
  lay->addWidget(title_);
  lay->addWidget(modes_);
  lay->addWidget(text_, 1);
  connect(modes_, &QTabBar::currentChanged, this, [this](int i) { set_mode((Mode)i); });
}

QString CodeView::text() const { return text_->toPlainText(); }
QString CodeView::title() const { return title_->text(); }

void CodeView::set_session(SessionPtr s) {
  session_ = std::move(s);
  shown_ctx_ = shown_step_ = -1;
  shown_mode_ = -1;
  set_text(QString());
  title_->clear();
}

void CodeView::set_selection(const Selection& s) {
  sel_ = s;
  if (isVisible()) load();
}

void CodeView::set_mode(Mode m) {
  mode_ = m;
  if (modes_->currentIndex() != (int)m) modes_->setCurrentIndex((int)m);
  if (isVisible()) load();
}

void CodeView::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  load();
}

QString duration_text(double ns) {
  if (ns < 1e3) return QString("%1 ns").arg(ns, 0, 'f', 0);
  if (ns < 1e6) return QString("%1 µs").arg(ns / 1e3, 0, 'f', ns < 1e4 ? 2 : 1);
  if (ns < 1e9) return QString("%1 ms").arg(ns / 1e6, 0, 'f', ns < 1e7 ? 2 : ns < 1e8 ? 1 : 0);
  return QString("%1 s").arg(ns / 1e9, 0, 'f', 2);
}

static QString kernel_summary(const Trace& t, const ProgramRow& p) {
  int64_t runs = 0, ns = 0;
  for (const auto& k : t.kernel_events())
    if (k.program == p.id) runs++, ns += k.t_end - k.t_start;
  QString s = QObject::tr("Kernel <b>%1</b> on %2 — global %3, local %4")
                  .arg(QString::fromStdString(p.name).toHtmlEscaped(), QString::fromStdString(p.device),
                       QString::fromStdString(p.global_size), QString::fromStdString(p.local_size));
  if (p.ops >= 0) s += QObject::tr(", %1 FLOPs").arg(p.ops);
  if (p.mem >= 0) s += QObject::tr(", %1 bytes").arg(p.mem);
  if (runs && ns <= 0) {
    // runs launched without waiting for them (not timed) have no duration
    s += QObject::tr("<br>%1 runs, not timed").arg(runs);
  } else if (runs) {
    double avg = double(ns) / runs;
    s += QObject::tr("<br>%1 runs, %2 on average").arg(runs).arg(duration_text(avg));
    if (p.ops >= 0 && avg > 0) s += QObject::tr(", %1 GFLOPS").arg(p.ops / avg, 0, 'f', 2);
    if (p.mem >= 0 && avg > 0) s += QObject::tr(", %1 GB/s").arg(p.mem / avg, 0, 'f', 2);
  }
  return s;
}

// A kernel's source is 70 KB, its UOps 180 KB: laying that out (and highlighting it) in one go held the event loop
// for 120 ms. The first screenful goes in at once, the rest one chunk of lines per event-loop turn.
void CodeView::set_text(const QString& text) {
  constexpr qsizetype kChunk = 12000;
  uint64_t gen = ++text_gen_;
  filling_ = false;
  qsizetype cut = text.size() <= kChunk ? text.size() : text.indexOf('\n', kChunk);
  if (cut < 0) cut = text.size();
  text_->setPlainText(text.left(cut));
  if (cut >= text.size()) return;
  filling_ = true;
  auto rest = std::make_shared<QString>(text.mid(cut + 1));  // after the newline the next paragraph replaces
  auto step = std::make_shared<std::function<void(qsizetype)>>();
  *step = [this, gen, rest, step](qsizetype from) {
    if (gen != text_gen_) {
      *step = nullptr;
      return;
    }
    qsizetype end = from + kChunk >= rest->size() ? rest->size() : rest->indexOf('\n', from + kChunk);
    if (end < 0) end = rest->size();
    QScrollBar* v = text_->verticalScrollBar();
    int keep = v->value();
    text_->appendPlainText(rest->mid(from, end - from));  // a new paragraph: the newline at `from - 1`
    v->setValue(keep);
    if (end >= rest->size()) {
      filling_ = false;
      *step = nullptr;  // break the cycle
      return;
    }
    QTimer::singleShot(0, this, [step, end] {
      if (*step) (*step)(end + 1);
    });
  };
  QTimer::singleShot(0, this, [step] {
    if (*step) (*step)(0);
  });
}

void CodeView::load() {
  if (!session_) return;
  Trace& t = session_->ui();
  const ProgramRow* prg = sel_.context ? t.program_of_context(sel_.context) : nullptr;
  modes_->setTabEnabled(Source, prg != nullptr);
  modes_->setTabEnabled(Uops, prg != nullptr);
  Mode m = prg ? mode_ : Graphs;
  if (sel_.context == shown_ctx_ && sel_.step == shown_step_ && (int)m == shown_mode_) return;
  shown_ctx_ = sel_.context, shown_step_ = sel_.step, shown_mode_ = (int)m;
  if (modes_->currentIndex() != (int)m) {
    QSignalBlocker b(modes_);
    modes_->setCurrentIndex((int)m);
  }
  ++gen_;
  loading_ = false;
  if (prg && m != Graphs) {
    title_->setText(kernel_summary(t, *prg));
    hl_->setDocument(m == Source ? text_->document() : nullptr);
    try {
      auto [source, uops] = t.program_text(prg->id);  // not kept in memory: 6 MB on a training run
      set_text(QString::fromStdString(m == Source ? source : uops));
    } catch (const std::exception& e) {
      set_text(QString::fromStdString(e.what()));
      emit load_failed(QString::fromStdString(e.what()));
    }
    return;
  }
  hl_->setDocument(nullptr);
  if (!sel_.step) {
    title_->setText(prg ? tr("Select a step of this kernel's codegen to see its graphs as text.")
                        : tr("Select a kernel's context to see its source, or a step to see its graphs as text."));
    set_text(QString());
    return;
  }
  title_->setText(tr("Step %1: input and output graphs").arg(sel_.step));
  uint64_t gen = gen_;
  loading_ = true;
  SessionPtr s = session_;
  int64_t step = sel_.step;
  run_async<std::string>(
      this, [s, step] { return s->with_frames([&](TraceSession::Frames& fr) { return step_graph_text(fr, step); }); },
      [this, gen](std::string text, QString err) {
        if (gen != gen_) return;
        loading_ = false;
        set_text(err.isEmpty() ? QString::fromStdString(text) : err);
        if (!err.isEmpty()) emit load_failed(err);
      });
}

}  // namespace tv
