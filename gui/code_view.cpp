#include "gui/code_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSplitter>
#include <QSyntaxHighlighter>
#include <QTabBar>
#include <QTextBlock>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <functional>
#include <memory>

#include "gui/async.h"
#include "gui/frame_builder.h"

namespace tv {

using namespace tg::viz;

// a highlighter by regular expressions, each giving its matches one format (later rules win)
class RuleHighlighter : public QSyntaxHighlighter {
 public:
  using QSyntaxHighlighter::QSyntaxHighlighter;

 protected:
  static QTextCharFormat fmt(QRgb c, bool bold = false) {
    QTextCharFormat f;
    f.setForeground(QColor::fromRgb(c));
    if (bold) f.setFontWeight(QFont::Bold);
    return f;
  }
  void apply_rules(const QString& text) {
    for (const auto& [re, f] : rules_) {
      auto it = re.globalMatch(text);
      while (it.hasNext()) {
        auto m = it.next();
        setFormat((int)m.capturedStart(), (int)m.capturedLength(), f);
      }
    }
  }
  void highlightBlock(const QString& text) override { apply_rules(text); }
  std::vector<std::pair<QRegularExpression, QTextCharFormat>> rules_;
};

// C and LLVM IR: keywords, types, numbers, comments, LLVM %values and @globals, preprocessor lines
class SourceHighlighter : public RuleHighlighter {
 public:
  explicit SourceHighlighter(QTextDocument* doc) : RuleHighlighter(doc) {
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
};

// The machine code as the CPU's disassembly writes it (backends/cpu machine_code): ';' comment lines, labels (.L3:),
// "# <- loop .L3 (innermost)" on a loop's backward jump. The lines of an innermost loop, from its head's label to its
// backward jump, get a full-width background (extra selections of the editor), so the hot loop stands out; vector
// registers and instructions are coloured.
class AsmHighlighter : public RuleHighlighter {
 public:
  explicit AsmHighlighter(QTextDocument* doc) : RuleHighlighter(doc) {
    // the source highlighter's colours (they read on the dark theme and on a light one)
    rules_ = {
        {QRegularExpression(R"(%[a-z0-9]+)"), fmt(0xe06c75)},
        {QRegularExpression(R"(%[xyz]mm[0-9]+|%k[0-7])"), fmt(0x56b6c2)},
        {QRegularExpression(R"(\$?-?0x[0-9a-f]+\b)"), fmt(0xd19a66)},
        {QRegularExpression(R"(^\s*[0-9a-f]+:\s+[| ]*\K(v[a-z0-9]+|[a-z]*(ps|pd|ss|sd))\b)"), fmt(0x61afef, true)},
        {QRegularExpression(R"(^\s*[0-9a-f]+:\s+[| ]*\K(j[a-z]+|call[a-z]*|ret[a-z]*)\b)"), fmt(0xc678dd, true)},
        {QRegularExpression(R"(^\s*[0-9a-f]+:)"), fmt(0x7f848e)},
        {QRegularExpression(R"(^[^\s;].*:)"), fmt(0xe5c07b, true)},
        {QRegularExpression(R"(\.L[0-9]+|<[A-Za-z0-9_.@]+>|\.LCPI[0-9_]+)"), fmt(0xe5c07b, true)},
        {QRegularExpression(R"(#.*$)"), fmt(0x98c379)},
        {QRegularExpression(R"(#\s*<- loop.*$)"), fmt(0xe06c75, true)},
        {QRegularExpression(R"(;.*$)"), fmt(0x7f848e)},
    };
  }
  // the innermost loops' background: a tint of the editor's base colour
  void set_base(const QColor& base) {
    bool dark = base.lightnessF() < 0.5;
    loop_bg_ = dark ? QColor(64, 58, 30) : QColor(255, 243, 205);
  }

 protected:
  void highlightBlock(const QString& text) override {
    // state 1: inside an innermost loop (its head's label was above, its backward jump not yet)
    bool head = text.startsWith(QLatin1String(".L")) && text.contains(QLatin1String("; innermost loop"));
    bool in_loop = head || previousBlockState() == 1;
    bool latch = in_loop && text.contains(QLatin1String("<- loop")) && text.contains(QLatin1String("(innermost)"));
    setCurrentBlockState(in_loop && !latch ? 1 : 0);
    apply_rules(text);
  }

