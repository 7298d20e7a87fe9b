// An output's filter as a record predicate: criticality floor, sensors, endpoints (all given ones must hold).
import type { OutputConfig } from '../config/outputs-schema.js';
import type { RecordHead } from '../store/store.js';

export function outputMatcher(filter: OutputConfig['filter']): (record: RecordHead) => boolean {
  const sensors = filter.sensors === null ? null : new Set(filter.sensors);
  const endpoints = filter.endpoints === null ? null : new Set<string>(filter.endpoints);
  return (record) =>
    record.criticality >= filter.minCriticality &&
    (sensors === null || sensors.has(record.sensor)) &&
    (endpoints === null || endpoints.has(record.endpoint));
}
