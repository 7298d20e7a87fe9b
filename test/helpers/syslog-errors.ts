// What `threatcol sensor show NAME --syslog-errors --json` reports from a running serve's admin listener: the
// syslog tests' one way to read a sensor's syslog counters and unreadable samples.
import assert from 'node:assert/strict';
import type { SyslogErrorSample, SyslogFormatCounts } from '../../src/inputs/syslog/syslog-tally.js';
import { runCli, type ServeProcess } from './cli.js';

/** The admin listener's answer: what `SyslogTally.report()` gives. */
export interface SyslogErrorsReport {
  sensor: string;
  counts: SyslogFormatCounts[];
  samples: SyslogErrorSample[];
}

export async function syslogErrors(
  serve: ServeProcess,
  dataDir: string,
  sensor: string,
): Promise<SyslogErrorsReport> {
  const admin = (serve.adminUrl as string).replace('http://', '');
  const shown = await runCli([
    'sensor',
    'show',
    sensor,
    '--data-dir',
    dataDir,
    '--syslog-errors',
    '--json',
    '--admin-listen',
    admin,
  ]);
  assert.equal(shown.code, 0, shown.stderr);
  return JSON.parse(shown.stdout) as SyslogErrorsReport;
}
