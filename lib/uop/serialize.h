// A compact, exact text encoding of args and UOp graphs. Shared with tests/parity/uop_codec.py (goldens taken from
// the reference) and used by the trace writer to store args losslessly.
//   arg:   N None | i<int> | f<16 hex: double bits> | T/F | I Invalid | s<len>:<bytes> | d<dtype attr>' ' |
//          o<OPS>' ' | a<AxisType>' ' | A<AddrSpace>' ' | (a,b,...) | P(slot,dtype,vmin_vmax,multiple_of,name,addrspace,axis,device,volatile) |
//          K(name,axis_types,dont_use_locals,applied_opts,opts_to_apply,estimates,beam) KernelInfo |
//          B(device,addrspace,removable) BufferizeOpts | C(name,precompile,precompile_backward) CallInfo
//   graph: one node per line in toposort order: "<OP> <dtype attr> <arg> <tag> <src indices, comma separated>"
#pragma once
#include <string>
#include <vector>

#include "lib/uop/uop.h"

namespace tg {

std::string encode_arg(const Arg& a);
Arg decode_arg(const std::string& s);  // throws tg::Error on malformed input
std::vector<std::string> encode_graph(const UOp& root);
UOp decode_graph(const std::vector<std::string>& lines);
// one encoded node line whose src indices refer to `nodes` (a pool the caller grows)
UOp decode_node(const std::string& line, const std::vector<UOp>& nodes);

}  // namespace tg
