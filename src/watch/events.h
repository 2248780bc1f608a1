#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "verify/api_client.h"
#include "watch/verdict.h"

namespace zerodrop::watch {

// The core/v1 Event on a workload (`object`: the workload as last seen, for its uid): reason,
// message and type from `text`, source and reportingComponent zerodrop-watch, the times now.
nlohmann::json event_object(const nlohmann::json& object, const WorkloadKey& key,
                            const EventText& text, const std::string& now_rfc3339);

// POSTs it into the workload's namespace. Returns "" or the API's one-line reason.
std::string post_event(const verify::ApiClient& client, const nlohmann::json& event);

}  // namespace zerodrop::watch
