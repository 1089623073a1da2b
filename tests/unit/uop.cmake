# the IR and the rewrite engine (lib/dtype, lib/uop): dtypes, UPat/PatternMatcher, graph_rewrite, UOp properties,
# the direct assertions of test_uop_symbolic.py
tg_test(test_dtype LABEL unit FAST SOURCES test_dtype.cpp LIBS tg_backend_interp)
tg_test(test_pattern_matcher LABEL unit FAST SOURCES test_pattern_matcher.cpp)
tg_test(test_graph_rewrite LABEL unit FAST SOURCES test_graph_rewrite.cpp test_rewrite_bottom_up_gate.cpp)
tg_test(test_uop LABEL unit FAST SOURCES test_uop_vmin_vmax.cpp test_uop_resolve.cpp test_uop_core.cpp test_helpers.cpp)
tg_test(test_uop_symbolic LABEL unit FAST SOURCES test_uop_symbolic.cpp)
