// What the benchmark's plain-JS servers share (reference-server.mjs, bound-server.mjs): a node:https server with
// threatcol's defaults (no file, no environment: the same TLS versions, ciphers, timeouts and connection cap)
// and the certificate from argv, on 127.0.0.1 port 0, printing {"port"} once listening and stopping on
// SIGTERM/SIGINT. Plain JS on the compiled dist/, so no loader inflates its memory or CPU.
import { fdatasync, readFileSync, write } from 'node:fs';
import { createServer } from 'node:https';
import { loadConfig } from '../../dist/config/load-config.js';
import { httpsServerOptions } from '../../dist/inputs/https/create-server.js';

export const { config } = loadConfig({
  env: {},
  defaultConfigPath: '/nonexistent',
  overrides: { dataDir: '/tmp' },
});

/** A JSON answer. */
export function answer(res, status, body) {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** The 200 the reference and the bound answer. */
export const OK = '{"accepted":1}';

export function answerOk(res) {
  answer(res, 200, OK);
}

/**
 * Group commit into `fd` (the bounds'): `add(chunks, res, body)` queues a request's bytes; they are written with
 * the others that arrived meanwhile in one write and one fdatasync, and only then is `body` answered with 200.
 * One sync at a time: requests that arrive during a sync wait for the next.
 */
export function groupCommit(fd) {
  let queue = [];
  let waiting = [];
  let syncing = false;
  let scheduled = false;
  const commit = () => {
    scheduled = false;
    if (syncing || queue.length === 0) return;
    syncing = true;
    const buffer = Buffer.concat(queue);
    const answers = waiting;
    queue = [];
    waiting = [];
    const done = (error) => {
      if (error) throw error;
      for (let i = 0; i < answers.length; i += 2) answer(answers[i], 200, answers[i + 1]);
      syncing = false;
      if (queue.length > 0) schedule();
    };
    const writeFrom = (offset) =>
      write(fd, buffer, offset, buffer.length - offset, null, (error, n) => {
        if (error) throw error;
        if (offset + n < buffer.length) writeFrom(offset + n);
        else fdatasync(fd, done);
      });
    writeFrom(0);
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(commit);
  };
  return {
    add(chunks, res, body) {
      for (const chunk of chunks) queue.push(chunk);
      waiting.push(res, body);
      schedule();
    },
  };
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
