// Reads a syslog message's header, IETF (RFC 5424) or BSD (RFC 3164), and hands the rest to the format parsers.
import { bsdTimeToIso, rfc3339ToIso } from './sender-time.js';

export interface SyslogMessage {
  header: 'rfc5424' | 'rfc3164';
  facility: number;
  severity: number;
  /** The header's time as UTC ISO (BSD times read in the sensor's zone), when it had one. */
  timestamp: string | undefined;
  hostname: string | undefined;
  /** RFC 5424 APP-NAME, or the BSD TAG without its `[pid]`. */
  appName: string | undefined;
  procId: string | undefined;
  msgId: string | undefined;
  /** RFC 5424 STRUCTURED-DATA as sent (`[id k="v"]...`), undefined for `-` and in BSD messages. */
  structuredData: string | undefined;
  /** The message after the header (and after a BSD TAG, and a UTF-8 BOM): what the format parsers read. */
  msg: string;
  /**
   * BSD only: the text after HOSTNAME, the TAG included. What looks like a TAG may be the message's own
   * start (`CEF:0|...`), so parsers that find their format by a marker search here.
   */
  content: string;
}

export type HeaderResult = { ok: true; message: SyslogMessage } | { ok: false; reason: string };

export interface HeaderContext {
  /** The sensor's IANA time zone, for BSD times, which carry none. */
  timezone: string;
  /** Now, to infer the year a BSD time leaves out. */
  nowMs: number;
}

const BSD_TIME = /^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?= )/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\S+(?= )/;
/** A BSD TAG: up to 48 characters without space, colon or brackets, an optional `[pid]`, then a colon. */
const TAG = /^([^\s:[\]]{1,48})(?:\[([^\]\s]{0,128})\])?: ?/;
const BOM = '\ufeff';

/** Never throws: any text is a message or a reason it is none. */
export function parseSyslogHeader(text: string, ctx: HeaderContext): HeaderResult {
  const close = priEnd(text);
  if (close === -1) return { ok: false, reason: 'no <PRI> at the start' };
  const value = Number(text.slice(1, close));
  if (value > 191) return { ok: false, reason: `PRI ${value} is over 191` };
  const rest = text.slice(close + 1);
  const facility = value >> 3;
  const severity = value & 7;
  return /^[1-9]\d{0,2} /.test(rest)
    ? parse5424(rest, facility, severity)
    : parse3164(rest, facility, severity, ctx);
}

/** The index of the `>` of a `<PRI>` opening `text` (`0`, or 1-3 digits without a leading zero), or -1. */
function priEnd(text: string): number {
  if (text.charCodeAt(0) !== 0x3c) return -1;
  let i = 1;
  while (i < 5 && i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) break;
    if (i === 2 && text.charCodeAt(1) === 0x30) return -1; // a leading zero
    i++;
  }
  return i > 1 && i < 5 && text.charCodeAt(i) === 0x3e ? i : -1;
}

function parse5424(rest: string, facility: number, severity: number): HeaderResult {
  // VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID, each ended by one space.
  const fields: string[] = [];
  let at = 0;
  for (let i = 0; i < 6; i++) {
    const space = rest.indexOf(' ', at);
    if (space === -1 || space === at) return { ok: false, reason: 'RFC 5424 header cut short' };
    fields.push(rest.slice(at, space));
    at = space + 1;
  }
  const [, time, host, app, proc, msgId] = fields as [string, string, string, string, string, string];
  let timestamp: string | undefined;
  if (time !== '-') {
    timestamp = rfc3339ToIso(time);
    if (timestamp === undefined) return { ok: false, reason: 'RFC 5424 TIMESTAMP is no RFC 3339 time' };
  }
  const sdEnd = structuredDataEnd(rest, at);
  if (sdEnd === -1) return { ok: false, reason: 'RFC 5424 STRUCTURED-DATA malformed' };
  const sd = rest.slice(at, sdEnd);
  let msg = '';
  if (sdEnd < rest.length) {
    if (rest[sdEnd] !== ' ') return { ok: false, reason: 'RFC 5424 STRUCTURED-DATA not followed by a space' };
    msg = rest.slice(sdEnd + 1);
  }
  if (msg.startsWith(BOM)) msg = msg.slice(1);
  return {
    ok: true,
    message: {
      header: 'rfc5424',
      facility,
      severity,
      timestamp,
      hostname: nil(host),
      appName: nil(app),
      procId: nil(proc),
      msgId: nil(msgId),
      structuredData: sd === '-' ? undefined : sd,
      msg,
      content: msg,
    },
  };
}

/**
 * The index just past STRUCTURED-DATA starting at `at`: `-`, or `[...]` elements whose quoted values may hold
 * `\"`, `\\` and `\]`. -1 when it is neither.
 */
function structuredDataEnd(text: string, at: number): number {
  if (text[at] === '-') return at + 1;
  if (text[at] !== '[') return -1;
  let i = at;
  while (text[i] === '[') {
    i++;
    let quoted = false;
    for (;;) {
      const c = text[i];
      if (c === undefined) return -1;
      if (quoted) {
        if (c === '\\') i++;
        else if (c === '"') quoted = false;
      } else if (c === '"') quoted = true;
      else if (c === ']') break;
      i++;
    }
    i++;
  }
  return i;
}

function parse3164(rest: string, facility: number, severity: number, ctx: HeaderContext): HeaderResult {
  let timestamp: string | undefined;
  let hostname: string | undefined;
  let content = rest;
  // RFC 3164 4.3.2: without a valid TIMESTAMP, everything after PRI is the message (FortiGate sends so).
  const time = BSD_TIME.exec(rest) ?? ISO_TIME.exec(rest);
  if (time !== null) {
    const text = time[0];
    timestamp = text.includes('-') ? rfc3339ToIso(text) : bsdTimeToIso(text, ctx.timezone, ctx.nowMs);
    if (timestamp !== undefined) {
      const afterTime = rest.slice(text.length + 1);
      const space = afterTime.indexOf(' ');
      hostname = space > 0 ? afterTime.slice(0, space) : undefined;
      content = hostname === undefined ? afterTime : afterTime.slice(space + 1);
    }
  }
  let appName: string | undefined;
  let procId: string | undefined;
  let msg = content;
  const tag = TAG.exec(content);
  if (tag !== null) {
    appName = tag[1];
    procId = tag[2];
    msg = content.slice(tag[0].length);
  }
  if (msg.startsWith(BOM)) msg = msg.slice(1);
  return {
    ok: true,
    message: {
      header: 'rfc3164',
      facility,
      severity,
      timestamp,
      hostname,
      appName,
      procId,
      msgId: undefined,
      structuredData: undefined,
      msg,
      content,
    },
  };
}

function nil(field: string): string | undefined {
  return field === '-' ? undefined : field;
}