 public:
  // the innermost loops' lines, full width, as the editor's extra selections (set once the text is in)
  QList<QTextEdit::ExtraSelection> loop_selections(QTextDocument* doc) const {
    QList<QTextEdit::ExtraSelection> out;
    for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
      if (b.userState() != 1 && !(b.previous().isValid() && b.previous().userState() == 1)) continue;
      QTextEdit::ExtraSelection sel;
      sel.cursor = QTextCursor(b);
      sel.format.setBackground(loop_bg_);
      sel.format.setProperty(QTextFormat::FullWidthSelection, true);
      out.push_back(sel);
    }
    return out;
  }

 private:
  QColor loop_bg_;
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
  // the machine code, beside the source
  asm_box_ = new QWidget(this);
  auto* alay = new QVBoxLayout(asm_box_);
  alay->setContentsMargins(0, 0, 0, 0);
  alay->setSpacing(2);
  auto* bar = new QHBoxLayout();
  bar->setContentsMargins(0, 0, 0, 0);
  asm_title_ = new QLabel(asm_box_);
  asm_title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  asm_title_->setWordWrap(true);
  asm_find_ = new QLineEdit(asm_box_);
  asm_find_->setPlaceholderText(tr("Find in machine code"));
  asm_find_->setClearButtonEnabled(true);
  asm_next_loop_ = new QToolButton(asm_box_);
  asm_next_loop_->setText(tr("Next loop"));
  asm_next_loop_->setToolTip(tr("The next innermost loop: from its head's label to its backward jump"));
  bar->addWidget(asm_find_, 1);
  bar->addWidget(asm_next_loop_);
  asm_ = new QPlainTextEdit(asm_box_);
  asm_->setReadOnly(true);
  asm_->setLineWrapMode(QPlainTextEdit::NoWrap);
  asm_->setFont(mono);
  asm_hl_ = new AsmHighlighter(asm_->document());
  asm_hl_->set_base(asm_->palette().color(QPalette::Base));
  alay->addWidget(asm_title_);
  alay->addLayout(bar);
  alay->addWidget(asm_, 1);
  split_ = new QSplitter(Qt::Horizontal, this);
  split_->addWidget(text_);
  split_->addWidget(asm_box_);
  split_->setStretchFactor(0, 2);
  split_->setStretchFactor(1, 3);
  split_->setChildrenCollapsible(true);
  asm_box_->hide();
  lay->addWidget(title_);
  lay->addWidget(modes_);
  lay->addWidget(split_, 1);
  connect(modes_, &QTabBar::currentChanged, this, [this](int i) { set_mode((Mode)i); });
  connect(asm_find_, &QLineEdit::returnPressed, this, [this] { find_in_machine_code(asm_find_->text()); });
  connect(asm_next_loop_, &QToolButton::clicked, this, [this] { next_loop(); });
}

QString CodeView::text() const { return text_->toPlainText(); }
QString CodeView::machine_code_text() const { return asm_->toPlainText(); }
QString CodeView::machine_code_title() const { return asm_title_->text(); }
bool CodeView::machine_code_visible() const { return !asm_box_->isHidden(); }
int CodeView::machine_code_cursor_line() const { return asm_->textCursor().blockNumber(); }

// from the line after the cursor on, wrapping
static bool find_line(QPlainTextEdit* edit, const std::function<bool(const QString&)>& pred) {
  QTextDocument* doc = edit->document();
  int n = doc->blockCount(), from = edit->textCursor().blockNumber();
  for (int k = 1; k <= n; k++) {
    QTextBlock b = doc->findBlockByNumber((from + k) % n);
    if (b.isValid() && pred(b.text())) {
      QTextCursor c(b);
      c.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
      edit->setTextCursor(c);
      edit->centerCursor();
      return true;
    }
  }
  return false;
}

static bool innermost_head(const QString& line) {
  return line.startsWith(QLatin1String(".L")) && line.contains(QLatin1String("; innermost loop"));
}

bool CodeView::next_loop() { return find_line(asm_, innermost_head); }

bool CodeView::find_in_machine_code(const QString& text) {
  if (text.isEmpty()) return false;
  if (asm_->find(text)) return true;
  QTextCursor c = asm_->textCursor();  // wrap around
  c.movePosition(QTextCursor::Start);
  asm_->setTextCursor(c);
  return asm_->find(text);
}

// the innermost loops get their background, and the first one's head goes a few lines from the top, unless the pane
// was scrolled already
void CodeView::scroll_to_first_loop() {
  asm_->setExtraSelections(asm_hl_->loop_selections(asm_->document()));
  if (asm_->verticalScrollBar()->value() != 0) return;
  QTextDocument* doc = asm_->document();
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next())
    if (innermost_head(b.text())) {
      asm_->setTextCursor(QTextCursor(b));
      asm_->verticalScrollBar()->setValue(std::max(0, b.blockNumber() - 4));
      return;
    }
}

