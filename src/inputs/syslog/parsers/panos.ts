// PAN-OS THREAT logs as syslog sends them: CSV in PAN-OS's documented column order, in BSD or IETF syslog.
import { splitThreatName } from '../../../records/threat-name.js';
import { wallTextToIso } from '../sender-time.js';
import type { SyslogMessage } from '../syslog-header.js';
import { completeThreat, type ParseResult, type ParserContext } from './parse-result.js';

/**
 * Columns of the THREAT log (PAN-OS 10.x/11.x "Threat Log Fields", 0-based), the ones read. Newer versions add
 * columns at the end, which are ignored; a row shorter than SEVERITY + 1 is invalid.
 */
const TYPE = 3;
const GENERATED_TIME = 6;
const SOURCE = 7;
const DESTINATION = 8;
const SOURCE_PORT = 24;
const DESTINATION_PORT = 25;
const PROTOCOL = 29;
const THREAT_ID = 32;
const SEVERITY = 34;

/** The columns parsePanos reads: the others are skipped, not sliced (a string each was garbage). */
const READ = new Set([
  TYPE,
  TYPE + 1,
  GENERATED_TIME,
  SOURCE,
  DESTINATION,
  SOURCE_PORT,
  DESTINATION_PORT,
  PROTOCOL,
  THREAT_ID,
  SEVERITY,
]);

/** PAN-OS severity (docs/syslog.md, "panos") → criticality. */
const CRITICALITY = new Map([
  ['informational', 0],
  ['low', 1],
  ['medium', 2],
  ['high', 3],
  ['critical', 4],
]);

export function parsePanos(message: SyslogMessage, ctx: ParserContext): ParseResult {
  // Only the columns read: real THREAT rows have a hundred and more, split for nothing.
  const columns = splitCsv(message.msg, SEVERITY + 1, READ);
  if (columns === undefined) return { kind: 'invalid', reason: 'CSV has an unclosed quote' };
  const type = columns[TYPE];
  if (type === undefined) return { kind: 'invalid', reason: 'not a PAN-OS log (fewer than 4 columns)' };
  if (type !== 'THREAT') return { kind: 'other', what: [type, columns[4]].filter(Boolean).join('/') };
  if (columns.length <= SEVERITY)
    return { kind: 'invalid', reason: `THREAT log with ${columns.length} columns` };
  const severity = CRITICALITY.get((columns[SEVERITY] as string).toLowerCase());
  // `Eicar File Detected(39040)`: name and id (linear: records/threat-name.ts).
  const { name, id } = splitThreatName(columns[THREAT_ID] as string);
  const generated = wallTime(columns[GENERATED_TIME] as string, ctx.timezone);
  if (generated === null) return { kind: 'invalid', reason: 'generated time is malformed' };
  return completeThreat({
    criticality: severity ?? ctx.defaultCriticality,
    criticality_source: severity === undefined ? 'default' : 'severity',
    src_ip: columns[SOURCE],
    dst_ip: columns[DESTINATION],
    src_port: columns[SOURCE_PORT],
    dst_port: columns[DESTINATION_PORT],
    protocol: columns[PROTOCOL],
    threat: name,
    threat_id: id ?? undefined,
    detected_at: generated ?? message.timestamp,
  });
}

/** PAN-OS `YYYY/MM/DD hh:mm:ss` in the sensor's zone: UTC ISO, undefined when empty, null when malformed. */
function wallTime(text: string, zone: string): string | undefined | null {
  if (text === '') return undefined;
  return wallTextToIso(text, zone) ?? null;
}

/**
 * RFC 4180-style CSV of one line: `"` quotes a field, `""` is a quote in it. undefined on an unclosed quote.
 * At most `limit` fields: the rest of the line is not read. A field whose index `read` lacks is given as ''.
 */
export function splitCsv(
  line: string,
  limit = Number.POSITIVE_INFINITY,
  read?: ReadonlySet<number>,
): string[] | undefined {
  const fields: string[] = [];
  let i = 0;
  while (fields.length < limit) {
    if (read !== undefined && !read.has(fields.length)) {
      const next = skipField(line, i);
      if (next === -2) return undefined;
      fields.push('');
      if (next === -1) return fields;
      i = next;
    } else if (line[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const close = line.indexOf('"', i);
        if (close === -1) return undefined;
        value += line.slice(i, close);
        if (line[close + 1] === '"') {
          value += '"';
          i = close + 2;
        } else {
          i = close + 1;
          break;
        }
      }
      // Anything between the closing quote and the comma is kept, as PAN-OS never writes it.
      const comma = line.indexOf(',', i);
      fields.push(value + line.slice(i, comma === -1 ? line.length : comma));
      if (comma === -1) return fields;
      i = comma + 1;
    } else {
      const comma = line.indexOf(',', i);
      fields.push(line.slice(i, comma === -1 ? line.length : comma));
      if (comma === -1) return fields;
      i = comma + 1;
    }
  }
  return fields;
}

/** The index after the comma ending the field at `i`; -1 when it ends the line, -2 on an unclosed quote. */
function skipField(line: string, i: number): number {
  let at = i;
  if (line[at] === '"') {
    for (;;) {
      const close = line.indexOf('"', at + 1);
      if (close === -1) return -2;
      at = close + 1;
      if (line[at] !== '"') break;
    }
  }
  const comma = line.indexOf(',', at);
  return comma === -1 ? -1 : comma + 1;
}
