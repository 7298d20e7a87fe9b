// How a sensor's syslog identity reads in one line (`sensor show`, `sensor add/set --syslog`), and the warning
// that no syslog listener is configured to receive from it.
import type { Config } from '../../config/schema.js';
import type { SensorSyslog } from '../../store/registry.js';
import { type CliIo, write } from '../io.js';

/** `cef, from 192.0.2.0/24, 1 pinned client certificate`: who the syslog sender is (docs/syslog.md). */
export function syslogSummary(syslog: SensorSyslog): string {
  const parts = [syslog.format];
  if (syslog.from.length > 0) parts.push(`from ${syslog.from.join(' ')}`);
  const pinned = syslog.client_cert_sha256.length;
  if (pinned > 0) parts.push(`${pinned} pinned client certificate${pinned === 1 ? '' : 's'}`);
  if (syslog.client_ca !== undefined) parts.push(`client certificates for "${syslog.client_cn}" from its CA`);
  return parts.join(', ');
}

/** What `sensor add/set --syslog` print of the identity they stored, and where the sender's setup is. */
export function syslogIdentityLines(name: string, syslog: SensorSyslog): string[] {
  const pinned = syslog.client_cert_sha256.map((sha) => `  pinned client certificate SHA-256 ${sha}`);
  return [
    `Syslog: format ${syslog.format}; ${syslog.from.length > 0 ? `from ${syslog.from.join(', ')}` : 'from any address'}${pinned.length > 0 ? '; by its client certificate' : ''}${syslog.client_ca !== undefined ? `; by a certificate for "${syslog.client_cn}" from its CA` : ''}.`,
    ...pinned,
    `Sender setup (address, port, certificate; PAN-OS, FortiGate, rsyslog, syslog-ng): threatcol sensor show ${name} --syslog`,
  ];
}

/**
 * On stderr, when `name` sends syslog and no syslog listener is configured: it would send to nothing. The check
 * is imported when an action runs: `help sensor add` loads the definitions only.
 */
export async function warnNoSyslogListener(config: Config, name: string, io: CliIo): Promise<void> {
  const { noSyslogListenerWarning } = await import('../../check/syslog-listeners.js');
  const warning = noSyslogListenerWarning(config.syslog, [name]);
  if (warning !== null) write(io.stderr, `threatcol: warning: ${warning}`);
}
