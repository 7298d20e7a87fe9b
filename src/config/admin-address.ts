// Parses `admin.listen` ("127.0.0.1:9441", "[::1]:0", "localhost:9441", "" = off) and says whether it is loopback.
import { isIP } from 'node:net';

export interface AdminAddress {
  host: string;
  port: number;
  loopback: boolean;
}

/** null when the admin listener is off (""); throws a plain Error with the reason when the text is invalid. */
export function parseAdminListen(text: string): AdminAddress | null {
  const value = text.trim();
  if (value === '') return null;
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  const host = m ? (m[1] ?? m[2] ?? '') : '';
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535)
    throw new Error('must be host:port (e.g. 127.0.0.1:9441 or [::1]:9441), or "" for off');
  if (m[1] !== undefined && isIP(host) !== 6) throw new Error(`"${host}" is not an IPv6 address`);
  if (m[2] !== undefined && isIP(host) === 0 && host !== 'localhost') {
    throw new Error(`"${host}" is not an IP address (or localhost)`);
  }
  return { host, port, loopback: isLoopback(host) };
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return /^::ffff:127\./i.test(host);
}

/** `http://host:port` for a listening admin address (IPv6 in brackets; a wildcard is reached on loopback). */
export function adminUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}
