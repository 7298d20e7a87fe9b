// The record log interface: append records durably. The files under <dataDir>/threats are one implementation.
import type { StoredRecord } from '../records/stored-record.js';

export interface RecordLog {
  /** Resolves once every record is on disk (written and synced); rejects with a ThreatcolError otherwise. */
  append(records: StoredRecord[]): Promise<void>;
  /** Records accepted but not yet durable. */
  readonly queuedRecords: number;
  /** Waits for queued records to be synced, then releases the files. */
  close(): Promise<void>;
}
