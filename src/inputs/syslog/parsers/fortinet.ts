// FortiGate's native syslog format: `key=value` pairs, values quoted when they hold spaces; UTM logs are threats.
import { localTimeToIso, rfc3339ToIso } from '../sender-time.js';
import type { SyslogMessage } from '../syslog-header.js';
import { completeThreat, type ParseResult, type ParserContext, protocolName } from './parse-result.js';

/** UTM subtypes that report a threat (FortiOS 6-7: `type=utm subtype=ips`; FortiOS 5: `type=ips`). */
const THREAT_SUBTYPES = new Set(['ips', 'anomaly', 'virus', 'antivirus', 'webfilter', 'app-ctrl']);

/**
 * FortiGate severity (docs/syslog.md, "fortinet") → criticality: the threat's own `severity` (IPS, AV) or
 * `crlevel` (web filter, application control) first, else the log's `level`.
 */
const BY_SEVERITY = new Map([
  ['info', 0],
  ['low', 1],
  ['medium', 2],
  ['high', 3],
  ['critical', 4],
]);
const BY_LEVEL = new Map([
  ['debug', 0],
  ['information', 0],
  ['notice', 1],
  ['warning', 2],
  ['error', 3],
  ['critical', 4],
  ['alert', 4],
  ['emergency', 4],
]);

export function parseFortinet(message: SyslogMessage, ctx: ParserContext): ParseResult {
  const kv = parseKeyValues(message.content);
  if (kv === undefined) return { kind: 'invalid', reason: 'key=value pairs malformed (an unclosed quote)' };
  const type = kv.get('type');
  if (type === undefined) return { kind: 'invalid', reason: 'no type= field' };
  const subtype = type === 'utm' ? kv.get('subtype') : type;
  if (subtype === undefined || !THREAT_SUBTYPES.has(subtype))
    return { kind: 'other', what: [type, kv.get('subtype')].filter(Boolean).join('/') };
  const severity = BY_SEVERITY.get((kv.get('severity') ?? kv.get('crlevel') ?? '').toLowerCase());
  const level = severity ?? BY_LEVEL.get((kv.get('level') ?? '').toLowerCase());
  const detected = fortiTime(kv, ctx.timezone);
  if (detected === null) return { kind: 'invalid', reason: 'date/time malformed' };
  const { threat, threatId } = threatOf(subtype, kv);
  return completeThreat({
    criticality: level ?? ctx.defaultCriticality,
    criticality_source: level === undefined ? 'default' : 'severity',
    src_ip: kv.get('srcip'),
    dst_ip: kv.get('dstip'),
    src_port: kv.get('srcport'),
    dst_port: kv.get('dstport'),
    protocol: protocolName(kv.get('proto')),
    threat,
    threat_id: threatId,
    detected_at: detected ?? message.timestamp,
  });
}

/** The threat's name and id by subtype: the attack, the virus, the web category, the application. */
function threatOf(subtype: string, kv: Map<string, string>): { threat?: string; threatId?: string } {
  switch (subtype) {
    case 'ips':
    case 'anomaly':
      return { threat: kv.get('attack'), threatId: kv.get('attackid') };
    case 'virus':
    case 'antivirus':
      return { threat: kv.get('virus'), threatId: kv.get('virusid') };
    case 'webfilter':
      return { threat: kv.get('catdesc') ?? kv.get('eventtype'), threatId: kv.get('cat') };
    default:
      return { threat: kv.get('app'), threatId: kv.get('appid') };
  }
}

/**
 * `date=YYYY-MM-DD time=hh:mm:ss` in the log's own `tz="+0100"` when FortiOS 6.2+ writes one, else the sensor's
 * zone. UTC ISO, undefined when absent, null when malformed.
 */
function fortiTime(kv: Map<string, string>, zone: string): string | undefined | null {
  const date = kv.get('date');
  const time = kv.get('time');
  if (date === undefined || time === undefined) return undefined;
  const tz = kv.get('tz');
  if (tz !== undefined && /^[+-]\d{4}$/.test(tz)) {
    return rfc3339ToIso(`${date}T${time}${tz.slice(0, 3)}:${tz.slice(3)}`) ?? null;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(`${date} ${time}`);
  if (m === null) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return localTimeToIso(y, mo, d, h, mi, s, zone) ?? null;
}

/**
 * `key=value key="quoted value"` into a map; inside quotes `\"` and `\\` are escapes. The first of a repeated
 * key wins. undefined on an unclosed quote (a truncated message).
 */
export function parseKeyValues(text: string): Map<string, string> | undefined {
  const kv = new Map<string, string>();
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (text[i] === ' ') i++;
    if (i >= n) break;
    const eq = text.indexOf('=', i);
    const space = text.indexOf(' ', i);
    if (eq === -1 || (space !== -1 && space < eq)) {
      // A word without `=` (a stray token): skipped.
      i = space === -1 ? n : space + 1;
      continue;
    }
    const key = text.slice(i, eq);
    let value = '';
    i = eq + 1;
    if (text[i] === '"') {
      i++;
      for (;;) {
        const c = text[i];
        if (c === undefined) return undefined;
        if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) {
          value += text[i + 1];
          i += 2;
        } else if (c === '"') {
          i++;
          break;
        } else {
          value += c;
          i++;
        }
      }
    } else {
      const end = text.indexOf(' ', i);
      value = text.slice(i, end === -1 ? n : end);
      i = end === -1 ? n : end;
    }
    if (!kv.has(key)) kv.set(key, value);
  }
  return kv;
}
