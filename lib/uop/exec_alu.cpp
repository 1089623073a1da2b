// The python scalar ALU of uop/ops.py (python_alu, exec_alu with truncation): const folding evaluates ops on python
// numbers with it.
#include <cmath>
#include <limits>

#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg {

static PyConst py_floordiv_c(const PyConst& x, const PyConst& y) {
  if (!x.is_float() && !y.is_float()) return PyConst(floordiv(x.as_int(), y.as_int()));
  double a = x.as_float(), b = y.as_float();
  if (b == 0) return PyConst(0);
  return PyConst(std::floor(a / b));
}

PyConst exec_alu(Ops op, DType dtype, std::span<const PyConst> v, bool truncate_output) {
  if (GroupOp::Binary.has(op))
    for (const PyConst& x : v)
      if (x.is_invalid()) return PyConst::invalid();
  using K = PyConst::Kind;
  auto isf = [](const PyConst& c) { return c.is_float(); };
  auto wrap = [](unsigned __int128 u) { return PyConst((pyint)u); };
  PyConst r;
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case Ops::LOG2: {
      double x = v[0].as_float();
      r = PyConst(x > 0 ? std::log2(x) : x == 0 ? -inf : std::nan(""));
      break;
    }
    case Ops::EXP2:
      r = PyConst(std::exp2(v[0].as_float()));
      break;
    case Ops::SQRT: {
      double x = v[0].as_float();
      r = PyConst(x >= 0 ? std::sqrt(x) : std::nan(""));
      break;
    }
    case Ops::RECIPROCAL: {
      double x = v[0].as_float();
      r = PyConst(x != 0 ? 1.0 / x : std::copysign(inf, x));
      break;
    }
    case Ops::SIN: {
      double x = v[0].as_float();
      r = PyConst(std::isinf(x) ? std::nan("") : std::sin(x));
      break;
    }
    case Ops::POW: {
      if (!isf(v[0]) && !isf(v[1]) && v[1].as_int() >= 0) {
        pyint b = v[0].as_int(), e = v[1].as_int(), acc = 1;
        for (pyint i = 0; i < e && i < 200; i++) acc = sat_mul(acc, b);
        r = PyConst(acc);
      } else {
        double x = v[0].as_float(), y = v[1].as_float();
        if (x == 0 && y < 0)
          r = PyConst(inf);
        else {
          double p = std::pow(x, y);
          r = PyConst(x < 0 && std::trunc(y) != y ? std::nan("") : p);
        }
      }
      break;
    }
    case Ops::TRUNC:
      r = isf(v[0]) ? (std::isfinite(v[0].f) ? PyConst(v[0].as_int()) : v[0]) : PyConst(v[0].as_int());
      break;
    case Ops::NEG:
      r = v[0].is_float() ? PyConst(-v[0].f) : wrap(-(unsigned __int128)v[0].as_int());
      break;
    case Ops::ADD:
      r = (isf(v[0]) || isf(v[1])) ? PyConst(v[0].as_float() + v[1].as_float())
                                   : wrap((unsigned __int128)v[0].as_int() + (unsigned __int128)v[1].as_int());
      break;
    case Ops::SUB:
      r = (isf(v[0]) || isf(v[1])) ? PyConst(v[0].as_float() - v[1].as_float())
                                   : wrap((unsigned __int128)v[0].as_int() - (unsigned __int128)v[1].as_int());
      break;
    case Ops::MUL:
      r = (isf(v[0]) || isf(v[1])) ? PyConst(v[0].as_float() * v[1].as_float())
                                   : wrap((unsigned __int128)v[0].as_int() * (unsigned __int128)v[1].as_int());
      break;
    case Ops::CMPNE:
      r = PyConst(v[0] != v[1]);
      break;
    case Ops::CMPEQ:
      r = PyConst(v[0] == v[1]);
      break;
    case Ops::CMPLT:
      r = PyConst(py_lt(v[0], v[1]));
      break;
    case Ops::XOR:
    case Ops::OR:
    case Ops::AND: {
      if (v[0].kind == K::Bool && v[1].kind == K::Bool) {
        bool a = v[0].b, b = v[1].b;
        r = PyConst(op == Ops::XOR ? (a != b) : op == Ops::OR ? (a || b) : (a && b));
      } else {
        pyint a = v[0].as_int(), b = v[1].as_int();
        r = PyConst(op == Ops::XOR ? (a ^ b) : op == Ops::OR ? (a | b) : (a & b));
      }
      break;
    }
    case Ops::SHR: {
      pyint a = v[0].as_int(), s = v[1].as_int();
      r = PyConst(s >= 127 ? (a < 0 ? -1 : 0) : (a >> s));
      break;
    }
    case Ops::SHL: {
      pyint a = v[0].as_int(), s = v[1].as_int();
      r = s >= 128 ? PyConst(0) : wrap((unsigned __int128)a << s);
      break;
    }
    case Ops::MAX:
      r = py_lt(v[0], v[1]) ? v[1] : v[0];
      break;
    case Ops::CMOD:
      if (isf(v[0]) || isf(v[1])) {
        double a = v[0].as_float(), b = v[1].as_float();
        r = PyConst(b == 0 ? 0.0 : a - std::trunc(a / b) * b);
      } else
        r = PyConst(cmod(v[0].as_int(), v[1].as_int()));
      break;
    case Ops::CDIV:
      if (isf(v[0]) || isf(v[1])) {
        double a = v[0].as_float(), b = v[1].as_float();
        r = PyConst(b == 0 ? 0.0 : std::floor(std::fabs(a) / std::fabs(b)) * ((a * b < 0) ? -1 : 1));
      } else
        r = PyConst(cdiv(v[0].as_int(), v[1].as_int()));
      break;
    case Ops::FLOORDIV:
      r = py_floordiv_c(v[0], v[1]);
      break;
    case Ops::FLOORMOD:
      if (isf(v[0]) || isf(v[1])) {
        double a = v[0].as_float(), b = v[1].as_float();
        r = PyConst(b == 0 ? a : a - std::floor(a / b) * b);
      } else
        r = PyConst(floormod(v[0].as_int(), v[1].as_int()));
      break;
    case Ops::MULACC:
      r = py_add(py_mul(v[0], v[1]), v[2]);
      break;
    case Ops::WHERE:
      r = v[0].truthy() ? v[1] : v[2];
      break;
    default:
      throw Error(std::string("no python ALU for ") + op_repr(op));
  }
  if (truncate_output && has_truncate(dtype)) return truncate(dtype, r);
  return r;
}

}  // namespace tg
