// Suricata EVE JSON lines over syslog (also from pfSense and OPNsense): `event_type: "alert"` is a threat.

import { rfc3339ToIso } from '../sender-time.js';
import type { SyslogMessage } from '../syslog-header.js';
import { completeThreat, type ParseResult, type ParserContext } from './parse-result.js';

/** Suricata's alert severity (docs/syslog.md, "suricata"): 1 is the most severe. */
const CRITICALITY = new Map([
  [1, 3],
  [2, 2],
  [3, 1],
  [4, 0],
]);

export function parseSuricata(message: SyslogMessage, ctx: ParserContext): ParseResult {
  const start = message.content.indexOf('{');
  if (start === -1) return { kind: 'invalid', reason: 'no JSON object' };
  let event: unknown;
  try {
    event = JSON.parse(message.content.slice(start));
  } catch {
    return { kind: 'invalid', reason: 'EVE JSON does not parse' };
  }
  if (!isObject(event)) return { kind: 'invalid', reason: 'EVE JSON is not an object' };
  if (event.event_type !== 'alert')
    return typeof event.event_type === 'string'
      ? { kind: 'other', what: event.event_type }
      : invalid('event_type');
  const alert = event.alert;
  if (!isObject(alert)) return invalid('alert');
  const level = typeof alert.severity === 'number' ? CRITICALITY.get(alert.severity) : undefined;
  let detected: string | undefined;
  if (event.timestamp !== undefined) {
    // EVE writes `2026-11-26T12:00:00.123456+0100`: an offset without its colon.
    const text =
      typeof event.timestamp === 'string' ? event.timestamp.replace(/([+-]\d{2})(\d{2})$/, '$1:$2') : '';
    detected = rfc3339ToIso(text);
    if (detected === undefined) return invalid('timestamp');
  }
  const fields = {
    src_ip: text(event.src_ip),
    dst_ip: text(event.dest_ip),
    src_port: text(event.src_port),
    dst_port: text(event.dest_port),
    protocol: text(event.proto),
    threat: text(alert.signature),
    threat_id: text(alert.signature_id),
  };
  // A field of the wrong type (an object, a fraction) is malformed, never taken for an absent one.
  const wrong = Object.entries(fields).find(([, value]) => value === null);
  if (wrong !== undefined) return invalid(wrong[0]);
  return completeThreat({
    ...(fields as Record<keyof typeof fields, string | undefined>),
    criticality: level ?? ctx.defaultCriticality,
    criticality_source: level === undefined ? 'default' : 'severity',
    detected_at: detected ?? message.timestamp,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string or a whole number as text, undefined when absent, null for any other type. */
function text(value: unknown): string | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return String(value);
  return null;
}

function invalid(field: string): ParseResult {
  return { kind: 'invalid', reason: `EVE ${field} is missing or malformed` };
}
