// How the client reaches a collector: an undici Pool whose TLS trust is the system CAs, a CA file, a pinned
// SHA-256 certificate fingerprint, or nothing (--insecure).
import { lookup as systemLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { createSecureContext, type TLSSocket } from 'node:tls';
import { buildConnector, Pool } from 'undici';
import { systemCas } from '../system-cas.js';
import { normalizeFingerprint } from './fingerprint.js';

export type Trust =
  | { kind: 'system' }
  /** `source`: where the PEM came from (`--ca FILE`, or the local collector's cert.pem), for hints. */
  | { kind: 'ca'; pem: string; source?: string }
  | { kind: 'fingerprint'; sha256: string }
  | { kind: 'insecure' };

export function createPool(origin: string, trust: Trust, connections: number): Pool {
  return new Pool(origin, {
    connections,
    pipelining: 1,
    connect: createConnector(trust),
    keepAliveTimeout: 30_000,
  });
}

function createConnector(trust: Trust): buildConnector.connector {
  // One secure context for every connection: parsing a CA bundle per connection would cost milliseconds each.
  if (trust.kind === 'system' || trust.kind === 'ca') {
    const ca = trust.kind === 'ca' ? trust.pem : systemCas();
    return buildConnector({ secureContext: createSecureContext({ ca }), lookup: localhostLookup });
  }
  if (trust.kind === 'insecure') {
    return buildConnector({
      secureContext: createSecureContext({}),
      rejectUnauthorized: false,
      lookup: localhostLookup,
    });
  }
  // No session resumption with a pin: a resumed session shows no peer certificate to compare, and a session
  // cached from a handshake the pin then refused must never be resumed.
  const base = buildConnector({
    secureContext: createSecureContext({}),
    rejectUnauthorized: false,
    maxCachedSessions: 0,
    lookup: localhostLookup,
  });
  return (options, callback) => {
    base(options, (error, socket) => {
      if (error) return callback(error, null);
      const seen = normalizeFingerprint((socket as TLSSocket).getPeerCertificate?.().fingerprint256 ?? '');
      if (seen !== trust.sha256) {
        socket.destroy();
        return callback(new FingerprintMismatchError(trust.sha256, seen), null);
      }
      callback(null, socket);
    });
  };
}

/**
 * `localhost` (send's default target) is the loopback (RFC 6761), answered here: a minimal container or chroot
 * without /etc/hosts would otherwise ask DNS and fail. Both families, so a collector on either one is reached.
 */
export const localhostLookup: LookupFunction = (hostname, options, callback) => {
  if (hostname !== 'localhost' && !hostname.endsWith('.localhost')) {
    systemLookup(hostname, options, callback);
    return;
  }
  const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
  const loopback = [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ].filter((a) => !family || family === a.family);
  if (options.all) callback(null, loopback);
  else callback(null, loopback[0]?.address ?? '127.0.0.1', loopback[0]?.family ?? 4);
};

class FingerprintMismatchError extends Error {
  readonly code = 'FINGERPRINT_MISMATCH';
  constructor(expected: string, seen: string | null) {
    super(
      `the collector's certificate has SHA-256 fingerprint ${colonHex(seen ?? 'none')}, not the pinned ${colonHex(expected)}`,
    );
  }
}

function colonHex(hex: string): string {
  return hex.length === 64 ? (hex.toUpperCase().match(/../g)?.join(':') ?? hex) : hex;
}
