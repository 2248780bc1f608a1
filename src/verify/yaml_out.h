#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace zerodrop::verify {

// `object` as a block-style YAML document, as `kubectl create --dry-run=client -o yaml` prints
// one: keys in the object's order, strings that YAML would read as another type (numbers,
// booleans, null, empty) quoted. Written by LibYAML's emitter.
std::string to_yaml(const nlohmann::json& object);

}  // namespace zerodrop::verify
