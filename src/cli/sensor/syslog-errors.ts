// `sensor show NAME --syslog-errors`: the sensor's syslog counters and latest unreadable messages, asked of the
// running daemon (they live in its memory, docs/syslog.md), so a misconfigured sender is diagnosable at once.
import type { LoadedConfig } from '../../config/load-config.js';
import { ThreatcolError } from '../../errors.js';
import type { SyslogErrorSample, SyslogFormatCounts } from '../../inputs/syslog/syslog-tally.js';
import { askAdmin, noAnswerText, tokenRefused } from '../admin-get.js';
import { type CliIo, write, writeJson } from '../io.js';

interface SyslogErrorsReport {
  sensor: string;
  counts: SyslogFormatCounts[];
  samples: SyslogErrorSample[];
}

export async function showSyslogErrors(
  loaded: LoadedConfig,
  name: string,
  json: boolean,
  io: CliIo,
): Promise<number> {
  const path = `/api/syslog-errors?sensor=${encodeURIComponent(name)}`;
  const answer = await askAdmin(loaded, path);
  if (answer.kind === 'no-answer') {
    throw new ThreatcolError(
      'CONNECTION_FAILED',
      `${noAnswerText(answer)} at admin.listen (${loaded.config.admin.listen}): it took the connection but may be busy; try again`,
    );
  }
  if (answer.kind === 'refused') throw tokenRefused(loaded);
  const report = answer.kind === 'answered' ? (answer.body as SyslogErrorsReport | null) : null;
  if (report === null || !Array.isArray(report.samples)) {
    throw new ThreatcolError(
      'CONNECTION_FAILED',
      `no running daemon with syslog on answered at admin.listen (${loaded.config.admin.listen || 'off'}): the counters and samples live in its memory; start serve with syslog.listen, or pass --admin-listen`,
    );
  }
  if (json) {
    writeJson(io.stdout, report);
    return 0;
  }
  const lines = [`Syslog messages of ${name} since the daemon started:`];
  if (report.counts.length === 0) lines.push('  none received');
  for (const c of report.counts) {
    lines.push(
      `  ${c.format}: ${c.received} received, ${c.stored} stored, ${c.other} not threats, ${c.invalid} unreadable, ${c.truncated} over the size limit, ${c.incomplete ?? 0} cut off by the connection's end`,
    );
  }
  lines.push('', `Latest unreadable messages (${report.samples.length}, oldest first):`);
  if (report.samples.length === 0) lines.push('  none');
  for (const s of report.samples) {
    const cut =
      s.bytes > Buffer.byteLength(s.message)
        ? ` (first ${Buffer.byteLength(s.message)} of ${s.bytes} bytes)`
        : '';
    lines.push(
      `  ${s.at} from ${s.remoteAddr}, ${s.format}: ${s.reason}${cut}`,
      `    ${JSON.stringify(s.message)}`,
    );
  }
  write(io.stdout, lines);
  return 0;
}
