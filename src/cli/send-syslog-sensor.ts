// `send syslog --sensor NAME`: the sensor to test, from this collector's registry. Its format is the default, a
// certificate it pins must be given, and each connection is checked, before anything is sent, to be one the
// collector takes as that sensor (by the daemon's own matching), so a test never passes as another sensor.
import { X509Certificate } from 'node:crypto';
import type { Socket } from 'node:net';
import { SYSLOG_SAMPLE_FORMATS, type SyslogSampleFormat } from '../client/syslog-samples.js';
import { ThreatcolError } from '../errors.js';
import type { ClientCertificate } from '../inputs/syslog/client-ca.js';
import { SyslogSenders } from '../inputs/syslog/syslog-senders.js';
import { certificatesOf } from '../store/sensor-syslog.js';
import { withStore } from './cli-store.js';
import { loadFromOptions } from './common-options.js';
import type { CliIo } from './io.js';

export interface SensorPlan {
  format: SyslogSampleFormat;
  /** Throws unless a connection from this socket's local address, with the client certificate, is the sensor's. */
  check(socket: Socket): void;
}

export async function syslogSensorPlan(
  name: string,
  options: { format?: string; tcp?: boolean; config?: string; dataDir?: string; clientCert?: string },
  clientPem: string | null,
  io: CliIo,
): Promise<SensorPlan> {
  const loaded = await loadFromOptions(options, io);
  const sensors = await withStore(loaded, io, (store) => store.registry.list());
  const sensor = sensors.find((s) => s.name === name);
  if (!sensor) {
    throw new ThreatcolError(
      'SENSOR_NOT_FOUND',
      `no sensor named "${name}" in ${loaded.dataDir} (send syslog --sensor reads this collector's registry: run it on the collector, or give --config/--data-dir)`,
    );
  }
  const syslog = sensor.syslog;
  if (!syslog) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `sensor "${name}" does not send syslog: give it an identity with threatcol sensor set ${name} --syslog`,
    );
  }
  if (sensor.status !== 'active') throw new ThreatcolError('SENSOR_REVOKED', `sensor "${name}" is revoked`);
  const byCert = syslog.client_cert_sha256.length > 0 || syslog.client_ca !== undefined;
  if (byCert && clientPem === null) {
    throw new ThreatcolError(
      'USAGE',
      `sensor "${name}" is known by its client certificate: give --client-cert FILE --client-key FILE (one it ${syslog.client_ca === undefined ? 'pins' : `takes, issued for "${syslog.client_cn}"`})`,
    );
  }
  if (byCert && options.tcp)
    throw new ThreatcolError('USAGE', `sensor "${name}" needs TLS (its client certificate): drop --tcp`);
  const format = (options.format ?? syslog.format) as SyslogSampleFormat;
  if (!SYSLOG_SAMPLE_FORMATS.includes(format)) {
    throw new ThreatcolError(
      'USAGE',
      `sensor "${name}" reads ${syslog.format}, which send syslog has no sample of: give --format ${SYSLOG_SAMPLE_FORMATS.join('|')}`,
    );
  }
  const senders = new SyslogSenders();
  senders.update(sensors);
  let client: ClientCertificate | null = null;
  if (clientPem !== null) {
    const chain = certificatesOf(clientPem);
    const leaf = chain[0] ?? new X509Certificate(clientPem);
    client = { fingerprint: leaf.fingerprint256, chain: chain.length > 0 ? chain : [leaf], authorized: true };
  }
  return {
    format,
    check(socket) {
      const raw = socket.localAddress ?? '';
      const address = raw.startsWith('::ffff:') && raw.includes('.') ? raw.slice(7) : raw;
      const matched = senders.match(address, client);
      if (matched?.name === name) return;
      const who = `from ${address} ${client === null ? 'without a client certificate' : 'with this client certificate'}`;
      const networks = syslog.from.length > 0 ? syslog.from.join(', ') : null;
      const hint = networks
        ? `; to test ${name} from here, send from a local address in ${networks} with --source ADDRESS, or from the firewall itself`
        : '';
      if (matched === null) {
        throw new ThreatcolError(
          'SYSLOG_REFUSED',
          `a connection ${who} matches no sensor: the collector would close it unread (sensor ${name}: ${describe(syslog.from, byCert)})${hint}`,
        );
      }
      throw new ThreatcolError(
        'SYSLOG_OTHER_SENSOR',
        `a connection ${who} is taken as sensor "${matched.name}", not "${name}" (${describe(syslog.from, byCert)}); nothing sent${hint}`,
      );
    },
  };
}

function describe(from: readonly string[], byCert: boolean): string {
  const parts = [];
  if (byCert) parts.push('known by its client certificate');
  if (from.length > 0) parts.push(`from ${from.join(', ')}`);
  return parts.join(', ');
}
