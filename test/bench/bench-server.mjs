// What the benchmark's plain-JS servers share (reference-server.mjs, bound-server.mjs): a node:https server with
// threatcol's defaults (no file, no environment: the same TLS versions, ciphers, timeouts and connection cap)
// and the certificate from argv, on 127.0.0.1 port 0, printing {"port"} once listening and stopping on
// SIGTERM/SIGINT. Plain JS on the compiled dist/, so no loader inflates its memory or CPU.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { loadConfig } from '../../dist/config/load-config.js';
import { httpsServerOptions } from '../../dist/server/create-server.js';

export const { config } = loadConfig({
  env: {},
  defaultConfigPath: '/nonexistent',
  overrides: { dataDir: '/tmp' },
});

const answer = '{"accepted":1}';

/** The 200 both servers answer. */
export function answerOk(res) {
  res.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(answer),
  });
  res.end(answer);
}

/** Serves `handler` with the certificate and key at argv[2] and argv[3]; `onClosed` runs once it has stopped. */
export function serveBench(handler, onClosed = () => {}) {
  const [certPath, keyPath] = process.argv.slice(2);
  const tls = { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  const server = createServer(httpsServerOptions(config, tls), handler);
  server.maxConnections = config.server.maxConnections;
  server.listen({ host: '127.0.0.1', port: 0 }, () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
  });
  const stop = () => {
    server.close(() => {
      onClosed();
      process.exitCode = 0;
    });
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
