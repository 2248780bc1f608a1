// linger: keeps serving for --linger (default 3s) after SIGTERM, keep-alive connections included,
// then exits without ever answering `Connection: close`. Clients holding keep-alive connections
// through routers that already dropped the pod keep sending on them until they break:
// keepalive-stale.
#include "linger/fault_server.h"

int main(int argc, char** argv) {
  zerodrop::examples::MisbehaviourOptions defaults;
  defaults.on_term = zerodrop::examples::OnTerm::linger;
  defaults.linger = std::chrono::seconds(3);
  return zerodrop::examples::misbehaving_main(argc, argv, defaults);
}
