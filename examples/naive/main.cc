// naive: an HTTP server with no shutdown handling at all. SIGTERM kills it at once (also as a
// container's PID 1), with whatever requests were in flight: the deregistration race and no drain.
#include "naive/example_server.h"

int main(int argc, char** argv) {
  zerodrop::examples::ServerOptions o;
  o.on_sigterm = zerodrop::examples::OnSigterm::exit_now;
  return zerodrop::examples::server_main(argc, argv, o);
}
