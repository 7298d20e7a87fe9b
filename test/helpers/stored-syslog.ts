// Waits until the store holds at least `count` syslog records, read back as `threats tail --json` prints them:
// the syslog tests' one way to see what a sender's messages became.
import { runCli } from './cli.js';
import { until } from './until.js';

/** Every stored syslog record (the last `lines`), read back as `threats tail --json` prints them. */
export async function readStoredSyslog(dataDir: string, lines = 1000): Promise<Record<string, unknown>[]> {
  const tail = await runCli([
    'threats',
    'tail',
    '--data-dir',
    dataDir,
    '--no-follow',
    '--json',
    '-n',
    String(lines),
    '--endpoint',
    'syslog',
  ]);
  return tail.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export async function storedSyslog(
  dataDir: string,
  count: number,
  what = `${count} syslog records stored`,
  limitMs = 20_000,
): Promise<Record<string, unknown>[]> {
  let records: Record<string, unknown>[] = [];
  await until(
    async () => {
      records = await readStoredSyslog(dataDir);
      return records.length >= count;
    },
    limitMs,
    what,
    100,
  );
  return records;
}
