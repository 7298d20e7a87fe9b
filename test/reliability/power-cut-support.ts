// What a power cut left on the disk of a files store, read from LazyFS's backing directory while unmounted:
// every line of every segment, the torn tails, and what the store's own readers make of it.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { createFileRegistry } from '../../src/store/file-registry.js';
import { createFileRecordReader } from '../../src/store/read-records.js';
import { listSegments, threatsDir } from '../../src/store/segments.js';
import { firewallRecord, genericRecord } from '../helpers/records.js';

export interface DiskState {
  /** Record id → how many lines hold it. */
  ids: Map<string, number>;
  /** Every complete line, parsed, oldest segment first. */
  records: Record<string, unknown>[];
  /** Segments ending in a line without its `\n` (a write the cut tore): allowed only as a file's last bytes. */
  tornTails: string[];
  segments: string[];
  /** Sensor names in the registry, read by the store's own registry reader. */
  sensors: string[];
}

/**
 * Reads a files store strictly: every `\n`-terminated line of every segment must be a JSON record with an id
 * (a torn line in the middle of a file fails here), and the store's reader must visit every one of them.
 */
export async function readDisk(dataDir: string): Promise<DiskState> {
  const ids = new Map<string, number>();
  const records: Record<string, unknown>[] = [];
  const tornTails: string[] = [];
  const segments = listSegments(threatsDir(dataDir));
  for (const segment of segments) {
    const text = readFileSync(segment.path, 'utf8');
    const lines = text.split('\n');
    if ((lines.pop() ?? '') !== '') tornTails.push(segment.file);
    lines.forEach((line, i) => {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`${segment.file} line ${i + 1} does not parse: ${line.slice(0, 120)}`);
      }
      assert.equal(typeof record.id, 'string', `${segment.file} line ${i + 1} has no id`);
      records.push(record);
      ids.set(record.id as string, (ids.get(record.id as string) ?? 0) + 1);
    });
  }
  let visited = 0;
  await createFileRecordReader(dataDir).scan(0, () => {
    visited++;
  });
  assert.equal(visited, records.length, "the store's reader skipped or added lines");
  const sensors = (await createFileRegistry({ dataDir, owner: null }).list()).map((s) => s.name);
  return { ids, records, tornTails, segments: segments.map((s) => s.file), sensors };
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
