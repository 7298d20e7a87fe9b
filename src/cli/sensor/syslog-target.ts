// Where a syslog sensor sends: the collector's address, port and transport from syslog.listen/tcpListen/relpListen, and
// its certificate's fingerprints, for `sensor show NAME --syslog`.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseAdminListen } from '../../config/admin-address.js';
import type { LoadedConfig } from '../../config/load-config.js';
import { ThreatcolError } from '../../errors.js';
import type { Sensor } from '../../store/registry.js';
import { selfSignedPaths } from '../../tls/tls-material.js';
import type { SyslogTarget } from './syslog-setup.js';

/** RFC 5425's port, shown when syslog.listen is not set yet (the text then says to set it). */
const DEFAULT_TLS_PORT = 6514;

export function syslogTarget(loaded: LoadedConfig, sensor: Sensor, collector?: string): SyslogTarget {
  const { config } = loaded;
  const syslog = sensor.syslog;
  if (!syslog) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `sensor "${sensor.name}" does not send syslog: give it an identity with threatcol sensor set ${sensor.name} --syslog --format F --from CIDR|--client-cert FILE|--client-ca FILE --client-cn NAME`,
    );
  }
  const tlsAt = parseAdminListen(config.syslog.listen);
  const tcpAt = parseAdminListen(config.syslog.tcpListen);
  // A client certificate needs TLS; otherwise TLS when it listens, plain TCP only when that is all there is.
  const byCert = syslog.client_cert_sha256.length > 0 || syslog.client_ca !== undefined;
  const transport = tlsAt === null && tcpAt !== null && !byCert ? 'tcp' : 'tls';
  const at = transport === 'tls' ? tlsAt : tcpAt;
  const relpAt = parseAdminListen(config.syslog.relpListen);
  // The address senders reach: the listener's, or RELP's when it is the only one.
  const hostAt = at ?? relpAt;
  const wildcard = hostAt === null || hostAt.host === '0.0.0.0' || hostAt.host === '::' || hostAt.host === '';
  const certPath = config.tls.cert ?? selfSignedPaths(loaded.dataDir).certPath;
  let cert: X509Certificate | null = null;
  try {
    cert = new X509Certificate(readFileSync(certPath));
  } catch {
    // Not created yet (serve creates the self-signed one at its first start): the text says so.
  }
  return {
    sensor: sensor.name,
    format: syslog.format,
    host: collector ?? (wildcard ? hostname() : (hostAt?.host as string)),
    port: at?.port ?? DEFAULT_TLS_PORT,
    transport,
    relpPort: relpAt?.port ?? null,
    sha256: cert?.fingerprint256 ?? null,
    sha1: cert?.fingerprint ?? null,
    clientCert: byCert,
  };
}
