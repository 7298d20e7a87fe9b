// Asks the running daemon's admin listener (admin.listen, with admin.token) for one JSON route, and says which
// of three things happened: it answered, no daemon is there (or it answered other than 200), or one took the
// connection but did not answer in time. A collector busy enough to answer late is not a stopped one, so each
// command tells the last apart from the second.
import { parseAdminListen } from '../config/admin-address.js';
import type { LoadedConfig } from '../config/load-config.js';
import { ThreatcolError } from '../errors.js';
import { nodeHttp } from '../node-http.js';

const { get } = nodeHttp;

/** How long a command waits for the admin listener's whole answer: a loaded collector answers in seconds. */
export const ADMIN_WAIT_MS = 10_000;

export type AdminAnswer =
  | { kind: 'answered'; body: unknown }
  | { kind: 'none' }
  /** It answered 401: the token sent (admin.token) is not the daemon's, or none was sent. */
  | { kind: 'refused' }
  /** `seconds`: how long it was waited for, for the user's line ("did not answer in N s"). */
  | { kind: 'no-answer'; seconds: number };

export function askAdmin(loaded: LoadedConfig, path: string, waitMs = ADMIN_WAIT_MS): Promise<AdminAnswer> {
  const { listen, token } = loaded.config.admin;
  let at: ReturnType<typeof parseAdminListen>;
  try {
    at = parseAdminListen(listen);
  } catch {
    return Promise.resolve({ kind: 'none' });
  }
  if (at === null || at.port === 0) return Promise.resolve({ kind: 'none' });
  const host = at.host === '::' || at.host === '0.0.0.0' ? '127.0.0.1' : at.host;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (answer: AdminAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const req = get(
      {
        host,
        port: at.port,
        path,
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
            settle(
              res.statusCode === 200
                ? { kind: 'answered', body: JSON.parse(body) as unknown }
                : res.statusCode === 401
                  ? { kind: 'refused' }
                  : { kind: 'none' },
            );
          } catch {
            settle({ kind: 'none' });
          }
        });
      },
    );
    // The whole answer, not only the idle time between its bytes: an answer trickling in is still waited out.
    const timer = setTimeout(() => {
      settle({ kind: 'no-answer', seconds: Math.round(waitMs / 1000) });
      req.destroy();
    }, waitMs);
    req.on('error', () => settle({ kind: 'none' }));
  });
}

/** The error of a command whose token the admin listener refused: a daemon runs, it is not "none". */
export function tokenRefused(loaded: LoadedConfig): ThreatcolError {
  return new ThreatcolError(
    'ADMIN_TOKEN_REFUSED',
    `the daemon at admin.listen (${loaded.config.admin.listen}) refused admin.token (HTTP 401): run this with the daemon's configuration, or set THREATCOL_ADMIN_TOKEN to its admin.token`,
  );
}

/** The line a command prints when the admin listener took the connection but did not answer. */
export function noAnswerText(answer: { seconds: number }): string {
  return `the collector did not answer in ${answer.seconds} s`;
}
