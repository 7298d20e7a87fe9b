// Whether the sensors that send syslog have a listener to send to: `check`'s syslog line, and the warning of
// `sensor add/set/show --syslog` (a syslog sensor is stored, and its setup printed, whatever the listeners).
import type { Config } from '../config/schema.js';
import type { CheckResult } from './local-checks.js';

/** The configured syslog listeners, e.g. `TLS [::]:6514, RELP [::]:2514`; empty when none is. */
export function syslogListeners(syslog: Config['syslog']): string[] {
  const listeners: [string, string][] = [
    ['TLS', syslog.listen],
    ['plain TCP', syslog.tcpListen],
    ['RELP', syslog.relpListen],
  ];
  return listeners.filter(([, at]) => at.trim() !== '').map(([kind, at]) => `${kind} ${at.trim()}`);
}

/** The warning when `sensors` send syslog and no listener is configured; null otherwise. */
export function noSyslogListenerWarning(syslog: Config['syslog'], sensors: readonly string[]): string | null {
  if (sensors.length === 0 || syslogListeners(syslog).length > 0) return null;
  const who = sensors.length === 1 ? `sensor ${sensors[0]}` : `sensors ${sensors.join(', ')}`;
  return `no syslog listener is configured (syslog.listen, syslog.tcpListen and syslog.relpListen are all off): ${who} cannot send until one is set, e.g. "syslog": {"listen": "[::]:6514"} in the configuration file or THREATCOL_SYSLOG_LISTEN='[::]:6514', then systemctl restart threatcol (docs/syslog.md)`;
}

/** `check`'s line: the listeners when a sensor sends syslog, a WARN when none is configured; null: no syslog at all. */
export function checkSyslogListeners(
  syslog: Config['syslog'],
  sensors: readonly string[],
): CheckResult | null {
  const warning = noSyslogListenerWarning(syslog, sensors);
  if (warning !== null) return { name: 'syslog', status: 'warn', message: warning };
  const listeners = syslogListeners(syslog);
  if (listeners.length === 0) return null;
  return {
    name: 'syslog',
    status: 'ok',
    message: `listening on ${listeners.join(', ')}; ${sensors.length} sensor${sensors.length === 1 ? '' : 's'} send${sensors.length === 1 ? 's' : ''} syslog`,
  };
}
