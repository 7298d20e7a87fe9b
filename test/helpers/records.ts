// Sample records and a reader for what the collector stored.
import { readFileSync } from 'node:fs';
import { newRecordId } from '../../src/records/record-id.js';
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
