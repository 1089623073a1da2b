// The "Stats" tab: pattern statistics (TRACK_MATCH_STATS) per rule for the whole trace, the selected context or the
// selected step, sortable and filterable, with a quick filter for rules that were attempted and never matched.
// Selecting a rule lists every match of it across the trace; double-clicking one jumps to that match's frame.
// Queries run on a worker (a whole-trace aggregate over 10^6 rows takes a while).
#pragma once
#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QWidget>

#include "gui/trace_model.h"
#include "viz/reader/diff.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSplitter;
class QTableView;

namespace tv {

class StatsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Col { Site, Matcher, Matches, Attempts, EarlyRejects, Candidates, Rate, ExclMs, InclMs, Source, NumCols };
  enum { SortRole = Qt::UserRole + 1, RuleIdRole };
  using QAbstractTableModel::QAbstractTableModel;
  void set_rows(SessionPtr s, std::vector<tg::viz::RuleStatRow> rows);
  const std::vector<tg::viz::RuleStatRow>& rows() const { return rows_; }
  int rowCount(const QModelIndex& p = {}) const override { return p.isValid() ? 0 : (int)rows_.size(); }
  int columnCount(const QModelIndex& p = {}) const override { return p.isValid() ? 0 : NumCols; }
  QVariant data(const QModelIndex& i, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  SessionPtr session_;
  std::vector<tg::viz::RuleStatRow> rows_;
};

class RuleMatchesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Col { Step, StepName, Context, MatchNo, Dur, Change, NumCols };
  using QAbstractTableModel::QAbstractTableModel;
  void set_rows(SessionPtr s, std::vector<tg::viz::MatchRow> rows);
  const std::vector<tg::viz::MatchRow>& rows() const { return rows_; }
  int rowCount(const QModelIndex& p = {}) const override { return p.isValid() ? 0 : (int)rows_.size(); }
  int columnCount(const QModelIndex& p = {}) const override { return p.isValid() ? 0 : NumCols; }
  QVariant data(const QModelIndex& i, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  SessionPtr session_;
  std::vector<tg::viz::MatchRow> rows_;
};

class StatsView : public QWidget {
  Q_OBJECT
 public:
  enum Scope { WholeTrace, ThisContext, ThisStep };
  explicit StatsView(QWidget* parent = nullptr);
  void set_session(SessionPtr s);
  void set_selection(const Selection& s);  // the context/step scopes follow the selection
  void set_scope(Scope s);
  void show_rule(int64_t rule);    // list every match of it
  int64_t shown_rule() const { return shown_rule_; }
  void select_rule(int64_t rule);  // select its row (once loaded) and list its matches
  // a comparison's per-rule match-count deltas (the rules whose counts differ between the two traces) in a table
  // under the statistics; null hides it
  void set_compare(const tg::viz::TraceDiff* d);
  QTableView* delta_table() const { return delta_table_; }
  bool loading() const { return pending_ > 0; }
  StatsModel* model() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  RuleMatchesModel* rule_matches() const { return matches_; }
  QTableView* table() const { return table_; }
  QTableView* match_table() const { return match_table_; }
  QSplitter* splitter() const { return split_; }

 signals:
  void jump(tv::Selection s);
  void rule_shown(qlonglong rule);  // a rule was selected: its matches are listed
  void load_failed(QString message);  // statistics or a rule's matches could not be read

 private:
  void reload();
  void refilter();
  SessionPtr session_;
  Selection sel_;
  Scope scope_ = WholeTrace;
  uint64_t gen_ = 0, rule_gen_ = 0;
  int pending_ = 0;
  int64_t shown_ctx_ = -1, shown_step_ = -1;
  int64_t want_rule_ = 0;
  int64_t shown_rule_ = 0;  // select_rule before the rows arrived
  StatsModel* model_;
  QSortFilterProxyModel* proxy_;
  RuleMatchesModel* matches_;
  QComboBox* scope_box_;
  QLineEdit* filter_;
  QCheckBox* unmatched_;
  QLabel* summary_;
  QLabel* rule_label_;
  QTableView* table_;
  QTableView* match_table_;
  QWidget* delta_box_;
  QLabel* delta_label_;
  QTableView* delta_table_;
  QSplitter* split_;
};

}  // namespace tv
