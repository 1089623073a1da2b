// The message of the tg::Error a call throws ("" when it throws none): tests of the errors a user can cause.
#pragma once
#include <functional>
#include <string>

#include "lib/helpers.h"

namespace tg::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace tg::test
