// What a power cut left on the disk of a files store, read from LazyFS's backing directory while unmounted:
// every line of every segment, the torn tails, and what the store's own readers make of it.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { createFileRegistry } from '../../src/store/files/file-registry.js';
import { createFileRecordReader } from '../../src/store/files/read-records.js';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';
import { firewallRecord, genericRecord } from '../helpers/records.js';

/** A line of a segment that is not a record: a last line a cut tore, or a hole (NUL bytes) it left mid-write. */
/**
 * The collector's environment on LazyFS: statfs there reports 0 free bytes (the free-space floor would refuse
 * every request), and the per-sensor rate limit is not under test (a fast fill would meet it).
 */
export const LAZYFS_ENV = {
  THREATCOL_STORE_MIN_FREE_BYTES: '0',
  THREATCOL_RATE_LIMIT_RECORDS_PER_SECOND: '0',
};

export interface TornLine {
  segment: string;
  line: number;
  /** Position among all lines of the store, in write order. */
  at: number;
  /** Holds NUL bytes: data written after it reached the disk while this did not. */
  hole: boolean;
  /** Ends with its `\n` (only a hole can make a complete line unreadable). */
  complete: boolean;
}

export interface DiskState {
  /** Record id → how many lines hold it. */
  ids: Map<string, number>;
  /** Every line that is a record (JSON with an id), in write order. */
  records: { id: string; at: number }[];
  torn: TornLine[];
  segments: string[];
  /** Sensor names in the registry, read by the store's own registry reader. */
  sensors: string[];
}

/**
 * Reads a files store line by line (segments in write order: one writer) and checks that the store's reader
 * visits exactly the lines that are records, and that its registry reader reads the sensors.
 */
export async function readDisk(dataDir: string): Promise<DiskState> {
  const ids = new Map<string, number>();
  const records: DiskState['records'] = [];
  const torn: TornLine[] = [];
  const segments = listSegments(threatsDir(dataDir));
  let at = 0;
  for (const segment of segments) {
    const lines = readFileSync(segment.path, 'utf8').split('\n');
    const last = lines.pop() ?? '';
    const tornLine = (line: string, i: number, complete: boolean) =>
      torn.push({ segment: segment.file, line: i + 1, at: at++, hole: line.includes('\0'), complete });
    for (const [i, line] of lines.entries()) {
      let id: unknown;
      try {
        id = (JSON.parse(line) as { id?: unknown }).id;
      } catch {
        tornLine(line, i, true);
        continue;
      }
      assert.equal(typeof id, 'string', `${segment.file} line ${i + 1} has no id`);
      records.push({ id: id as string, at: at++ });
      ids.set(id as string, (ids.get(id as string) ?? 0) + 1);
    }
    if (last !== '') tornLine(last, lines.length, false);
  }
  let visited = 0;
  await createFileRecordReader(dataDir).scan(0, () => {
    visited++;
  });
  assert.equal(visited, records.length, "the store's reader skipped a record or read a torn line as one");
  const sensors = (await createFileRegistry({ dataDir, owner: null }).list()).map((s) => s.name);
  return { ids, records, torn, segments: segments.map((s) => s.file), sensors };
}

/**
 * Torn lines followed by an acknowledged record. Everything acknowledged was fsynced, so a cut can tear only
 * what came after the last of them; a torn line before one is damage that a restart failed to cut off.
 */
export function tornBeforeAcked(acked: Set<string>, disk: DiskState): TornLine[] {
  const lastAcked = disk.records.reduce((max, r) => (acked.has(r.id) ? Math.max(max, r.at) : max), -1);
  return disk.torn.filter((line) => line.at < lastAcked);
}

/** Acknowledged ids missing from a store (id → copies held), and ids it holds more than once. */
export function lostAndDoubled(
  acked: Iterable<string>,
  stored: Map<string, number>,
): { lost: string[]; doubled: string[] } {
  const lost = [...acked].filter((id) => !stored.has(id));
  const doubled = [...stored].filter(([, n]) => n > 1).map(([id]) => id);
  return { lost, doubled };
}

/**
 * A request body of distinct records (dedupe must never fold two of them): `/firewall` a single record with its
 * own source address and port, `/generic` one record or, every fourth time, 25 (a bigger write to tear).
 */
export function distinctBody(endpoint: 'firewall' | 'generic', tag: string, n: number): unknown {
  if (endpoint === 'firewall') {
    return firewallRecord({
      src: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
      sport: 1024 + (n % 60_000),
      threat_name: `Power cut ${tag}-${n}(86708)`,
    });
  }
  if (n % 4 !== 3) return genericRecord({ threat: `power cut ${tag}-${n}` });
  return Array.from({ length: 25 }, (_, i) => genericRecord({ threat: `power cut ${tag}-${n}-${i}` }));
}

/** The threat names of sensor `sensor` on the disk, read from the backing directory while unmounted. */
export function storedThreats(dataDir: string, sensor: string): string[] {
  const threats: string[] = [];
  for (const segment of listSegments(threatsDir(dataDir))) {
    for (const line of readFileSync(segment.path, 'utf8').split('\n')) {
      let record: { sensor?: string; threat?: string };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        continue; // a torn last line: what the cut tore, cut off at the next start
      }
      if (record.sensor === sensor && typeof record.threat === 'string') threats.push(record.threat);
    }
  }
  return threats;
}
