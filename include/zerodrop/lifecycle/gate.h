#pragma once

#include <cassert>
#include <cstddef>

namespace zerodrop::lifecycle {

// Counts in-flight work (a Seastar-style gate): try_enter() admits work until close(); leave()
// ends it. Not thread-safe on its own: Shutdown guards its gate with its mutex.
class Gate {
public:
  // Admits one unit of work; false once the gate is closed.
  bool try_enter() {
    if (closed_) {
      return false;
    }
    ++count_;
    return true;
  }

  // Ends one unit of work admitted by try_enter(); returns true when none is left.
  bool leave() {
    assert(count_ > 0 && "leave() without a matching try_enter()");
    --count_;
    return count_ == 0;
  }

  // Refuses further work; work already admitted continues until it leaves.
  void close() { closed_ = true; }

  bool closed() const { return closed_; }

  std::size_t size() const { return count_; }

private:
  std::size_t count_ = 0;
  bool closed_ = false;
};

}  // namespace zerodrop::lifecycle
