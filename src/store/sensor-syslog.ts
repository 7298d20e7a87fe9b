// A sensor's syslog identity as the registry keeps it: its networks (CIDRs), pinned fingerprints and CA, read
// and checked here once, so every reader (the listener, `sensor show`, `check`) gets only identities it can use.
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { isSyslogFormat, SYSLOG_FORMATS } from './syslog-formats.js';

/** A CIDR as `sensor add --from` takes it: an address and an optional prefix length (a bare address is /32 or /128). */
export function parseCidr(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
  if (prefix < 0 || prefix > max) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A certificate fingerprint as stored: lower-case hex without colons (node writes `AB:CD:...`). */
export function normalizeFingerprint(text: string): string {
  return text.replace(/:/g, '').toLowerCase();
}

/** The certificates of a PEM bundle, in order; [] when it holds none or one does not parse. */
export function certificatesOf(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return [];
  }
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * Why `value` is not a syslog identity the listener can use, or null when it is one. Strict on purpose: an
 * identity read loosely could fail open (a CA that does not parse would leave an address to stand in for it).
 */
export function syslogProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'syslog is not a JSON object';
  const s = value as Record<string, unknown>;
  if (!isSyslogFormat(s.format)) return `syslog.format is not one of ${SYSLOG_FORMATS.join(', ')}`;
  if (!isStringList(s.from) || !s.from.every((cidr) => parseCidr(cidr) !== null)) {
    return 'syslog.from is not a list of addresses or CIDRs';
  }
  if (
    !isStringList(s.client_cert_sha256) ||
    !s.client_cert_sha256.every((fp) => /^[0-9a-f]{64}$/.test(normalizeFingerprint(fp)))
  ) {
    return 'syslog.client_cert_sha256 is not a list of SHA-256 fingerprints';
  }
  if (s.client_ca === undefined && s.client_cn === undefined) return null;
  if (typeof s.client_ca !== 'string') return 'syslog.client_ca is not PEM CA certificates';
  const cas = certificatesOf(s.client_ca);
  if (cas.length === 0 || !cas.every((ca) => ca.ca)) return 'syslog.client_ca is not PEM CA certificates';
  if (typeof s.client_cn !== 'string' || s.client_cn === '') return 'syslog.client_cn is not a name';
  return null;
}
