// ArcSight CEF (`CEF:Version|Vendor|Product|Version|SignatureID|Name|Severity|Extension`), as Check Point,
// Sophos, FortiGate and many IDSs send it, with the header's `\|` `\\` and the extension's `\=` `\\` escapes.
import { memoIsoTime } from '../../../records/iso-time.js';
import { localTimeToIso } from '../sender-time.js';
import type { SyslogMessage } from '../syslog-header.js';
import { completeThreat, type ParseResult, type ParserContext, protocolName } from './parse-result.js';

/** CEF severity (docs/syslog.md, "cef") → criticality: the number 0-10, or its label. */
const BY_LABEL = new Map([
  ['unknown', -1],
  ['low', 1],
  ['medium', 2],
  ['high', 3],
  ['very-high', 4],
]);

function criticalityOf(severity: string): number | undefined {
  if (/^\d{1,2}$/.test(severity)) {
    const n = Number(severity);
    if (n > 10) return undefined;
    return n === 0 ? 0 : n <= 3 ? 1 : n <= 6 ? 2 : n <= 8 ? 3 : 4;
  }
  const level = BY_LABEL.get(severity.toLowerCase());
  return level === undefined || level < 0 ? undefined : level;
}

export function parseCef(message: SyslogMessage, ctx: ParserContext): ParseResult {
  // A BSD header may have taken `CEF:` for a TAG: look for the marker in the whole content.
  const start = message.content.indexOf('CEF:');
  if (start === -1) return { kind: 'invalid', reason: 'no CEF: header' };
  const header = splitHeader(message.content.slice(start + 4));
  if (header === undefined) return { kind: 'invalid', reason: 'CEF header has fewer than 8 fields' };
  const [, , , , signatureId, name, severity, extensionText] = header as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const ext = parseExtension(extensionText);
  const category = (ext.get('cat') ?? '').toLowerCase();
  // Firewalls send their traffic and system events as CEF too: those are not threats.
  if (category.startsWith('traffic') || category.startsWith('event')) return { kind: 'other', what: name };
  const src = ext.get('src') ?? ext.get('c6a2');
  const dst = ext.get('dst') ?? ext.get('c6a3');
  if (src === undefined && dst === undefined) return { kind: 'other', what: name };
  const level = criticalityOf(severity);
  const detected = eventTime(ext.get('rt') ?? ext.get('end') ?? ext.get('start'), ctx.timezone);
  if (detected === null) return { kind: 'invalid', reason: 'rt/end/start is no time' };
  return completeThreat({
    criticality: level ?? ctx.defaultCriticality,
    criticality_source: level === undefined ? 'default' : 'severity',
    src_ip: src,
    dst_ip: dst,
    src_port: ext.get('spt'),
    dst_port: ext.get('dpt'),
    protocol: protocolName(ext.get('proto')),
    threat: name,
    threat_id: signatureId,
    detected_at: detected ?? message.timestamp,
  });
}

/** The 7 header fields and the extension, unescaped (`\|` and `\\`); undefined when there are fewer. */
function splitHeader(text: string): string[] | undefined {
  // Sliced between the bars, not built a character at a time: this runs for every CEF message.
  const fields: string[] = [];
  let value = '';
  let i = 0;
  let backslash = text.indexOf('\\');
  while (fields.length < 7) {
    const bar = text.indexOf('|', i);
    if (bar === -1) return undefined;
    if (backslash !== -1 && backslash < i) backslash = text.indexOf('\\', i);
    if (backslash !== -1 && backslash < bar) {
      const next = text[backslash + 1];
      const escapes = next === '|' || next === '\\';
      value += text.slice(i, escapes ? backslash : backslash + 1) + (escapes ? next : '');
      i = escapes ? backslash + 2 : backslash + 1;
      continue;
    }
    fields.push(value + text.slice(i, bar));
    value = '';
    i = bar + 1;
  }
  fields.push(text.slice(i));
  return fields;
}

/**
 * The extension's `key=value` pairs. A value runs to the space before the next `key=` (values may hold
 * spaces); `\=`, `\\`, `\n` and `\r` are unescaped. The first of a repeated key wins.
 */
export function parseExtension(text: string): Map<string, string> {
  const pairs = new Map<string, string>();
  // A key starts the text or follows a space: letters, digits, `_` or `.`, then `=` (an escaped `\=` is
  // never one: a backslash is no key character). Scanned by hand: a regular expression's match objects
  // were a tenth of a CEF message's cost, and garbage.
  let key = '';
  let from = -1;
  for (let p = 0; p <= text.length; ) {
    let q = p;
    while (q < text.length && isKeyChar(text.charCodeAt(q))) q++;
    if (q > p && text.charCodeAt(q) === 61) {
      if (from !== -1 && !pairs.has(key)) pairs.set(key, extensionValue(text, from, p - 1));
      key = text.slice(p, q);
      from = q + 1;
    }
    const space = text.indexOf(' ', p);
    if (space === -1) break;
    p = space + 1;
  }
  if (from !== -1 && !pairs.has(key)) pairs.set(key, extensionValue(text, from, text.length));
  return pairs;
}

/** `A-Z`, `a-z`, `0-9`, `_`, `.`. */
function isKeyChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46;
}

function extensionValue(text: string, from: number, to: number): string {
  return unescapeValue(text.slice(from, Math.max(from, to)).trimEnd());
}

function unescapeValue(value: string): string {
  if (!value.includes('\\')) return value;
  return value.replace(/\\([=\\nr])/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
}

/** `rt` in milliseconds since the epoch: a sender's messages of one second share most of the text. */
const epochIso = memoIsoTime();

const MONTHS = 'JanFebMarAprMayJunJulAugSepOctNovDec';
const CEF_TIME = /^([A-Z][a-z]{2}) (\d{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{3})?$/;

/**
 * CEF's time: milliseconds since the epoch, or `MMM dd yyyy HH:mm:ss[.SSS]` in the sensor's zone (CEF allows
 * a zone name after it, which is not read: the sensor's zone is). UTC ISO, undefined when absent, null when
 * malformed.
 */
function eventTime(text: string | undefined, zone: string): string | undefined | null {
  if (text === undefined || text === '') return undefined;
  if (/^\d{1,13}$/.test(text)) return epochIso(Number(text));
  const m = CEF_TIME.exec(text.split(' ').slice(0, 4).join(' '));
  if (m === null) return null;
  const month = MONTHS.indexOf(m[1] as string) / 3 + 1;
  if (!Number.isInteger(month) || month < 1) return null;
  const [d, y, h, mi, s] = [m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  return localTimeToIso(y, month, d, h, mi, s, zone) ?? null;
}
