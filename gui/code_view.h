// The "Code" tab. A kernel's codegen context (and every step in it) shows the kernel: its rendered source with
// syntax highlighting (C or LLVM IR) and, beside it, the machine code it ran as (the CPU's disassembly, loops marked,
// the innermost one highlighted and scrolled to, a find box), its linearized UOps, launch dims, estimates and
// recorded runs; "Step graphs" shows the selected step's input and output graphs as text, one node per line, sources
// first.
#pragma once
#include <QWidget>
#include <functional>

#include "gui/trace_model.h"

class QPlainTextEdit;
class QLabel;
class QLineEdit;
class QSplitter;
class QTabBar;
class QToolButton;

namespace tv {

class SourceHighlighter;
class AsmHighlighter;

// a duration in the unit a person reads it in: "850 ns", "12.5 µs", "558 ms", "1.25 s"
QString duration_text(double ns);

class CodeView : public QWidget {
  Q_OBJECT
 public:
  enum Mode { Source = 0, Uops = 1, Graphs = 2 };
  explicit CodeView(QWidget* parent = nullptr);
  void set_session(SessionPtr s);
  void set_selection(const Selection& s);  // loads lazily, only while the tab is visible
  void set_mode(Mode m);
  Mode mode() const { return mode_; }
  bool loading() const { return loading_ || text_fill_.filling || asm_fill_.filling; }
  QString title() const;
  QString text() const;
  // the machine-code pane beside the source (Source mode): its text, the line above it (what the code is, or why
  // there is none), whether it is shown
  QString machine_code_text() const;
  QString machine_code_title() const;
  bool machine_code_visible() const;
  // the machine-code pane's cursor to the next innermost loop's head (wrapping), or the next match of `text`; false
  // when there is none
  bool next_loop();
  bool find_in_machine_code(const QString& text);
  int machine_code_cursor_line() const;  // the line (0-based) the pane's cursor is on

 signals:
  void load_failed(QString message);  // a kernel's source or a step's graphs could not be read

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void load();
  // a text inserted in chunks, so a 200 KB text never holds the event loop; `done` runs when all of it is in
  struct Fill {
    uint64_t gen = 0;
    bool filling = false;
  };
  void fill(QPlainTextEdit* edit, Fill& f, const QString& text, std::function<void()> done = {});
  void set_text(const QString& text) { fill(text_, text_fill_, text); }
  void show_machine_code(const tg::viz::Trace& t, const tg::viz::ProgramRow& p);
  void scroll_to_first_loop();
  SessionPtr session_;
  Selection sel_;
  Mode mode_ = Source;
  int64_t shown_ctx_ = -1, shown_step_ = -1;
  int shown_mode_ = -1;
  uint64_t gen_ = 0;
  bool loading_ = false;
  Fill text_fill_, asm_fill_;
  QLabel* title_;
  QTabBar* modes_;
  QSplitter* split_;
  QPlainTextEdit* text_;
  SourceHighlighter* hl_;
  QWidget* asm_box_;
  QLabel* asm_title_;
  QLineEdit* asm_find_;
  QToolButton* asm_next_loop_;
  QPlainTextEdit* asm_;
  AsmHighlighter* asm_hl_;
};

}  // namespace tv
