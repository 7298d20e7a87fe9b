// Raw TLS sockets to the test server, for what undici would normalise away (half-close, a body sent in parts).
import { connect, type TLSSocket } from 'node:tls';

/** Opens a TLS connection to the test server (self-signed: not verified), from `localAddress` when given. */
export async function openTls(url: string, localAddress?: string): Promise<TLSSocket> {
  const { hostname, port } = new URL(url);
  const socket = connect({
    host: hostname,
    port: Number(port),
    rejectUnauthorized: false,
    ...(localAddress ? { localAddress } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Everything the server sends until it closes the connection or `done(text)` says enough. */
export function readResponse(
  socket: TLSSocket,
  done: (text: string) => boolean = completeResponse,
): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const finish = () => {
      socket.off('data', onData);
      resolve(text);
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (done(text)) finish();
    };
    socket.on('data', onData);
    socket.once('close', finish);
    socket.once('error', finish);
  });
}

/** Whether `text` holds one whole response with a Content-Length body (not an interim 100). */
export function completeResponse(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1 || text.startsWith('HTTP/1.1 100')) return false;
  const length = /content-length: (\d+)/i.exec(text.slice(0, end));
  return length !== null && text.length >= end + 4 + Number(length[1]);
}

/** A POST's head for a JSON body of `bodyBytes` bytes, from sensor `sensor` with `key`. */
export function postHead(path: string, sensor: string, key: string, bodyBytes: number): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-AUTH_KEY: ${key}\r\n` +
    `X-SENSOR_NAME: ${sensor}\r\nContent-Length: ${bodyBytes}\r\n\r\n`
  );
}
