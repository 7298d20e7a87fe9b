// What counts as a stored record when reading one back: the one shape check both backends apply to every
// line or message before a reader, a filter or a printer sees it (anything else is skipped and counted).
import { RECORD_ENDPOINTS, type StoredRecord } from '../records/stored-record.js';
import { READABLE_SENSOR_NAME } from './registry.js';

const ENDPOINTS = new Set<string>(RECORD_ENDPOINTS);

/**
 * The fields every reader, filter and aggregation relies on, with their types. A stream shared with other
 * publishers, or a hand-edited segment, may hold any JSON (`null`, `5`, `{}`): it must not reach them. The
 * other fields are only displayed, and every display cleans what it prints (cli/terminal-text.ts).
 */
export function isStoredRecord(value: unknown): value is StoredRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.id === 'string' &&
    typeof r.received_at === 'string' &&
    !Number.isNaN(Date.parse(r.received_at)) &&
    // A name a registry may hold (never empty, so a valid NATS subject token once encoded: `store migrate` can
    // copy every record that passes).
    typeof r.sensor === 'string' &&
    READABLE_SENSOR_NAME.test(r.sensor) &&
    typeof r.endpoint === 'string' &&
    ENDPOINTS.has(r.endpoint) &&
    Number.isInteger(r.criticality) &&
    (r.criticality as number) >= 0 &&
    (r.criticality as number) <= 4
  );
}

/** Parses one stored line; null for anything that is not a stored record (never thrown: readers skip it). */
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
