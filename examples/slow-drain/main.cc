// slow-drain: each "/" request takes --delay (default 3s). At SIGTERM it closes its listener and
// waits for its requests to finish, which takes longer than a short grace period: SIGKILL cuts
// them (grace-overrun).
#include "linger/fault_server.h"

int main(int argc, char** argv) {
  zerodrop::examples::MisbehaviourOptions defaults;
  defaults.on_term = zerodrop::examples::OnTerm::drain;
  defaults.delay = std::chrono::seconds(3);
  return zerodrop::examples::misbehaving_main(argc, argv, defaults);
}
