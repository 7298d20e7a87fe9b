// `sensor add --syslog`: the options that give a sensor a syslog identity, checked into what the registry stores.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { SYSLOG_FORMATS } from '../../inputs/syslog/parsers/format-names.js';
import { normalizeFingerprint, parseCidr } from '../../inputs/syslog/syslog-senders.js';
import type { SensorSyslog } from '../../store/registry.js';

export interface SyslogOptions {
  syslog?: boolean;
  format?: string;
  from?: string[];
  clientCert?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function addSyslogOptions(command: Command): Command {
  return command
    .option(
      '--syslog',
      'the sensor also sends syslog (docs/syslog.md): needs --format and --from or --client-cert',
    )
    .addOption(new Option('--format <format>', 'syslog: how its messages are read').choices(SYSLOG_FORMATS))
    .option('--from <cidr>', 'syslog: a source network its connections come from (repeatable)', collect)
    .option(
      '--client-cert <file>',
      "syslog over TLS: pin this PEM client certificate's SHA-256 (repeatable)",
      collect,
    );
}

/** The syslog identity the options describe; undefined without --syslog. USAGE for an incomplete or wrong one. */
export function syslogIdentity(options: SyslogOptions): SensorSyslog | undefined {
  const from = options.from ?? [];
  const certs = options.clientCert ?? [];
  if (!options.syslog) {
    if (options.format !== undefined || from.length > 0 || certs.length > 0) {
      throw new ThreatcolError(
        'USAGE',
        '--format, --from and --client-cert describe a syslog sender: add --syslog',
      );
    }
    return undefined;
  }
  if (options.format === undefined)
    throw new ThreatcolError('USAGE', '--syslog needs --format (panos, cef, fortinet or suricata)');
  if (from.length === 0 && certs.length === 0) {
    throw new ThreatcolError('USAGE', '--syslog needs --from CIDR or --client-cert FILE: who the sender is');
  }
  for (const cidr of from) {
    if (parseCidr(cidr) === null)
      throw new ThreatcolError('USAGE', `--from "${cidr}" is not an address or CIDR (192.0.2.7/32)`);
  }
  return { format: options.format, from, client_cert_sha256: certs.map(fingerprintOf) };
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
