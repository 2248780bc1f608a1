#include "kube/workload.h"

#include "kube/object.h"

namespace zerodrop::kube {

std::optional<int> Container::resolve(const PortRef& port) const {
  if (!port.named()) {
    return port.number;
  }
  for (const ContainerPort& p : ports) {
    if (p.name == port.name) {
      return p.container_port;
    }
  }
  return std::nullopt;
}

const Meta& meta_of(const Object& object) {
  return std::visit([](const auto& o) -> const Meta& { return o.meta; }, object);
}

}  // namespace zerodrop::kube
