// Builds what the graph view draws for frame k of a step (see frame_graph.h) from the trace and its step replay.
// Runs on a worker thread inside TraceSession::with_frames.
#pragma once
#include <string>

#include "gui/frame_graph.h"
#include "gui/trace_session.h"

namespace tv {

// throws tg::viz::TraceError (unknown step or frame, truncated trace)
FrameGraphPtr build_frame(TraceSession::Frames& fr, int64_t step, size_t frame, const FrameOptions& opt);

// the step's input and output graphs as text, one node per line in source-before-user order (the Code tab)
std::string step_graph_text(TraceSession::Frames& fr, int64_t step);

}  // namespace tv
