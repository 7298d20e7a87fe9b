// Asks the running daemon's admin listener for its outputs' status (`GET /api/outputs`); null when no daemon
// answers, so `outputs list` falls back to the cursor files.
import { get } from 'node:http';
import { parseAdminListen } from '../../config/admin-address.js';
import type { LoadedConfig } from '../../config/load-config.js';
import type { OutputReport } from '../../outputs/start-outputs.js';

export function fetchDaemonOutputs(loaded: LoadedConfig, timeoutMs = 2000): Promise<OutputReport[] | null> {
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
        path: '/api/outputs',
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
            resolve(
              res.statusCode === 200 ? (JSON.parse(body) as { outputs: OutputReport[] }).outputs : null,
            );
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
