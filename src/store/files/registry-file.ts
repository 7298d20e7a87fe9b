// sensors.json as lowdb reads and writes it: strict reads that set aside entries that are not sensors, atomic
// and durable writes (mode 0600, the data directory's owner) that keep those entries as they were.
import { readFileSync } from 'node:fs';
import { type Owner, writeFileAtomic } from '../../data-dir/file-owner.js';
import { isPermissionError, permissionDenied, ThreatcolError } from '../../errors.js';
import { READABLE_SENSOR_NAME, type RegistryData, type RejectedEntry } from '../registry.js';
import { sensorProblem, sortEntries } from '../sensor-entries.js';

const REGISTRY_MODE = 0o600;

/**
 * A lowdb adapter that reads strictly and writes atomically, durably, with mode 0600 and the right owner. An
 * absent file reads as an empty registry, never as null: lowdb keeps its previous data on null, which in the
 * long-lived daemon would keep serving sensors of a registry that was removed. Entries that are not valid
 * sensors (a hand edit) are left out of what it reads and written back as they were, so nobody's change
 * silently deletes them; a valid sensor written under the same name replaces them.
 */
export class RegistryFileAdapter {
  private invalid: unknown[] = [];
  /** The entries of the last read that are not valid sensors, and why. */
  rejected: RejectedEntry[] = [];

  constructor(
    private readonly path: string,
    private readonly owner: Owner | null,
    private readonly report: (rejected: RejectedEntry[]) => void,
  ) {}

  async read(): Promise<RegistryData> {
    const raw = readRegistryFile(this.path)?.sensors ?? [];
    const { sensors, rejected } = sortEntries(raw.map((value, i) => ({ entry: entryName(value, i), value })));
    this.invalid = raw.filter((value) => sensorProblem(value) !== null);
    this.rejected = rejected;
    this.report(rejected);
    return { version: 1, sensors };
  }

  async write(data: RegistryData): Promise<void> {
    const names = new Set(data.sensors.map((s) => s.name));
    const kept = this.invalid.filter(
      (value) => !names.has((value as { name?: unknown } | null)?.name as string),
    );
    const sensors = [...data.sensors, ...kept];
    writeFileAtomic(
      this.path,
      `${JSON.stringify({ version: 1, sensors }, null, 2)}\n`,
      REGISTRY_MODE,
      this.owner,
    );
  }
}

/** How a report names an entry: its name when it is a valid one (safe to print), else its position. */
function entryName(value: unknown, index: number): string {
  const name = (value as { name?: unknown } | null)?.name;
  return typeof name === 'string' && READABLE_SENSOR_NAME.test(name)
    ? name
    : `entry ${index + 1} of the file`;
}

function readRegistryFile(path: string): { version: 1; sensors: unknown[] } | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (isPermissionError(error)) throw permissionDenied(error, path, 'read');
    throw new ThreatcolError('REGISTRY_CORRUPT', `cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const data = JSON.parse(text) as { version: 1; sensors: unknown[] };
    if (data?.version !== 1 || !Array.isArray(data.sensors)) throw new Error('unexpected shape');
    return data;
  } catch (error) {
    throw new ThreatcolError(
      'REGISTRY_CORRUPT',
      `${path} is not a valid sensor registry: ${(error as Error).message}`,
    );
  }
}
