// A loopback webhook that answers 200 to everything, for the forwarding benchmark (run in its own process).
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.(server.address().port));
