// How the graph looks: node colours by op (tinygrad's VIZ palette, reference tinygrad-viz.md §3.4), the rewrite-diff
// mark colours, and the label font and box metrics (usable from worker threads).
#pragma once
#include <QColor>
#include <QFont>
#include <QSizeF>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

QColor op_color(std::string_view op);  // fill colour of a node with this op name
bool is_alu_op(std::string_view op);
bool is_movement_op(std::string_view op);

namespace mark {
inline const QColor added{0x3a, 0xc5, 0x6d};    // green: new in this frame
inline const QColor changed{0xf0, 0xa0, 0x30};  // amber: rebuilt in place of an old node
inline const QColor removed{0xe0, 0x50, 0x50};  // red: gone since the previous frame (ghost)
inline const QColor match_box{0x7a, 0xa2, 0xf7};
inline const QColor differs{0xe0, 0x5c, 0xe8};  // magenta: where two compared traces' frames start to differ
inline const QColor sources{0x5f, 0xb3, 0xff};  // highlight: the selected node's sources
inline const QColor users{0xff, 0x9e, 0x5f};    // highlight: the selected node's users
inline const QColor canvas{0x1a, 0x1b, 0x26};
inline const QColor edge{0x8a, 0x90, 0xa8};
}  // namespace mark

QFont graph_font(bool bold = false);
constexpr double kNodePadX = 8, kNodePadY = 4;
QSizeF label_size(const std::vector<std::string>& lines);  // box for these label lines (line 0 bold)

}  // namespace tv
