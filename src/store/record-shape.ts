// What counts as a stored record when reading one back: the one shape check both backends apply to every
// line or message before a reader, a filter, a printer or an output's receiver sees it (anything else is
// skipped and counted).
import { RECORD_ENDPOINTS, type StoredRecord } from '../records/stored-record.js';
import { READABLE_SENSOR_NAME } from './registry.js';

const ENDPOINTS = new Set<string>(RECORD_ENDPOINTS);

const isString = (v: unknown): v is string => typeof v === 'string';
const optionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';
const optionalTrue = (v: unknown): boolean => v === undefined || v === true;
/** 0-65535, as every input stores a port (schemas/common.ts `port`, the syslog parsers). */
const isPort = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535;
/** An AS number: 0 to 2^32-1. */
const optionalAsn = (v: unknown): boolean =>
  v === undefined || (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff);
const isPlainObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The whole stored record (records/stored-record.ts, docs/records.md), field by field with the type every
 * reader relies on: the head (id, time, sensor, endpoint, criticality) that filters, envelopes and cursors read,
 * and the rest that CEF, Slack, mail, the look-up's threat filter, `threats stats` and the dashboard read. A
 * stream shared with other publishers, or a hand-edited segment, may hold any JSON (`null`, `5`, `{}`, a record
 * cut to its head, `"threat": 5`): none of it may reach them. What the strings say is not checked here: every
 * display cleans what it prints (cli/terminal-text.ts) and every receiver escapes what it formats.
 */
export function isStoredRecord(value: unknown): value is StoredRecord {
  if (!isPlainObject(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    isString(r.id) &&
    r.id !== '' &&
    isString(r.received_at) &&
    !Number.isNaN(Date.parse(r.received_at)) &&
    // A name a registry may hold (never empty, so a valid NATS subject token once encoded: `store migrate` can
    // copy every record that passes).
    isString(r.sensor) &&
    READABLE_SENSOR_NAME.test(r.sensor) &&
    isString(r.endpoint) &&
    ENDPOINTS.has(r.endpoint) &&
    Number.isInteger(r.criticality) &&
    (r.criticality as number) >= 0 &&
    (r.criticality as number) <= 4 &&
    isString(r.severity) &&
    isString(r.criticality_source) &&
    isString(r.src_ip) &&
    isString(r.dst_ip) &&
    (r.src_port === undefined || isPort(r.src_port)) &&
    isPort(r.dst_port) &&
    isString(r.protocol) &&
    isString(r.threat) &&
    optionalString(r.threat_id) &&
    optionalString(r.detected_at) &&
    optionalString(r.src_country) &&
    optionalAsn(r.src_asn) &&
    optionalString(r.src_as_org) &&
    optionalString(r.dst_country) &&
    optionalAsn(r.dst_asn) &&
    optionalString(r.dst_as_org) &&
    isString(r.remote_addr) &&
    optionalTrue(r.repaired) &&
    optionalTrue(r.truncated) &&
    optionalTrue(r.other) &&
    optionalString(r.dedupe_key) &&
    // Per endpoint: a syslog record has its sensor's format and the message's text; the HTTPS routes' records
    // have the JSON object as received, and no format.
    (r.endpoint === 'syslog'
      ? isString(r.format) && isString(r.original)
      : r.format === undefined && isPlainObject(r.original))
  );
}

/**
 * Parses one stored line; null for anything that is not exactly one stored record (never thrown: readers skip
 * it). JSON.parse takes one JSON text only, so a line holding a second object after the first (`{…}{…}`,
 * `{…},{…}`, or `{…}\n{…}` in a NATS message) is refused whole, never read as its first record.
 */
export function parseStoredRecord(line: string): StoredRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  return isStoredRecord(value) ? value : null;
}

/** A reader's parse: the line's record, or null (then counted as skipped, `where` naming the line's place). */
export type ParseStored = (line: string, where: string) => StoredRecord | null;
