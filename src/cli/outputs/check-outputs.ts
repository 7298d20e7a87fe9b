// The outputs' lines of `threatcol check`: what the running daemon says of each (a warning when one has failed
// for over a minute), and with `--test-outputs` one marked sample record through each receiver.
import type { CheckResult } from '../../check/local-checks.js';
import type { LoadedConfig } from '../../config/load-config.js';
import { FAILING_WARN_MS } from '../../outputs/output-status.js';
import type { CliIo } from '../io.js';
import { fetchDaemonOutputs } from './daemon-outputs.js';
import { sampleRecord } from './outputs-test.js';
import { sendThrough } from './send-through.js';

export async function checkOutputs(
  loaded: LoadedConfig,
  io: CliIo,
  options: { daemon: boolean; test: boolean },
): Promise<CheckResult[]> {
  const enabled = Object.entries(loaded.config.outputs).filter(([, o]) => o.enabled);
  if (enabled.length === 0) return [];
  const daemon = options.daemon ? await fetchDaemonOutputs(loaded) : null;
  const reports = daemon?.kind === 'answered' ? daemon.outputs : null;
  const results: CheckResult[] = [];
  const now = Date.now();
  for (const [name, output] of enabled) {
    const check = `output ${name}`;
    if (options.test) {
      const record = sampleRecord(now);
      const outcome = await sendThrough(output, [record], io.env);
      const refused = outcome.ok ? outcome.report.refused[0]?.answer : outcome.error;
      results.push(
        refused === undefined
          ? { name: check, status: 'ok', message: `the ${output.type} receiver took a sample record` }
          : {
              name: check,
              status: 'warn',
              message: `the ${output.type} receiver did not take a sample record: ${refused}`,
            },
      );
      continue;
    }
    if (daemon?.kind === 'no-answer' || daemon?.kind === 'refused') {
      const why = daemon.kind === 'refused' ? 'the daemon refused admin.token (HTTP 401)' : daemon.text;
      results.push({ name: check, status: 'warn', message: `state unknown: ${why}` });
      continue;
    }
    const report = reports?.find((r) => r.name === name);
    if (!report) continue;
    const failingMs = report.failingSince === null ? 0 : now - report.failingSince;
    const lag = report.position ? `, ${report.position.lagRecords} records behind` : '';
    results.push(
      failingMs > FAILING_WARN_MS || report.state === 'paused'
        ? {
            name: check,
            status: 'warn',
            message: `${report.state} for ${Math.round(failingMs / 1000)} s${lag}: ${report.lastError}`,
          }
        : { name: check, status: 'ok', message: `${report.state}${lag}` },
    );
  }
  return results;
}
