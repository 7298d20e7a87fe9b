// The syslog figure's load generator: `node syslog-load.mjs PORT CERT KEY FORMAT COUNT CONNECTIONS SEED`.
// Builds COUNT distinct octet-counted messages first (send syslog's samples, one millisecond apart from SEED),
// then writes them over CONNECTIONS TLS connections with the client certificate, honouring backpressure, and
// ends them; prints {"sent","seconds"} once every connection closed. Plain JS: the loader's own cost stays small.
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { sampleSyslogMessage } from '../../dist/client/syslog-samples.js';

const [port, certPath, keyPath, format, countText, connectionsText, seedText] = process.argv.slice(2);
const count = Number(countText);
const connections = Number(connectionsText);
const seed = Number(seedText);
const CHUNK = 64 * 1024;

/** Each connection's frames, concatenated and cut into chunks of about CHUNK bytes. */
const perConnection = Array.from({ length: connections }, () => []);
const pending = Array.from({ length: connections }, () => []);
const sizes = Array.from({ length: connections }, () => 0);
for (let i = 0; i < count; i++) {
  const message = Buffer.from(sampleSyslogMessage(format, seed + i));
  const c = i % connections;
  pending[c].push(Buffer.from(`${message.length} `), message);
  sizes[c] += message.length + 8;
  if (sizes[c] >= CHUNK) {
    perConnection[c].push(Buffer.concat(pending[c]));
    pending[c] = [];
    sizes[c] = 0;
  }
}
for (let c = 0; c < connections; c++)
  if (pending[c].length > 0) perConnection[c].push(Buffer.concat(pending[c]));

const cert = readFileSync(certPath);
const key = readFileSync(keyPath);
const started = performance.now();
await Promise.all(
  perConnection.map(
    (chunks) =>
      new Promise((resolve, reject) => {
        const socket = connect({
          host: '127.0.0.1',
          port: Number(port),
          cert,
          key,
          rejectUnauthorized: false,
        });
        socket.on('error', reject);
        socket.on('close', resolve);
        socket.resume(); // syslog answers nothing; a server that writes must not stall on us
        socket.once('secureConnect', () => {
          let i = 0;
          const pump = () => {
            while (i < chunks.length) if (!socket.write(chunks[i++])) return void socket.once('drain', pump);
            socket.end();
          };
          pump();
        });
      }),
  ),
);
process.stdout.write(`${JSON.stringify({ sent: count, seconds: (performance.now() - started) / 1000 })}\n`);