void CodeView::show_machine_code(const Trace& t, const ProgramRow& p) {
  asm_box_->show();
  asm_->setExtraSelections({});
  auto none = [&](const QString& why) {
    asm_title_->setText(why);
    fill(asm_, asm_fill_, QString());
  };
  if (!t.has_machine_code())
    return none(tr("This trace holds no machine code (it was recorded before traces held it: schema %1; machine code "
                   "came with schema 6).")
                    .arg(t.schema_version()));
  std::optional<MachineCodeRow> mc;
  try {
    mc = t.machine_code(p.id);
  } catch (const std::exception& e) {
    none(tr("The machine code cannot be read: %1").arg(QString::fromStdString(e.what())));
    emit load_failed(QString::fromStdString(e.what()));
    return;
  }
  if (!mc) return none(tr("The trace holds no machine code for this kernel (it was not compiled while recording)."));
  if (mc->text.empty())
    return none(tr("The device gives no machine code: %1").arg(QString::fromStdString(mc->kind).toHtmlEscaped()));
  asm_title_->setText(tr("Machine code: %1").arg(QString::fromStdString(mc->kind).toHtmlEscaped()));
  // scrolled once laid out (the scroll bar has no range before)
  uint64_t gen = asm_fill_.gen + 1;
  fill(asm_, asm_fill_, QString::fromStdString(mc->text), [this, gen] {
    QTimer::singleShot(0, this, [this, gen] {
      if (gen == asm_fill_.gen) scroll_to_first_loop();
    });
  });
}
QString CodeView::title() const { return title_->text(); }

void CodeView::set_session(SessionPtr s) {
  session_ = std::move(s);
  shown_ctx_ = shown_step_ = -1;
  shown_mode_ = -1;
  set_text(QString());
  title_->clear();
  asm_box_->hide();
  fill(asm_, asm_fill_, QString());
  asm_title_->clear();
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
void CodeView::fill(QPlainTextEdit* edit, Fill& f, const QString& text, std::function<void()> done) {
  constexpr qsizetype kChunk = 12000;
  uint64_t gen = ++f.gen;
  f.filling = false;
  qsizetype cut = text.size() <= kChunk ? text.size() : text.indexOf('\n', kChunk);
  if (cut < 0) cut = text.size();
  edit->setPlainText(text.left(cut));
  if (cut >= text.size()) {
    if (done) done();
    return;
  }
  f.filling = true;
  auto rest = std::make_shared<QString>(text.mid(cut + 1));  // after the newline the next paragraph replaces
  auto step = std::make_shared<std::function<void(qsizetype)>>();
  Fill* fp = &f;
  *step = [this, edit, fp, gen, rest, step, done](qsizetype from) {
    if (gen != fp->gen) {
      *step = nullptr;
      return;
    }
    qsizetype end = from + kChunk >= rest->size() ? rest->size() : rest->indexOf('\n', from + kChunk);
    if (end < 0) end = rest->size();
    QScrollBar* v = edit->verticalScrollBar();
    int keep = v->value();
    edit->appendPlainText(rest->mid(from, end - from));  // a new paragraph: the newline at `from - 1`
    v->setValue(keep);
    if (end >= rest->size()) {
      fp->filling = false;
      auto d = done;
      *step = nullptr;  // break the cycle
      if (d) d();
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
  if (prg && m == Source)
    show_machine_code(t, *prg);
  else
    asm_box_->hide(), fill(asm_, asm_fill_, QString()), asm_title_->clear();
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
