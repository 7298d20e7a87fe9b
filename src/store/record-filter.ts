// One predicate from a reader's RecordFilter (sensor, endpoint, minimum criticality, since) and an extra match.
import type { StoredRecord } from '../records/stored-record.js';
import type { RecordFilter } from './store.js';

export function recordMatcher(
  filter: RecordFilter | undefined,
  match?: (record: StoredRecord) => boolean,
): (record: StoredRecord) => boolean {
  const { sensor, endpoint, minCriticality, since } = filter ?? {};
  return (record) =>
    (sensor === undefined || record.sensor === sensor) &&
    (endpoint === undefined || record.endpoint === endpoint) &&
    (minCriticality === undefined || record.criticality >= minCriticality) &&
    (since === undefined || Date.parse(record.received_at) >= since) &&
    (match === undefined || match(record));
}
