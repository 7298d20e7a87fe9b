// The HTTP connection pool an HTTP receiver (webhook, and the SIEM receivers that speak HTTP) sends through:
// keep-alive undici Pool; https:// verified against the system CAs or the output's own `ca` file.
import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates } from 'node:tls';
import { buildConnector, Pool } from 'undici';

/** Where Linux distributions keep the system CA bundle (Debian/Ubuntu, Fedora/RHEL, openSUSE). */
const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
];

export function createHttpPool(url: URL, options: { caFile: string | null; timeoutMs: number }): Pool {
  const ca = options.caFile === null ? systemCas() : readFileSync(options.caFile, 'utf8');
  return new Pool(url.origin, {
    connections: 2,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connectTimeout: Math.min(options.timeoutMs, 10_000),
    ...(url.protocol === 'https:'
      ? { connect: buildConnector({ secureContext: createSecureContext({ ca }) }) }
      : {}),
  });
}

function systemCas(): string[] {
  const cas: string[] = [...rootCertificates];
  for (const path of SYSTEM_BUNDLES) {
    try {
      cas.push(readFileSync(path, 'utf8'));
      break;
    } catch {}
  }
  return cas;
}

/** Retry-After (seconds or an HTTP date) in ms; null when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Whether a host is loopback: plain http:// to it needs no warning. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
