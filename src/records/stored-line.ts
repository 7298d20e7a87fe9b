// A stored record's line: the text JSON.stringify(record) gives, written field by field. JSON.stringify walks
// the ~18 fields generically and was the largest single cost of storing a keep-alive record (about 5 µs of
// ~100); here only the strings a sender chose are escaped, and `original` is serialized once per record even
// when its retry-dedupe key needs the same text (test/unit/stored-line.test.ts holds the two equal).
import { quoteJson as quote } from './json-quote.js';
import { BuiltRecord, type StoredRecord } from './stored-record.js';

/** JSON.stringify(record.original), computed once per built record. */
export function originalJson(record: StoredRecord): string {
  return record instanceof BuiltRecord ? record.canonicalText() : JSON.stringify(record.original);
}

/**
 * The record as one line of JSON (no newline): byte for byte what JSON.stringify(record) gives, but for
 * `original` when the sender's own text of it was kept (BuiltRecord.keepSentText).
 */
export function storedLine(r: StoredRecord): string {
  // A record read back from a store (`store migrate`) keeps whatever fields and order it has.
  if (!(r instanceof BuiltRecord)) return JSON.stringify(r);
  // Fields the server makes (ids, times, labels) never need escaping, nor, when the body had no escape, the
  // strings taken from it (checking six strings a record was ~0.3 µs of it); the rest go through quote().
  const q = r.hasPlainStrings() ? plain : quote;
  let line = `{"id":"${r.id}","received_at":"${r.received_at}","sensor":${quoteSensor(r.sensor)},"endpoint":"${r.endpoint}"`;
  if (r.format !== undefined) line += `,"format":${quote(r.format)}`;
  line += `,"criticality":${num(r.criticality)},"severity":"${r.severity}","criticality_source":"${r.criticality_source}","src_ip":${q(r.src_ip)},"dst_ip":${q(r.dst_ip)}`;
  if (r.src_port !== undefined) line += `,"src_port":${num(r.src_port)}`;
  line += `,"dst_port":${num(r.dst_port)},"protocol":${q(r.protocol)},"threat":${q(r.threat)}`;
  if (r.threat_id !== undefined) line += `,"threat_id":${q(r.threat_id)}`;
  if (r.detected_at !== undefined) line += `,"detected_at":"${r.detected_at}"`;
  if (r.src_country !== undefined) line += `,"src_country":${quote(r.src_country)}`;
  if (r.src_asn !== undefined) line += `,"src_asn":${num(r.src_asn)}`;
  if (r.src_as_org !== undefined)
    line += `,"src_as_org":${r.isPlainOrg('src', r.src_as_org) ? plain(r.src_as_org) : quote(r.src_as_org)}`;
  if (r.dst_country !== undefined) line += `,"dst_country":${quote(r.dst_country)}`;
  if (r.dst_asn !== undefined) line += `,"dst_asn":${num(r.dst_asn)}`;
  if (r.dst_as_org !== undefined)
    line += `,"dst_as_org":${r.isPlainOrg('dst', r.dst_as_org) ? plain(r.dst_as_org) : quote(r.dst_as_org)}`;
  line += `,"remote_addr":${quote(r.remote_addr)},"original":${r.sentText() ?? r.canonicalText()}`;
  if (r.repaired === true) line += ',"repaired":true';
  if (r.truncated === true) line += ',"truncated":true';
  if (r.other === true) line += ',"other":true';
  if (r.dedupe_key !== undefined) line += `,"dedupe_key":${quote(r.dedupe_key)}`;
  return `${line}}`;
}

/** A string known to need no escaping, quoted. */
function plain(s: string): string {
  return `"${s}"`;
}

/** The last sensor name quoted: a request's records, and a busy sensor's requests, share it. */
let lastSensor = '';
let lastSensorJson = '""';

function quoteSensor(name: string): string {
  if (name !== lastSensor) {
    lastSensorJson = quote(name);
    lastSensor = name;
  }
  return lastSensorJson;
}

/**
 * The records' lines, each ended by a newline, as UTF-8. When every record says its line is ASCII (nearly
 * always: BuiltRecord.isAscii) the text is encoded as latin1, which for ASCII is the same bytes: node's UTF-8
 * encoder walks a string built of many pieces ~4x slower than its latin1 copy (88 against 20 µs for 100
 * records, measured), and the pieces are what storedLine makes.
 */
export function encodeLines(records: readonly StoredRecord[]): Buffer {
  let text = '';
  let ascii = true;
  for (const record of records) {
    text += `${storedLine(record)}\n`;
    if (ascii && !(record instanceof BuiltRecord && record.isAscii())) ascii = false;
  }
  return Buffer.from(text, ascii ? 'latin1' : 'utf8');
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: all of ASCII, controls included
const ASCII = /^[\x00-\x7f]*$/;

/** Whether every character of `text` is ASCII (its latin1 and UTF-8 bytes are then the same). */
export function isAsciiText(text: string): boolean {
  return ASCII.test(text);
}

/** A number as JSON writes it (NaN and infinities as null). */
function num(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}
