// The benchmark's ceiling: a bare node:https server with threatcol's TLS policy, timeouts and certificate that
// reads the body and answers 200. Plain JS on the compiled dist/, so no loader inflates its memory or CPU.
// Started by the benchmark as `node reference-server.mjs CERT KEY`; prints {"port"} once listening.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { loadConfig } from '../../dist/config/load-config.js';
import { httpsServerOptions } from '../../dist/server/create-server.js';

const [certPath, keyPath] = process.argv.slice(2);
// threatcol's defaults (no file, no environment): the same TLS versions, ciphers and timeouts.
const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir: '/tmp' } });
const cfg = config.server;
const answer = '{"accepted":1}';

const server = createServer(
  httpsServerOptions(config, { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') }),
  (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      Buffer.concat(chunks);
      res.writeHead(200, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(answer),
      });
      res.end(answer);
    });
  },
);
server.maxConnections = cfg.maxConnections;
server.listen({ host: '127.0.0.1', port: 0 }, () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
const stop = () => {
  server.close(() => {
    process.exitCode = 0;
  });
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
