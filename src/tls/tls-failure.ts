// Names why a connection failed before HTTP (TLS alert, plain HTTP, version, cipher, timeout, hang-up), so the
// journal says what to fix on the firewall; shared by the log and the handshake-failure metric.

export type TlsFailureReason =
  | 'unknown_ca'
  | 'bad_certificate'
  | 'plain_http'
  | 'protocol_version'
  | 'cipher_mismatch'
  | 'handshake_timeout'
  | 'not_tls'
  | 'client_disconnected'
  | 'other';

/** What each reason means for the operator, as the log line says it (docs/operations.md maps each to a fix). */
export const TLS_FAILURE_MESSAGES: Record<TlsFailureReason, string> = {
  unknown_ca: 'the client refused our certificate: unknown CA (TLS alert unknown_ca)',
  bad_certificate: 'the client refused our certificate (TLS alert bad_certificate or similar)',
  plain_http: 'plain HTTP sent to the HTTPS port',
  protocol_version: 'no common TLS version (the client offers only versions below tls.minVersion)',
  cipher_mismatch: 'no common cipher suite or signature algorithm',
  handshake_timeout: 'the TLS handshake did not finish within server.handshakeTimeoutMs',
  not_tls: 'the client sent something that is neither TLS nor HTTP',
  client_disconnected: 'the client closed the connection',
  other: 'TLS handshake failed',
};

const BY_CODE: Record<string, TlsFailureReason> = {
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA: 'unknown_ca',
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: 'bad_certificate',
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN: 'bad_certificate',
  ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE: 'bad_certificate',
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED: 'bad_certificate',
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED: 'bad_certificate',
  ERR_SSL_TLSV1_ALERT_ACCESS_DENIED: 'bad_certificate',
  ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR: 'bad_certificate',
  ERR_SSL_HTTP_REQUEST: 'plain_http',
  ERR_SSL_HTTPS_PROXY_REQUEST: 'plain_http',
  ERR_SSL_UNSUPPORTED_PROTOCOL: 'protocol_version',
  ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION: 'protocol_version',
  ERR_SSL_VERSION_TOO_LOW: 'protocol_version',
  ERR_SSL_UNKNOWN_PROTOCOL: 'protocol_version',
  ERR_SSL_NO_SHARED_CIPHER: 'cipher_mismatch',
  ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE: 'cipher_mismatch',
  ERR_SSL_NO_SHARED_SIGNATURE_ALGORITHMS: 'cipher_mismatch',
  ERR_SSL_NO_SUITABLE_KEY_SHARE: 'cipher_mismatch',
  ERR_SSL_TLSV1_ALERT_INSUFFICIENT_SECURITY: 'cipher_mismatch',
  ERR_TLS_HANDSHAKE_TIMEOUT: 'handshake_timeout',
  ERR_SSL_WRONG_VERSION_NUMBER: 'not_tls',
  ECONNRESET: 'client_disconnected',
  EPIPE: 'client_disconnected',
  ECONNABORTED: 'client_disconnected',
  // The HTTP parser saw the connection end in the middle of a request.
  HPE_INVALID_EOF_STATE: 'client_disconnected',
};

/** Classifies an error of `tlsClientError`/`clientError` into a stable reason string (also a metric label). */
export function classifyTlsFailure(error: unknown): TlsFailureReason {
  const e = error as { code?: unknown; message?: unknown } | null;
  // OpenSSL 3.2 renamed the SSLv3-era alerts ("sslv3 alert bad certificate" is now "ssl/tls alert bad
  // certificate"), and Node makes the code from that text: both spellings are one reason.
  const code =
    typeof e?.code === 'string' ? e.code.replace(/^ERR_SSL_SSL\/TLS_ALERT_/, 'ERR_SSL_SSLV3_ALERT_') : '';
  const known = Object.hasOwn(BY_CODE, code) ? BY_CODE[code] : undefined;
  if (known) return known;
  if (e?.message === 'socket hang up') return 'client_disconnected';
  return 'other';
}
