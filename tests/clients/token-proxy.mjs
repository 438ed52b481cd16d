// A loopback HTTP proxy that adds "Authorization: Bearer TOKEN" to every
// request: the conformance suite's CLI cannot send headers of its own, and
// sandbench mcp --listen accepts no request without its token.
//   node token-proxy.mjs TARGET_URL TOKEN   (prints "listening on http://127.0.0.1:PORT/mcp")
import http from "node:http";

const [target, token] = process.argv.slice(2);
const to = new URL(target);

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const out = http.request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers }, (up) => {
    res.writeHead(up.statusCode, up.headers);
    up.pipe(res);
  });
  out.on("error", () => res.destroy());
  res.on("close", () => out.destroy());
  req.pipe(out);
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}${to.pathname}`);
});
