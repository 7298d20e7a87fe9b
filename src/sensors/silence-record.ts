// The collector's own record of a sensor gone silent or back: stored in the record log like any record, so the
// outputs deliver it at least once with their filters and grouping, and `threats tail` and search show it
// (docs/records.md, "The collector's own records"). Never a threat: its endpoint, `collector`, keeps it out of
// the threat counts, and it has no addresses, so no rule can block anything for it.
import { formatDuration } from '../config/format-duration.js';
import { severityLabel } from '../records/criticality.js';
import { newRecordId } from '../records/record-id.js';
import type { StoredRecord } from '../records/stored-record.js';
import type { SilenceEvent } from './silence-rules.js';

/**
 * 3 (high) for both: a sensor that sends nothing leaves its network unwatched, which an alert output
 * (`minCriticality: 3`) must hear; its end carries the same, so whoever heard the alarm hears it is over.
 */
export const SILENCE_CRITICALITY = 3;

export const SILENT_THREAT = 'sensor silent';
export const BACK_THREAT = 'sensor back';

export function silenceRecord(event: SilenceEvent, now: number): StoredRecord {
  const seconds = (ms: number) => Math.round(ms / 1000);
  return {
    id: newRecordId(now),
    received_at: new Date(now).toISOString(),
    sensor: event.sensor,
    endpoint: 'collector',
    criticality: SILENCE_CRITICALITY,
    severity: severityLabel(SILENCE_CRITICALITY),
    criticality_source: 'collector',
    src_ip: '',
    dst_ip: '',
    dst_port: 0,
    protocol: '',
    threat: event.kind === 'silent' ? SILENT_THREAT : BACK_THREAT,
    remote_addr: '',
    original: {
      event: event.kind === 'silent' ? 'sensor_silent' : 'sensor_back',
      sensor: event.sensor,
      silent_since: event.silent_since,
      last_seen: event.last_seen,
      expect_every: formatDuration(event.expect_every_ms),
      expect_every_seconds: seconds(event.expect_every_ms),
      silent_for: formatDuration(Math.max(1000, Math.round(event.silent_for_ms / 1000) * 1000)),
      silent_for_seconds: seconds(event.silent_for_ms),
    },
  };
}
