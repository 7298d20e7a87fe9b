// Sample records and a reader for what the collector stored.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newRecordId } from '../../src/records/record-id.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';

export function firewallRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    threat_name: 'EICAR Test File Detection(86708)',
    threatid: 'EICAR Test File Detection(86708)',
    src: '192.0.2.10',
    dst: '198.51.100.20',
    proto: 'tcp',
    subcategory_of_app: 'file-sharing',
    thr_category: 'virus',
    app: 'web-browsing',
    time_received: '2026/11/21 10:15:30',
    sport: 51234,
    dport: 443,
    severity: 'high',
    ...overrides,
  };
}

export function genericRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source_ip: '203.0.113.5',
    destination_ip: '2001:db8::1',
    destination_port: 22,
    protocol: 'TCP',
    threat: 'SSH brute force',
    criticality: 3,
    ...overrides,
  };
}

/**
 * What the collector stores for `genericRecord()` (one line of a segment), for tests that write segments by
 * hand; `overrides` replace fields (id, received_at, sensor, threat, original, ...).
 */
export function storedGenericRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: newRecordId(),
    received_at: new Date().toISOString(),
    sensor: 'fw1',
    endpoint: 'generic',
    criticality: 3,
    severity: 'high',
    criticality_source: 'sender',
    src_ip: '203.0.113.5',
    dst_ip: '2001:db8::1',
    dst_port: 22,
    protocol: 'TCP',
    threat: 'SSH brute force',
    remote_addr: '127.0.0.1',
    original: genericRecord(),
    ...overrides,
  };
}

/** Raw text of every segment, oldest first. */
export function readStoreText(dataDir: string): string {
  return listSegments(threatsDir(dataDir))
    .map((s) => readFileSync(s.path, 'utf8'))
    .join('');
}

/** Every stored record, parsed; throws on a torn or invalid line. */
export function readStored(dataDir: string): Record<string, unknown>[] {
  const text = readStoreText(dataDir);
  if (text !== '' && !text.endsWith('\n')) throw new Error('store ends with a torn line');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What a made-up record varies in: how long ago it came (and 30 s more), from where, to where, what, by whom. */
export interface RecordSpec {
  ageMinutes: number;
  src: string;
  dst: string;
  /** Destination port (default 443). */
  port?: number;
  threat: string;
  sensor: string;
  criticality: number;
}

/** Stored records from specs, oldest first: received half a minute off the minute, clear of a window's edges. */
export function recordsFromSpecs(specs: RecordSpec[], now: number): StoredRecord[] {
  return specs
    .map((s) => ({ at: now - s.ageMinutes * 60_000 - 30_000, s }))
    .sort((a, b) => a.at - b.at)
    .map(({ at, s }) => ({
      id: newRecordId(at),
      received_at: new Date(at).toISOString(),
      sensor: s.sensor,
      endpoint: 'firewall' as const,
      criticality: s.criticality,
      severity: 'medium',
      criticality_source: 'severity' as const,
      src_ip: s.src,
      dst_ip: s.dst,
      src_port: 40000,
      dst_port: s.port ?? 443,
      protocol: 'tcp',
      threat: s.threat,
      remote_addr: '127.0.0.1',
      original: {},
    }));
}

/** A files store holding `records` (oldest first), one segment per UTC day, written by hand. */
export function writeDaySegments(dataDir: string, records: StoredRecord[]): void {
  const threats = join(dataDir, 'threats');
  mkdirSync(threats, { recursive: true });
  const days = new Map<string, string>();
  for (const r of records) {
    const day = r.received_at.slice(0, 10).replaceAll('-', '');
    days.set(day, `${days.get(day) ?? ''}${JSON.stringify(r)}\n`);
  }
  for (const [day, text] of days) writeFileSync(join(threats, `${day}-000001.ndjson`), text);
}
