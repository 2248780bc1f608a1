#include "watch/lease.h"

#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::watch {

using Json = nlohmann::json;

LeaseStep decide(const std::optional<LeaseRecord>& current, const std::string& me, SystemTime now) {
  if (!current) {
    return LeaseStep::create;
  }
  if (current->holder == me) {
    return LeaseStep::renew;
  }
  if (current->holder.empty() || !current->renewed
      || *current->renewed + std::chrono::seconds(current->duration_s) < now) {
    return LeaseStep::take_over;
  }
  return LeaseStep::follow;
}

std::string micro_time(SystemTime t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char head[32];
  std::strftime(head, sizeof head, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:06}Z", head, us % 1000000);
}

std::optional<SystemTime> parse_time(std::string_view text) {
  std::tm tm{};
  std::string s(text);
  const char* rest = ::strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) {
    return std::nullopt;
  }
  int64_t micros = 0;
  if (*rest == '.') {
    ++rest;
    int digits = 0;
    while (*rest >= '0' && *rest <= '9') {
      if (digits < 6) {
        micros = micros * 10 + (*rest - '0');
      }
      ++digits;
      ++rest;
    }
    for (; digits < 6; ++digits) {
      micros *= 10;
    }
  }
  int64_t offset_s = 0;
  if (*rest == '+' || *rest == '-') {
    int h = 0, m = 0;
    if (std::sscanf(rest + 1, "%2d:%2d", &h, &m) != 2) {
      return std::nullopt;
    }
    offset_s = (*rest == '+' ? 1 : -1) * (h * 3600 + m * 60);
  } else if (*rest != 'Z' && *rest != 'z') {
    return std::nullopt;
  }
  std::time_t t = ::timegm(&tm) - offset_s;
  return SystemTime(std::chrono::seconds(t)) + std::chrono::microseconds(micros);
}

LeaseRecord read_lease(const Json& lease) {
  LeaseRecord r;
  const Json spec = lease.value("spec", Json::object());
  r.holder = spec.value("holderIdentity", "");
  r.duration_s = spec.value("leaseDurationSeconds", 15);
  r.transitions = spec.value("leaseTransitions", 0);
  if (spec.contains("acquireTime") && spec["acquireTime"].is_string()) {
    r.acquired = parse_time(spec["acquireTime"].get<std::string>());
  }
  if (spec.contains("renewTime") && spec["renewTime"].is_string()) {
    r.renewed = parse_time(spec["renewTime"].get<std::string>());
  }
  r.resource_version = lease.value("metadata", Json::object()).value("resourceVersion", "");
  return r;
}

std::optional<PodOwner> own_pod(const std::string& namespace_name) {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v == nullptr ? "" : v);
  };
  PodOwner owner{env("POD_NAME"), env("POD_UID")};
  if (owner.name.empty() || owner.uid.empty() || env("POD_NAMESPACE") != namespace_name) {
    return std::nullopt;
  }
  return owner;
}

Json lease_object(const std::string& namespace_name, const std::string& name, const LeaseRecord& r,
                  const std::optional<PodOwner>& owner) {
  Json meta = {{"name", name}, {"namespace", namespace_name}};
  if (owner) {
    meta["ownerReferences"] = Json::array(
        {{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", owner->name}, {"uid", owner->uid}}});
  }
  if (!r.resource_version.empty()) {
    meta["resourceVersion"] = r.resource_version;
  }
  Json spec = {{"holderIdentity", r.holder},
               {"leaseDurationSeconds", r.duration_s},
               {"leaseTransitions", r.transitions}};
  if (r.acquired) {
    spec["acquireTime"] = micro_time(*r.acquired);
  }
  if (r.renewed) {
    spec["renewTime"] = micro_time(*r.renewed);
  }
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", meta},
          {"spec", spec}};
}

bool Elector::tick(SystemTime now) {
  std::string dir =
      fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases", o_.namespace_name);
  verify::ApiResponse got = client_.get(dir + "/" + o_.name);
  std::optional<LeaseRecord> current;
  if (got.ok()) {
    current = read_lease(Json::parse(got.body, nullptr, false));
  } else if (got.status != 404) {
    throw Error(fmt::format("cannot get lease {} in namespace {}: {}", o_.name, o_.namespace_name,
                            verify::error_text(got)));
  }
  LeaseStep step = decide(current, o_.identity, now);
  holder_ = current ? current->holder : "";
  if (step == LeaseStep::follow) {
    leading_ = false;
    return false;
  }
  LeaseRecord next = current.value_or(LeaseRecord{});
  next.duration_s =
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(o_.lease_duration).count());
  next.renewed = now;
  if (step != LeaseStep::renew) {
    next.acquired = now;
    next.transitions += step == LeaseStep::take_over ? 1 : 0;
    next.holder = o_.identity;
  }
  verify::ApiResponse put =
      step == LeaseStep::create
          ? client_.request(verify::Method::post, dir,
                            lease_object(o_.namespace_name, o_.name, next, o_.owner).dump())
          : client_.request(verify::Method::put, dir + "/" + o_.name,
                            lease_object(o_.namespace_name, o_.name, next, o_.owner).dump());
  if (put.ok()) {
    leading_ = true;
    holder_ = o_.identity;
    last_renewed_ = std::chrono::steady_clock::now();
    return true;
  }
  if (put.status != 409) {
    throw Error(fmt::format("cannot {} lease {} in namespace {}: {}",
                            step == LeaseStep::create ? "create" : "update", o_.name,
                            o_.namespace_name, verify::error_text(put)));
  }
  // Someone else wrote it first: lead on only while our last renewal is within the deadline.
  leading_ = leading_ && last_renewed_
             && std::chrono::steady_clock::now() - *last_renewed_ < o_.renew_deadline;
  return leading_;
}

}  // namespace zerodrop::watch
