#include "verify/measurement.h"

#include <utility>

#include "verify/propagation.h"

namespace zerodrop::verify {

record::RunRecord close_measurement(Timeline& timeline, record::RunRecord head,
                                    const record::RunFolder& folder) {
  head.end = timeline.now();
  record::RunRecord run = timeline.finish(std::move(head));
  write_propagation(folder, timeline.updates(), timeline.wall_start_us());
  return run;
}

}  // namespace zerodrop::verify
