// `threatcol check`, the network part: is a daemon answering on the configured port (with which certificate),
// is it ready (the admin listener's /readyz), and can this user bind the port.
import { createServer } from 'node:net';
import { adminUrl, parseAdminListen } from '../config/admin-address.js';
import type { LoadedConfig } from '../config/load-config.js';
import { nodeHttp } from '../node-http.js';
import type { CheckResult } from './local-checks.js';
import { probeTls } from './tls-probe.js';

const { get } = nodeHttp;

export interface DaemonAnswer {
  answering: boolean;
  result: CheckResult;
}

/** Where to reach a daemon that listens on `host`: the loopback address for a wildcard. */
export function connectHost(host: string): string {
  if (host === '::' || host === '0.0.0.0' || host === '') return '127.0.0.1';
  return host;
}

/**
 * A completed TLS handshake counts as a daemon answering; its certificate is compared with the file's. No HTTP
 * request is sent, so the daemon's journal gets no rejected-request line from `check`.
 */
export async function checkDaemon(
  loaded: LoadedConfig,
  fileFingerprint: string | null,
  timeoutMs = 3000,
): Promise<DaemonAnswer> {
  const { port } = loaded.config.server;
  const host = connectHost(loaded.config.server.host);
  const where = `https://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  const probe = await probeTls(host, port, timeoutMs);
  if ('error' in probe) {
    return {
      answering: false,
      result: {
        name: 'daemon',
        status: 'fail',
        message: `no daemon answers on ${where} (${probe.error}); start it: systemctl start threatcol`,
      },
    };
  }
  const served = probe.fingerprint;
  if (served && fileFingerprint && served !== fileFingerprint) {
    return {
      answering: true,
      result: {
        name: 'daemon',
        status: 'warn',
        message: `answering on ${where} with another certificate (sha256 ${served}) than the file's; reload it: systemctl reload threatcol`,
      },
    };
  }
  return {
    answering: true,
    result: {
      name: 'daemon',
      status: 'ok',
      message: `answering on ${where} (TLS)${served ? `, certificate sha256 ${served}` : ''}`,
    },
  };
}

/**
 * Nothing answers on the configured port, yet the daemon's admin listener says it is ready: it runs, with the
 * listen address it started with (server.host and server.port take effect only at start).
 */
export function runningElsewhere(loaded: LoadedConfig): CheckResult {
  const { host, port } = loaded.config.server;
  return {
    name: 'daemon',
    status: 'warn',
    message: `the daemon runs (its admin listener answers) but not on ${host} port ${port} as the file says: a changed listen address takes a restart to apply: systemctl restart threatcol`,
  };
}

/** GET /readyz on the admin listener: OK when the daemon's store accepts writes, else FAIL with its reasons. */
export function checkReady(loaded: LoadedConfig, timeoutMs = 3000): Promise<CheckResult> {
  const name = 'ready';
  const { listen, token } = loaded.config.admin;
  let at: ReturnType<typeof parseAdminListen>;
  try {
    at = parseAdminListen(listen);
  } catch {
    return Promise.resolve({
      name,
      status: 'fail',
      message: 'admin.listen is invalid (see the config check)',
    });
  }
  if (at === null) {
    return Promise.resolve({
      name,
      status: 'warn',
      message: 'admin.listen is "": readiness (/readyz) not checked; only that the port answers',
    });
  }
  if (at.port === 0) {
    return Promise.resolve({
      name,
      status: 'warn',
      message:
        'admin.listen has port 0 (chosen at start, see the log): pass --admin-listen host:port to check /readyz',
    });
  }
  const url = `${adminUrl(at.host, at.port)}/readyz`;
  return new Promise((resolve) => {
    const req = get(
      url,
      {
        timeout: timeoutMs,
        agent: false,
        headers: token === null ? {} : { authorization: `Bearer ${token}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d.slice(0, 4096)));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status === 200) {
            resolve({ name, status: 'ok', message: `ready (${url})` });
            return;
          }
          if (status === 401) {
            resolve({
              name,
              status: 'fail',
              message: `${url} refused admin.token (HTTP 401): use the daemon's token`,
            });
            return;
          }
          let reasons = '';
          try {
            // Whatever answers on the admin port: only a list is taken as the daemon's reasons.
            const listed = (JSON.parse(body) as { reasons?: unknown } | null)?.reasons;
            reasons = Array.isArray(listed) ? listed.map(String).join('; ') : body.trim().slice(0, 200);
          } catch {
            reasons = body.trim().slice(0, 200);
          }
          resolve({ name, status: 'fail', message: `not ready (${url}, HTTP ${status}): ${reasons}` });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'ECONNREFUSED' ? 'connection refused' : (error.code ?? error.message);
      resolve({
        name,
        status: 'fail',
        message: `no admin listener answers on ${url} (${reason}): is the daemon running with this admin.listen?`,
      });
    });
  });
}

/** Tries to listen on the configured address as this user, as serve would (then closes at once). */
export function checkPort(loaded: LoadedConfig, daemonAnswering: boolean, uid: number): Promise<CheckResult> {
  const { host, port } = loaded.config.server;
  const name = 'port';
  if (port === 0) return Promise.resolve({ name, status: 'ok', message: 'port 0: any free port is used' });
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        resolve(
          daemonAnswering
            ? {
                name,
                status: 'ok',
                message: `port ${port} is in use by the answering daemon (or its socket)`,
              }
            : { name, status: 'fail', message: `port ${port} on ${host} is in use by another program` },
        );
      } else if (error.code === 'EACCES' && daemonAnswering) {
        // The kernel refuses a privileged port before it says "in use": the daemon has it, which is what counts.
        resolve({
          name,
          status: 'ok',
          message: `port ${port} is held by the answering daemon (or its socket)`,
        });
      } else if (error.code === 'EACCES') {
        resolve({
          name,
          status: 'fail',
          message: `this user (uid ${uid}) may not bind port ${port}: ports below 1024 need CAP_NET_BIND_SERVICE (the systemd unit grants it) or socket activation (threatcol.socket)`,
        });
      } else {
        resolve({
          name,
          status: 'fail',
          message: `cannot bind ${host} port ${port}: ${error.code ?? error.message}`,
        });
      }
    });
    server.listen({ host, port, ipv6Only: false, exclusive: true }, () => {
      server.close(() => {
        const note =
          uid === 0 && port < 1024
            ? ' (as root; the service user gets it through CAP_NET_BIND_SERVICE in the unit)'
            : '';
        resolve({ name, status: 'ok', message: `this user can bind ${host} port ${port}${note}` });
      });
    });
  });
}
