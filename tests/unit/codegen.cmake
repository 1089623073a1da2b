# per-kernel codegen (lib/codegen): transcribed unit tests (gpudims, transcendental helpers, linearizer tests on the
# reference's ASTs, opt checks); again with SPEC=2 (every UOp created is type-checked)
tg_test(test_codegen LABEL unit SOURCES test_codegen.cpp LIBS tg_backend_interp)
tg_rerun(codegen_unit_spec2 test_codegen unit SPEC=2)
