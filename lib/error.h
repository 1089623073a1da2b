// tg::Error: the base of every error a user can cause (bad shapes, bad env values, an unreadable trace). Its own
// header, so code that does not link the engine (the trace reader, tinyviz) can derive from it.
#pragma once
#include <stdexcept>

namespace tg {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tg
