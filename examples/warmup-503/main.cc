// warmup-503: listens at once but answers 503 (on "/" and "/readyz") for its first --warmup
// (default 3s). A tcpSocket readiness probe passes at once and routes traffic to it too early
// (readiness-lies); an httpGet probe on /readyz keeps it out until it can serve. At SIGTERM it
// drains like close-listener.
#include "naive/example_server.h"

int main(int argc, char** argv) {
  zerodrop::examples::ServerOptions o;
  o.on_sigterm = zerodrop::examples::OnSigterm::drain;
  o.warmup = std::chrono::seconds(3);
  return zerodrop::examples::server_main(argc, argv, o);
}
