// One record as an RFC 5424 syslog message, framed by octet counting (RFC 5425 over TLS, RFC 6587 over TCP).
import { DEFAULT_SD_ID, SYSLOG_FACILITIES } from '../../config/output-keys/syslog-keys.js';
import type { OutgoingRecord } from './receiver.js';

export type SyslogFacility = (typeof SYSLOG_FACILITIES)[number];
export { DEFAULT_SD_ID, SYSLOG_FACILITIES };

/**
 * Criticality 0 (informational) .. 4 (critical) as a syslog severity: 4 is Critical (2), 3 Error (3),
 * 2 Warning (4), 1 Notice (5), 0 Informational (6). Alert and Emergency are left to the receiving system.
 */
export function syslogSeverity(criticality: number): number {
  const level = Math.min(4, Math.max(0, Math.trunc(criticality) || 0));
  return 6 - level;
}

export interface SyslogHeader {
  facility: SyslogFacility;
  /** HOSTNAME field: this collector's name. */
  hostname: string;
  appName: string;
  sdId: string;
}

/** RFC 5424 header fields are PRINTUSASCII without spaces, bounded; anything else becomes `_`, nothing at all `-`. */
export function headerField(value: string, maxLength: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '_').slice(0, maxLength);
  return clean === '' ? '-' : clean;
}

/** An SD-PARAM value: `"`, `\` and `]` are escaped with a backslash (RFC 5424 6.3.3); the rest is UTF-8 as is. */
export function sdParamValue(value: string): string {
  return value.replace(/["\\\]]/g, '\\$&');
}

/** The message for one record: header, structured data with the id, sensor and criticality, then `body`. */
export function syslogMessage(header: SyslogHeader, entry: OutgoingRecord, body: string): string {
  const record = entry.head;
  const pri = SYSLOG_FACILITIES.indexOf(header.facility) * 8 + syslogSeverity(record.criticality);
  const timestamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$/.test(record.received_at)
    ? record.received_at
    : '-';
  const sd =
    `[${header.sdId} id="${sdParamValue(entry.id)}" sensor="${sdParamValue(record.sensor)}"` +
    ` criticality="${record.criticality}"]`;
  return `<${pri}>1 ${timestamp} ${headerField(header.hostname, 255)} ${headerField(header.appName, 48)} - threat ${sd} ${body}`;
}

/** Octet-counting framing: `LEN SP MSG`, LEN the byte length of MSG, so no byte of the message can break it. */
export function frameOctetCounted(message: string): Buffer {
  const body = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `, 'latin1'), body]);
}

/**
 * The same frame as pieces, for a message whose body is a stored line's bytes: header text, then the bytes as
 * stored (not decoded and encoded again).
 */
export function framePieces(header: string, body: Buffer): Buffer[] {
  const head = Buffer.from(header, 'utf8');
  return [Buffer.from(`${head.length + body.length} `, 'latin1'), head, body];
}
