#include "lab/pods/not_ready.h"

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

using record::EventKind;

record::Event event(EventKind kind, const std::string& pod, const std::string& detail = "") {
  record::Event e;
  e.kind = kind;
  e.pod = pod;
  e.detail = detail;
  return e;
}

std::string log_of(const std::string& pod) {
  return "/run/pods/" + pod + ".log";
}

TEST(NotReady, CrashingPodsNameTheirExitAndRestartsOnce) {
  std::vector<record::Event> events;
  for (const char* pod : {"pod-1", "pod-2"}) {
    events.push_back(event(EventKind::pod_created, pod, "127.20.0.1:4000 revision 1"));
    for (int i = 0; i < 3; ++i) {
      events.push_back(event(EventKind::pod_started, pod, "pid 1"));
      events.push_back(event(EventKind::pod_exited, pod, "exit code 1"));
    }
  }
  EXPECT_EQ(why_not_ready(events, parse_probe("tcp", "--readiness"), log_of),
            "pod pod-1 exited with exit code 1, restarted 2 times (pod-2 likewise); log "
            "/run/pods/pod-1.log");
}

TEST(NotReady, NothingListeningNamesTheAddress) {
  std::vector<record::Event> events = {
      event(EventKind::pod_created, "pod-1", "127.20.0.1:4000 revision 1"),
      event(EventKind::pod_started, "pod-1", "pid 1"),
      event(EventKind::probe_failed, "pod-1", "readiness: Connection refused"),
  };
  EXPECT_EQ(why_not_ready(events, parse_probe("tcp", "--readiness"), log_of),
            "pod pod-1 is running, but nothing listens on 127.20.0.1:4000 (readiness tcp: "
            "Connection refused); log /run/pods/pod-1.log");
}

TEST(NotReady, AnExecProbeThatCannotRunNamesItsErrorAndTheFlag) {
  std::vector<record::Event> events = {
      event(EventKind::pod_created, "pod-1", "127.20.0.1:4000 revision 1"),
      event(EventKind::pod_started, "pod-1", "pid 1"),
      event(EventKind::probe_failed, "pod-1", "readiness: cannot run 'podcli': not found in PATH"),
      event(EventKind::pod_created, "pod-2", "127.20.0.2:4000 revision 1"),
      event(EventKind::pod_started, "pod-2", "pid 2"),
      event(EventKind::pod_ready, "pod-2"),
  };
  EXPECT_EQ(why_not_ready(events, parse_probe("exec:'podcli check'", "--readiness"), log_of),
            "pod pod-1 is running, but its readiness probe exec 'podcli check' fails: cannot "
            "run 'podcli': not found in PATH (--readiness replaces the probe); log "
            "/run/pods/pod-1.log");
}

}  // namespace
}  // namespace zerodrop::lab
