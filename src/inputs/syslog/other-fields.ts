// A message that is not a threat, kept with syslog.keepOther: the fields of its record, its criticality read
// from the syslog header's severity (the formats' own severities belong to threats).
import type { SyslogThreat } from '../../records/stored-record.js';
import type { SyslogMessage } from './syslog-header.js';

/** RFC 5424 severity (0 emergency ... 7 debug) to criticality, the table in docs/syslog.md. */
const BY_SYSLOG_SEVERITY = [4, 4, 4, 3, 2, 1, 0, 0];

/**
 * The record fields of an other message: no addresses or ports are read from it (empty, port 0: the stored
 * record's shape stays as every reader knows it), `threat` names the kind of message as its format does.
 */
export function otherFields(message: SyslogMessage, what: string): SyslogThreat {
  return {
    criticality: BY_SYSLOG_SEVERITY[message.severity] ?? 0,
    criticality_source: 'severity',
    src_ip: '',
    dst_ip: '',
    dst_port: 0,
    protocol: '',
    threat: what,
    ...(message.timestamp === undefined ? {} : { detected_at: message.timestamp }),
  };
}
