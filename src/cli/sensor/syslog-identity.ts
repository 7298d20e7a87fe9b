// `sensor add --syslog`: the options that give a sensor a syslog identity, checked into what the registry stores.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { ThreatcolError } from '../../errors.js';
import type { SensorSyslog } from '../../store/registry.js';
import { certificatesOf, normalizeFingerprint, parseCidr } from '../../store/sensor-syslog.js';
import { SYSLOG_FORMATS } from '../../store/syslog-formats.js';

export interface SyslogOptions {
  syslog?: boolean;
  format?: string;
  from?: string[];
  clientCert?: string[];
  clientCa?: string;
  clientCn?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function addSyslogOptions(command: Command): Command {
  return command
    .option(
      '--syslog',
      'the sensor also sends syslog (docs/syslog.md): needs --format and --from, --client-cert or --client-ca',
    )
    .addOption(new Option('--format <format>', 'syslog: how its messages are read').choices(SYSLOG_FORMATS))
    .option('--from <cidr>', 'syslog: a source network its connections come from (repeatable)', collect)
    .option(
      '--client-cert <file>',
      "syslog over TLS: pin this PEM client certificate's SHA-256 (repeatable)",
      collect,
    )
    .option(
      '--client-ca <file>',
      'syslog over TLS: take client certificates this PEM CA issued for --client-cn',
    )
    .option('--client-cn <name>', "syslog over TLS: the CA-issued certificate's subject CN or SAN DNS name");
}

/** The syslog identity the options describe; undefined without --syslog. USAGE for an incomplete or wrong one. */
export function syslogIdentity(options: SyslogOptions): SensorSyslog | undefined {
  const from = options.from ?? [];
  const certs = options.clientCert ?? [];
  const byCa = options.clientCa !== undefined || options.clientCn !== undefined;
  if (!options.syslog) {
    if (options.format !== undefined || from.length > 0 || certs.length > 0 || byCa) {
      throw new ThreatcolError(
        'USAGE',
        '--format, --from, --client-cert, --client-ca and --client-cn describe a syslog sender: add --syslog',
      );
    }
    return undefined;
  }
  if (options.format === undefined)
    throw new ThreatcolError('USAGE', '--syslog needs --format (panos, cef, fortinet or suricata)');
  if (from.length === 0 && certs.length === 0 && !byCa) {
    throw new ThreatcolError(
      'USAGE',
      '--syslog needs --from CIDR, --client-cert FILE or --client-ca FILE --client-cn NAME: who the sender is',
    );
  }
  if (byCa && (options.clientCa === undefined || !options.clientCn)) {
    throw new ThreatcolError(
      'USAGE',
      '--client-ca and --client-cn go together: which CA, issuing for which name',
    );
  }
  for (const cidr of from) {
    if (parseCidr(cidr) === null)
      throw new ThreatcolError('USAGE', `--from "${cidr}" is not an address or CIDR (192.0.2.7/32)`);
  }
  return {
    format: options.format,
    from,
    client_cert_sha256: certs.map(fingerprintOf),
    ...(byCa ? { client_ca: caOf(options.clientCa as string), client_cn: options.clientCn as string } : {}),
  };
}

/** The CA certificates of the file, as PEM: the registry keeps them, so every node checks the same CA. */
function caOf(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ThreatcolError('USAGE', `--client-ca ${path}: cannot read it (${(error as Error).message})`);
  }
  const certs = certificatesOf(text);
  if (certs.length === 0 || !certs.every((c) => c.ca)) {
    throw new ThreatcolError(
      'USAGE',
      `--client-ca ${path}: not PEM CA certificates (basicConstraints CA:TRUE)`,
    );
  }
  return certs.map((c) => c.toString()).join('');
}

function fingerprintOf(path: string): string {
  try {
    return normalizeFingerprint(new X509Certificate(readFileSync(path)).fingerprint256);
  } catch (error) {
    throw new ThreatcolError(
      'USAGE',
      `--client-cert ${path}: not a readable PEM certificate (${(error as Error).message})`,
    );
  }
}
