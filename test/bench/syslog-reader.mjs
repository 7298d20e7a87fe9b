// The syslog figure's ceiling: a bare node:tls server with threatcol's certificate and TLS policy that only splits the
// octet-counted frames (RFC 6587 3.4.1) and counts them; no parsing, no authentication, no storing.
// `node syslog-reader.mjs CERT KEY` prints {"port"}, then {"count"} (the total so far) whenever a connection ends.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:tls';
import { tlsPolicy } from '../../dist/tls/tls-material.js';
import { config } from './bench-server.mjs';

const [certPath, keyPath] = process.argv.slice(2);
let total = 0;
const server = createServer(
  {
    ...tlsPolicy(config.tls),
    cert: readFileSync(certPath),
    key: readFileSync(keyPath),
    requestCert: true,
    rejectUnauthorized: false,
  },
  (socket) => {
    let held = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      let buf = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
      let at = 0;
      for (;;) {
        const space = buf.indexOf(0x20, at);
        if (space === -1) break;
        const end = space + 1 + Number(buf.latin1Slice(at, space));
        if (end > buf.length) break;
        total++;
        at = end;
      }
      held = buf.subarray(at);
      buf = held;
    });
    socket.on('end', () => {
      socket.end();
      process.stdout.write(`${JSON.stringify({ count: total })}\n`);
    });
    socket.on('error', () => {});
  },
);
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`),
);
process.on('SIGTERM', () => process.exit(0));
