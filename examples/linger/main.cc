// linger: keeps serving for --linger (default 3s) after SIGTERM, keep-alive connections included,
// then exits without ever answering `Connection: close`. Clients holding keep-alive connections
// through routers that already dropped the pod keep sending on them until they break:
// keepalive-stale.
#include "naive/example_server.h"

int main(int argc, char** argv) {
  zerodrop::examples::ServerOptions o;
  o.on_sigterm = zerodrop::examples::OnSigterm::linger;
  o.linger = std::chrono::seconds(3);
  return zerodrop::examples::server_main(argc, argv, o);
}
