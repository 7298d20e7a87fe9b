// Explains why the client could not talk to the collector, as CONNECTION_FAILED with a hint to act on.
import { ThreatcolError } from '../errors.js';
import type { Trust } from './connection.js';

/** Certificate errors: with a CA already given, suggesting --ca again would send the operator in circles. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** Turns an undici/TLS/socket failure into CONNECTION_FAILED with a hint the operator can act on. */
export function connectionError(error: unknown, url: string, trust?: Trust): ThreatcolError {
  const e = error as Error & { code?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  if (trust?.kind === 'ca' && UNTRUSTED.has(code)) {
    return new ThreatcolError(
      'CONNECTION_FAILED',
      `cannot reach ${url}: ${e.message || code}; the collector's certificate is not the one in ${trust.source ?? 'the CA file'} nor signed by it: check that this is the right collector, or pin it with --fingerprint (printed by "threatcol serve" and "threatcol check")`,
      { cause: error },
    );
  }
  const hints: Record<string, string> = {
    ECONNREFUSED: 'nothing listens there (is "threatcol serve" running, on that port?)',
    ENOTFOUND: 'the host name does not resolve',
    EHOSTUNREACH: 'the host is unreachable',
    ETIMEDOUT: 'the connection timed out',
    UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
    DEPTH_ZERO_SELF_SIGNED_CERT:
      'the certificate is self-signed: pin it with --fingerprint (printed by "threatcol serve"), or trust it with --ca',
    SELF_SIGNED_CERT_IN_CHAIN: 'the certificate chain ends in an unknown CA: pass that CA with --ca',
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the certificate is not signed by a trusted CA: pass the CA with --ca',
    UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the certificate is not signed by a trusted CA: pass the CA with --ca',
    CERT_HAS_EXPIRED: 'the certificate has expired',
    ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate is not valid for this host name',
  };
  const hint = hints[code] ?? '';
  const reason = e.message || code || String(error);
  return new ThreatcolError('CONNECTION_FAILED', `cannot reach ${url}: ${reason}${hint ? `; ${hint}` : ''}`, {
    cause: error,
  });
}
