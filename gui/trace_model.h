// The navigation tree: contexts -> steps (graph_rewrite calls, nested by their parent step) -> matches. Contexts
// and steps are built when a trace is opened; the matches of a step are read when it is expanded or selected
// (canFetchMore/fetchMore), so a trace with 10^5 steps and 10^6 matches opens fast.
// TraceFilter is the search box: contexts and steps by name or call site, matches by rule file:line or text.
#pragma once
#include <QAbstractItemModel>
#include <QSortFilterProxyModel>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gui/trace_session.h"

namespace tv {

// what is selected: a context, a step (frame 0 = its input graph), or the frame after match `frame` (1-based)
struct Selection {
  int64_t context = 0, step = 0;
  size_t frame = 0;
  bool operator==(const Selection&) const = default;
};

class TraceModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  // Group: under a step of more than kGroupAbove matches, its matches by rule (expandable), in first-match order
  enum Kind { Context = 1, Step = 2, Match = 3, Group = 4 };
  static constexpr size_t kGroupAbove = 200;
  void set_group_above(size_t n) { group_above_ = n; }  // for steps read from now on
  enum Role { KindRole = Qt::UserRole + 1, ContextRole, StepRole, FrameRole, SearchRole, RuleRole };
  enum Column { NameCol, MatchesCol, TimeCol, NumCols };
  explicit TraceModel(QObject* parent = nullptr);
  void set_session(SessionPtr s);
  const SessionPtr& session() const { return session_; }

  QModelIndex index_of(const Selection& s);  // loads the step's matches when needed; invalid if unknown
  Selection selection_of(const QModelIndex& i) const;
  const std::vector<int64_t>& step_order() const { return step_order_; }  // tree pre-order
  size_t frames_of(int64_t step);                                         // 1 + matches (and rule errors)
  const tg::viz::MatchRow* match(int64_t step, size_t frame);             // frame >= 1

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return NumCols; }
  bool hasChildren(const QModelIndex& parent = {}) const override;
  bool canFetchMore(const QModelIndex& parent) const override;
  void fetchMore(const QModelIndex& parent) override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 signals:
  // a step's matches could not be read (the step then shows none); may come from inside a view's paint
  void load_failed(QString message);

 public:
  // what the search filter reads, without going through QVariant (12,000 steps are filtered per keystroke)
  struct ItemInfo {
    Kind kind;
    int64_t id;  // context id, step id, or match ordinal
    int parent;  // item index, -1 for contexts
  };
  ItemInfo item_info(const QModelIndex& i) const {
    const Item& it = item(i);
    return {it.kind, it.id, it.parent};
  }
  ItemInfo item_info(int item) const { return {items_[item].kind, items_[item].id, items_[item].parent}; }
  // lower-case search text: a context's name, a step's name and call site (as SearchRole), a rule's file:line,
  // matcher and source
  const std::string& hay(int item) const { return *hay_[item]; }
  const std::unordered_map<int64_t, std::string>& rule_hay() const {
    static const std::unordered_map<int64_t, std::string> none;
    return session_ ? session_->rule_hay() : none;
  }
  int64_t match_rule(int item) const;  // the rule of a match item (or a group's)
  int step_item_of(int item) const;    // the step item a match or group item lies under

 private:
  struct Item {
    Kind kind;
    int64_t id;  // context id, step id, or (Match) index into matches_[step]
    int parent;  // item index, -1 for contexts
    int row;
    std::vector<int> children;
    bool fetched = true;
  };
  const Item& item(const QModelIndex& i) const { return items_[i.internalId()]; }
  void load_matches(int item);
  const std::vector<tg::viz::MatchRow>& matches_of(int64_t step);
  SessionPtr session_;
  std::vector<Item> items_;
  std::vector<int> roots_;
  std::unordered_map<int64_t, int> ctx_item_, step_item_;
  std::unordered_map<int64_t, std::vector<tg::viz::MatchRow>> matches_;
  std::unordered_map<int64_t, std::vector<int>> match_items_;
  size_t group_above_ = kGroupAbove;  // step -> the item of each match, by ordinal
  std::unordered_map<int64_t, int64_t> ctx_matches_;
  std::vector<int64_t> step_order_;
  std::vector<const std::string*> hay_;  // per context and step item, into the session (matches: empty)
};

class TraceFilter : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit TraceFilter(QObject* parent = nullptr);
  void set_text(const QString& text);
  // steps holding matches of the rules the text names (found by a background query)
  void set_rule_hits(const QString& text, std::unordered_set<int64_t> steps, std::unordered_set<int64_t> rules);
  const QString& text() const { return text_; }

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

 private:
  void match_rules();
  QString text_;
  std::string needle_;                              // text_ as UTF-8
  std::unordered_set<int64_t> rule_steps_, rules_;  // from the background rule query
  std::unordered_set<int64_t> text_rules_;          // rules whose own text contains the needle
};

}  // namespace tv
