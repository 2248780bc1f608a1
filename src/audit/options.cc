#include "audit/options.h"

#include <fmt/format.h>

#include "base/error.h"
#include "base/parse.h"
#include "base/text.h"

namespace zerodrop::audit {

KubeVersion parse_kube_version(std::string_view text, std::string_view what) {
  std::string_view v = trim(text);
  if (v.starts_with('v')) {
    v.remove_prefix(1);
  }
  auto parts = split(v, '.');
  if (parts.size() < 2 || parts.size() > 3) {
    throw Error(fmt::format("{}: expected a Kubernetes version like 1.30, got '{}'", what, text));
  }
  KubeVersion out;
  out.major = static_cast<int>(parse_integer(parts[0], what, 1, 9));
  out.minor = static_cast<int>(parse_integer(parts[1], what, 0, 999));
  return out;
}

}  // namespace zerodrop::audit
