// What an adapter's one-time setup gives back: the thing it made, or the one line saying why not
// and whose it is to fix (the user's: exit 2; else a resource failure: every attempt setup/9).
#pragma once

#include <memory>
#include <string>

namespace contract {

template <class T>
struct Made {
  std::unique_ptr<T> config;
  std::string error;
  bool config_error = false;
  bool lacking = false;  // with config_error: a value the library cannot honour (exit 89), not bad usage

  static Made failed(std::string why, bool user_to_fix) {
    Made m;
    m.error = std::move(why);
    m.config_error = user_to_fix;
    return m;
  }
  static Made of(std::unique_ptr<T> made) {
    Made m;
    m.config = std::move(made);
    return m;
  }
};

}  // namespace contract
