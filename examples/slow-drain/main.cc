// slow-drain: each "/" request takes --delay (default 3s). At SIGTERM it closes its listener and
// waits for its requests to finish, which takes longer than a short grace period: SIGKILL cuts
// them (grace-overrun).
#include "naive/example_server.h"

int main(int argc, char** argv) {
  zerodrop::examples::ServerOptions o;
  o.on_sigterm = zerodrop::examples::OnSigterm::drain;
  o.delay = std::chrono::seconds(3);
  return zerodrop::examples::server_main(argc, argv, o);
}
