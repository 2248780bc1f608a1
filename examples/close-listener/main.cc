// close-listener: the "textbook" graceful shutdown. At SIGTERM it closes its listener and its idle
// keep-alive connections, finishes the requests in flight, and exits 0. It still drops requests:
// routers keep sending new connections until they learn the pod is terminating.
#include "naive/example_server.h"

int main(int argc, char** argv) {
  zerodrop::examples::ServerOptions o;
  o.on_sigterm = zerodrop::examples::OnSigterm::drain;
  return zerodrop::examples::server_main(argc, argv, o);
}
