// A node http server that stops as node's docs suggest: at its stop signal, server.close() stops
// accepting (connections left in the accept queue are reset) and closes idle keep-alive
// connections (node >= 19), while requests in flight finish; the process exits when all are done.
const http = require('http');
const [host, port] = [process.argv[2], Number(process.argv[3])];
const server = http.createServer((req, res) => {
  res.setHeader('X-Pod-Name', process.env.POD_NAME || 'node');
  res.end('ok\n');
});
server.keepAliveTimeout = 60000;
server.listen(port, host);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
