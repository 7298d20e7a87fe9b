// A small fixed set of reasons for a failed TLS handshake, for the `reason` label of
// threatcol_tls_handshake_failures_total (bounded: never the raw error text).

export type TlsFailureReason =
  | 'timeout'
  | 'plain_http'
  | 'protocol_version'
  | 'no_shared_cipher'
  | 'certificate_rejected'
  | 'reset'
  | 'other';

export function tlsFailureReason(error: NodeJS.ErrnoException): TlsFailureReason {
  const code = error.code ?? '';
  const text = `${code} ${error.message ?? ''}`.toUpperCase();
  if (code === 'ERR_TLS_HANDSHAKE_TIMEOUT' || text.includes('TIMEOUT')) return 'timeout';
  if (text.includes('HTTP_REQUEST')) return 'plain_http';
  if (
    text.includes('VERSION') ||
    text.includes('UNSUPPORTED_PROTOCOL') ||
    text.includes('NO_PROTOCOLS_AVAILABLE')
  ) {
    return 'protocol_version';
  }
  if (text.includes('NO_SHARED_CIPHER') || text.includes('NO_SUITABLE_SIGNATURE')) return 'no_shared_cipher';
  if (text.includes('CERTIFICATE') || text.includes('UNKNOWN_CA') || text.includes('BAD_CERTIFICATE')) {
    return 'certificate_rejected';
  }
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
  return 'other';
}
