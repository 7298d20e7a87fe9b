// Parses one stored line; null for a line that is not a stored record (never thrown: readers skip it).
import type { StoredRecord } from '../../records/stored-record.js';

export function parseLine(line: string): StoredRecord | null {
  try {
    const record = JSON.parse(line) as StoredRecord;
    return record !== null && typeof record === 'object' && typeof record.received_at === 'string'
      ? record
      : null;
  } catch {
    return null;
  }
}
