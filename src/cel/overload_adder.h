// How the library files' register_* functions append their overloads: one call
// a row, in the order of cel-go's declarations, so that a table reads as a list
// of declarations rather than of Overload initializers.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cel/functions.h"

namespace draplane::cel::lib {

class OverloadAdder {
 public:
  // `size_cost` is what a row that does not say gets: the strings and lists
  // extensions charge every overload by the size it traverses, the other
  // libraries only the overloads that say so (Overload::size_cost).
  explicit OverloadAdder(std::vector<Overload>& out, bool size_cost = false) : out_(out), size_cost_(size_cost) {}

  void operator()(std::string id, std::string fn, bool member, std::vector<Type> params, Type result,
                  FnImpl impl) const {
    (*this)(std::move(id), std::move(fn), member, std::move(params), std::move(result), impl, size_cost_);
  }
  void operator()(std::string id, std::string fn, bool member, std::vector<Type> params, Type result, FnImpl impl,
                  bool size_cost) const {
    out_.push_back(Overload{std::move(id), std::move(fn), member, std::move(params), std::move(result), impl, size_cost});
  }

 private:
  std::vector<Overload>& out_;
  bool size_cost_;
};

}  // namespace draplane::cel::lib
