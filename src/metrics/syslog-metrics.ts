// Syslog input Prometheus series (DESIGN 14): messages per sensor and format by outcome, refused connections,
// read from the listener's tally at scrape time.
import { Counter, type Registry } from 'prom-client';

/** One sensor's messages in one format (the syslog input's tally, inputs/syslog/syslog-tally.ts). */
export interface SyslogMetricRow {
  sensor: string;
  format: string;
  received: number;
  stored: number;
  other: number;
  invalid: number;
  truncated: number;
  incomplete: number;
}

/** What the series read at scrape time: the listener's tally. */
export interface SyslogMetricSource {
  rows(): SyslogMetricRow[];
  readonly refused: Readonly<Record<string, number>>;
}

const SERIES: [string, string, Exclude<keyof SyslogMetricRow, 'sensor' | 'format'>][] = [
  ['threatcol_syslog_messages_received_total', 'syslog messages framed, by sensor and format', 'received'],
  ['threatcol_syslog_messages_stored_total', 'syslog threat messages made durable', 'stored'],
  ['threatcol_syslog_messages_other_total', 'syslog messages that are not threats (not stored)', 'other'],
  ['threatcol_syslog_messages_invalid_total', 'syslog messages that could not be read', 'invalid'],
  [
    'threatcol_syslog_messages_truncated_total',
    'syslog messages over syslog.maxMessageBytes (cut or dropped, per syslog.oversize)',
    'truncated',
  ],
  [
    'threatcol_syslog_messages_incomplete_total',
    'syslog messages lost inside their frame: the connection ended, was reset or was closed before the message did',
    'incomplete',
  ],
];

/** Registers the series on `registry`; sensor names are bounded by the registry (only identified connections count). */
export function registerSyslogMetrics(registry: Registry, tally: SyslogMetricSource): void {
  for (const [name, help, field] of SERIES) {
    new Counter({
      name,
      help,
      labelNames: ['sensor', 'format'],
      registers: [registry],
      collect() {
        this.reset();
        for (const row of tally.rows()) this.inc({ sensor: row.sensor, format: row.format }, row[field]);
      },
    });
  }
  new Counter({
    name: 'threatcol_syslog_connections_refused_total',
    help: 'syslog connections threatcol closed: matching no active sensor, over a connection cap, a RELP sender breaking the protocol, or holding the oldest unfinished message when the connections held syslog.maxHeldBytes',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(tally.refused)) this.inc({ reason }, n);
    },
  });
}
