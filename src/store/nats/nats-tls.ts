// Whether the connection to NATS must be TLS, and the client's TLS options: credentials never cross the network
// in clear because a server (or whoever answers on its address) did not ask for TLS.
import type { NodeConnectionOptions } from '@nats-io/transport-node';
import type { Config } from '../../config/schema.js';
import { systemCas } from '../../system-cas.js';
import { serverCredentials } from './names.js';

/** The host of a server URL (`nats://user:pass@host:4222`, `tls://[::1]:4222`, `host:4222`), lower case. */
export function serverHost(server: string): string {
  const rest = server.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^[^@/]*@/, '');
  const bracketed = /^\[([^\]]*)\]/.exec(rest);
  if (bracketed) return (bracketed[1] as string).toLowerCase();
  return (rest.split(/[:/]/)[0] ?? '').toLowerCase();
}

/** 127.0.0.0/8, ::1 and localhost: traffic that never leaves the box. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Whether any credential is configured, separately or in a server URL. */
function hasCredentials(nats: Config['nats']): boolean {
  return (
    nats.user !== null ||
    nats.password !== null ||
    nats.token !== null ||
    nats.credentialsFile !== null ||
    nats.servers.some((s) => serverCredentials(s) !== null)
  );
}

/**
 * TLS is required when a server URL says `tls://`, when `nats.tls.ca` names a CA, when `nats.tls.required` is
 * true, and by default (null) when credentials are set and any server is not loopback. Otherwise the client
 * still upgrades when the server offers TLS, but goes on in clear when it does not.
 */
export function natsTlsRequired(nats: Config['nats']): boolean {
  if (nats.servers.some((s) => /^tls:\/\//i.test(s))) return true;
  if (nats.tls.ca !== null) return true;
  if (nats.tls.required !== null) return nats.tls.required;
  return hasCredentials(nats) && nats.servers.some((s) => !isLoopbackHost(serverHost(s)));
}

/**
 * The client's `tls` option: an object makes it refuse a server that offers no TLS before it sends CONNECT
 * (the server certificate is verified against `nats.tls.ca`, else Node's bundled roots and the system bundle,
 * which holds CAs the administrator added); undefined leaves TLS to the server's offer.
 */
export function natsTlsOptions(nats: Config['nats']): NodeConnectionOptions['tls'] {
  if (!natsTlsRequired(nats)) return undefined;
  return nats.tls.ca !== null ? { caFile: nats.tls.ca } : { ca: systemCas().join('\n') };
}
