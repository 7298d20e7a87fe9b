// A slow-client attacker for the reliability suite, run as its own process so its work does not delay the probe's
// event loop. argv[2]: JSON {kind, port, localAddress, attempts, durationMs, sensor, key}. Talks to 127.0.0.1 only.
// Opens `attempts` connections spread over `durationMs`, never closes one itself, and prints one JSON summary
// line once the window is over, every attempt was made and each has connected or been closed (so the caller
// can time the server's shedding from there); it exits on SIGTERM.
import net from 'node:net';
import tls from 'node:tls';

const opts = JSON.parse(process.argv[2]);
const HOST = '127.0.0.1';
// One context for every connection: building one per tls.connect would make the attacker, not the server, the load.
const secureContext = tls.createSecureContext();
const sockets = new Set();
const stats = { kind: opts.kind, attempts: 0, connected: 0, errors: 0, closedByServer: 0 };
/** Attempts not yet settled (neither connected, TLS included, nor closed). */
let pending = 0;

function track(socket, settleOn) {
  sockets.add(socket);
  pending++;
  let settled = false;
  const settle = () => {
    if (!settled) {
      settled = true;
      pending--;
    }
  };
  socket.once(settleOn, settle);
  socket.on('error', () => {
    stats.errors++;
  });
  socket.on('close', () => {
    settle();
    sockets.delete(socket);
    stats.closedByServer++;
  });
  return socket;
}

function drip(socket, text, everyMs) {
  const timer = setInterval(() => {
    if (socket.destroyed) clearInterval(timer);
    else socket.write(text);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

function open() {
  stats.attempts++;
  const base = { host: HOST, port: opts.port, localAddress: opts.localAddress };
  if (opts.kind === 'zero-byte') {
    // TCP only: no ClientHello ever.
    track(
      net.connect(base, () => stats.connected++),
      'connect',
    );
    return;
  }
  const socket = track(
    tls.connect({ ...base, secureContext, servername: 'localhost', rejectUnauthorized: false }),
    'secureConnect',
  );
  socket.on('secureConnect', () => {
    stats.connected++;
    if (opts.kind === 'slowloris') {
      socket.write('POST /generic HTTP/1.1\r\nHost: localhost\r\n');
      drip(socket, 'X-Slow: 1\r\n', 500);
    } else if (opts.kind === 'slow-body') {
      socket.write(
        'POST /generic HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
          `X-AUTH_KEY: ${opts.key}\r\nX-SENSOR_NAME: ${opts.sensor}\r\nContent-Length: 100000\r\n\r\n{`,
      );
      drip(socket, ' ', 500);
    } else if (opts.kind === 'no-read') {
      // A request whose answer this client never reads. (Answers here are small and fit the loopback socket
      // buffers, which grow to 4 MiB, so it is the server's idle and inactivity timers that must free these.)
      socket.pause();
      socket.write('GET /nothing-here HTTP/1.1\r\nHost: localhost\r\n\r\n');
    }
  });
}

// 1.5x: timers run late under load, and every attempt should be made within the window.
const perTick = Math.max(1, Math.ceil((1.5 * opts.attempts) / (opts.durationMs / 10)));
const started = Date.now();
const ticker = setInterval(() => {
  for (let i = 0; i < perTick && stats.attempts < opts.attempts; i++) open();
  if (stats.attempts >= opts.attempts && Date.now() - started >= opts.durationMs && pending === 0) {
    clearInterval(ticker);
    process.stdout.write(
      `${JSON.stringify({ ...stats, heldAtEnd: sockets.size, windowMs: Date.now() - started })}\n`,
    );
  }
}, 10);
process.on('SIGTERM', () => {
  for (const s of sockets) s.destroy();
  process.exit(0);
});
