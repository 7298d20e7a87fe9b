// Asks the running daemon's admin listener (admin.listen, with admin.token) for one JSON route; null when no
// daemon answers or it answers other than 200, so each command says what that means for it.
import { get } from 'node:http';
import { parseAdminListen } from '../config/admin-address.js';
import type { LoadedConfig } from '../config/load-config.js';

export function fetchAdminJson(loaded: LoadedConfig, path: string, timeoutMs = 2000): Promise<unknown> {
  const { listen, token } = loaded.config.admin;
  let at: ReturnType<typeof parseAdminListen>;
  try {
    at = parseAdminListen(listen);
  } catch {
    return Promise.resolve(null);
  }
  if (at === null || at.port === 0) return Promise.resolve(null);
  const host = at.host === '::' || at.host === '0.0.0.0' ? '127.0.0.1' : at.host;
  return new Promise((resolve) => {
    const req = get(
      {
        host,
        port: at.port,
        path,
        timeout: timeoutMs,
        headers: {
          host: host.includes(':') ? `[${host}]:${at.port}` : `${host}:${at.port}`,
          ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => {
          try {
            resolve(res.statusCode === 200 ? (JSON.parse(body) as unknown) : null);
          } catch {
            resolve(null);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}
