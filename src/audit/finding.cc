#include "audit/finding.h"

#include "audit/rule.h"
#include "audit/rules.h"

namespace zerodrop::audit {

Finding make_finding(std::string_view rule, const kube::Workload& w, const kube::Container* c,
                     kube::Mark mark, std::string message, std::string fix) {
  const RuleInfo* info = find_rule(rule);
  // Rules pass ids from rule_id, all of which are in the catalogue.
  Finding f;
  f.rule = info ? info->id : rule;
  f.hole = info ? info->hole : std::nullopt;
  f.severity = info ? info->severity : Severity::error;
  f.object = ObjectRef{w.meta.kind, w.meta.namespace_name, w.meta.name, c ? c->name : ""};
  f.file = w.meta.file;
  f.mark = mark.line != 0 ? mark : w.meta.marks.self;
  f.message = std::move(message);
  f.fix = std::move(fix);
  return f;
}

}  // namespace zerodrop::audit
