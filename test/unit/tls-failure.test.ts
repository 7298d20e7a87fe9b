// The reason a pre-HTTP failure is logged under does not depend on which OpenSSL names the alert: OpenSSL 3.2
// (Node 22 and later) spells the SSLv3-era alerts "ssl/tls alert ..." where 3.0 (Node 20) said "sslv3 alert ...".
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { classifyTlsFailure } from '../../src/tls/tls-failure.js';

test('both spellings of an SSLv3-era alert give the same reason', () => {
  for (const [alert, reason] of [
    ['BAD_CERTIFICATE', 'bad_certificate'],
    ['CERTIFICATE_UNKNOWN', 'bad_certificate'],
    ['CERTIFICATE_EXPIRED', 'bad_certificate'],
    ['HANDSHAKE_FAILURE', 'cipher_mismatch'],
  ] as const) {
    assert.equal(classifyTlsFailure({ code: `ERR_SSL_SSLV3_ALERT_${alert}` }), reason, 'OpenSSL 3.0');
    assert.equal(
      classifyTlsFailure({ code: `ERR_SSL_SSL/TLS_ALERT_${alert}` }),
      reason,
      'OpenSSL 3.2 and later',
    );
  }
  assert.equal(classifyTlsFailure({ code: 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA' }), 'unknown_ca');
  assert.equal(classifyTlsFailure({ code: 'ERR_SSL_SSL/TLS_ALERT_SOMETHING_NEW' }), 'other');
});
