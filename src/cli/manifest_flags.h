#pragma once
// What zerodrop lab and zerodrop sim share for the flags a manifest (-f) also sets: a flag given on
// the command line overrides the manifest; one not given leaves the manifest's value, or the
// default, in place.
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace zerodrop {
class IntOrPercent;
}  // namespace zerodrop

namespace zerodrop::cli {

// Whether `flag` was given on the command line.
bool flag_given(const CLI::App& app, const char* flag);

// --max-surge and --max-unavailable (their text in `max_surge` and `max_unavailable`), each where
// given, over `surge` and `unavailable`. Both resolving to zero is refused naming the two flags:
// a manifest's own both-zero is refused where it is read, with its file:line.
void apply_rollout_limit_flags(const CLI::App& app, const std::string& max_surge,
                               const std::string& max_unavailable, IntOrPercent& surge,
                               IntOrPercent& unavailable);

}  // namespace zerodrop::cli
