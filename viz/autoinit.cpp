// Linked into every program that links tg::viz: lets VIZ=-1 / TRACK_MATCH_STATS=2 record a trace without any code.
#include "viz/trace_writer.h"

namespace {
const bool registered = (tg::viz::install_trace_writer_factory(), true);
}
