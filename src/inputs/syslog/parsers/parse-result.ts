// What every format parser returns, and the one check that a threat is complete before it may be stored.
import type { CriticalitySource } from '../../../records/criticality.js';
import type { SyslogThreat } from '../../../records/stored-record.js';
import { isIpAddress } from '../../../schemas/ip-address.js';
import type { SyslogMessage } from '../syslog-header.js';

export type ParseResult =
  | { kind: 'threat'; fields: SyslogThreat }
  /** Not a threat; `what` names the kind of message as the format does (`TRAFFIC`, `traffic/forward`, `flow`). */
  | { kind: 'other'; what: string }
  | { kind: 'invalid'; reason: string };

export interface ParserContext {
  /** The sensor's IANA time zone, for times a format writes without an offset. */
  timezone: string;
  /** The criticality of a threat whose severity is missing or unknown (config `firewall.defaultCriticality`). */
  defaultCriticality: number;
}

export type FormatParser = (message: SyslogMessage, ctx: ParserContext) => ParseResult;

/** A threat's fields as a parser read them, still text: checked and converted by completeThreat. */
export interface ThreatDraft {
  criticality: number;
  criticality_source: CriticalitySource;
  src_ip: string | undefined;
  dst_ip: string | undefined;
  src_port: string | undefined;
  dst_port: string | undefined;
  protocol: string | undefined;
  threat: string | undefined;
  threat_id: string | undefined;
  detected_at: string | undefined;
}

/**
 * The threat as stored, or invalid naming the first field that is missing or malformed: a parser never hands
 * on half a record. Ports a message leaves out (ICMP has none) are stored as absent source port and
 * destination port 0; an address, a port that is there but not a number 0-65535, or no threat name is invalid.
 */
export function completeThreat(d: ThreatDraft): ParseResult {
  if (d.src_ip === undefined || !isIpAddress(d.src_ip)) return invalid('source address', d.src_ip);
  if (d.dst_ip === undefined || !isIpAddress(d.dst_ip)) return invalid('destination address', d.dst_ip);
  const srcPort = port(d.src_port);
  if (Number.isNaN(srcPort)) return invalid('source port', d.src_port);
  const dstPort = port(d.dst_port);
  if (Number.isNaN(dstPort)) return invalid('destination port', d.dst_port);
  const threat = d.threat?.trim() ?? '';
  if (threat === '') return { kind: 'invalid', reason: 'no threat name' };
  const fields: SyslogThreat = {
    criticality: d.criticality,
    criticality_source: d.criticality_source,
    src_ip: d.src_ip,
    dst_ip: d.dst_ip,
    dst_port: dstPort ?? 0,
    protocol: (d.protocol ?? '').toLowerCase(),
    threat,
  };
  if (srcPort !== undefined) fields.src_port = srcPort;
  if (d.threat_id !== undefined && d.threat_id !== '') fields.threat_id = d.threat_id;
  if (d.detected_at !== undefined) fields.detected_at = d.detected_at;
  return { kind: 'threat', fields };
}

/** undefined when absent, NaN when malformed: 1-5 ASCII digits up to 65535 (read by hand: run per message). */
function port(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (text.length > 5) return Number.NaN;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    n = n * 10 + digit;
  }
  return n <= 65535 ? n : Number.NaN;
}

function invalid(field: string, value: string | undefined): ParseResult {
  return { kind: 'invalid', reason: value === undefined ? `no ${field}` : `${field} is malformed` };
}

const IP_PROTOCOLS = new Map([
  ['1', 'icmp'],
  ['6', 'tcp'],
  ['17', 'udp'],
  ['47', 'gre'],
  ['50', 'esp'],
  ['58', 'ipv6-icmp'],
  ['132', 'sctp'],
]);

/** A protocol named by its IP protocol number (FortiGate, some CEF senders) by its name; names as they are. */
export function protocolName(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return IP_PROTOCOLS.get(text) ?? text.toLowerCase();
}
