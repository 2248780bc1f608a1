#pragma once
// What counts as traffic: Prometheus scraping a metrics port is not a client's request, and a
// workload that must run as one pod (a leader-elected controller, a single-instance datastore)
// is not under-replicated.

#include <span>
#include <string>

#include "kube/object.h"

namespace zerodrop::audit {

// Whether `monitor` scrapes Service `s` (label selector and namespace selector).
bool monitors(const kube::ServiceMonitor& monitor, const kube::Service& s);

// Why port `port` of Service `s` carries only Prometheus scrapes to the pods of `w`, or "" when
// it may carry client traffic. Evidence: a metrics port name (on the Service or the target), a
// Service named *-metrics*, the prometheus.io/scrape annotation (its prometheus.io/port, else
// every port), a ServiceMonitor in `scrapers` naming the port, or the port the container's
// --metrics-bind-address (or alike) flag listens on.
std::string scrape_port(const kube::Service& s, const kube::ServicePort& port,
                        const kube::Workload& w,
                        std::span<const kube::ServiceMonitor* const> scrapers);

// Why every port of `s` carries only scrapes to `w` (the first port's reason), or "".
std::string scrape_only(const kube::Service& s, const kube::Workload& w,
                        std::span<const kube::ServiceMonitor* const> scrapers);

// Why `w` must run as one pod, so that more replicas are no fix: "it is leader-elected
// (--leader-elect)", "image postgres:16 is a single-instance datastore", …; "" otherwise.
// Only asked of workloads that run one pod (`replica_floor` <= 1).
std::string runs_alone(const kube::Workload& w, int64_t replica_floor);

}  // namespace zerodrop::audit
