// The kill-twice scenario (test/outputs/kill-twice.ts) for the `syslog` output over TLS to a real rsyslogd: not
// running, then started, then slow (stopped and continued with SIGSTOP/SIGCONT so its buffers fill). Syslog has
// no refusal: the properties that apply are none skipped, duplicates only from the kills, no dead letter.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startRsyslog } from '../helpers/rsyslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { runKillTwice } from './kill-twice.js';

const ID = /^threat \[threatcol@32473 id="([^"]+)"/;

test('syslog to rsyslog: 10,000 records, rsyslog down then stalling, serve killed -9 twice: none skipped', async (t) => {
  const dir = makeTempDir(t);
  const rsyslogDir = join(dir, 'rsyslog');
  mkdirSync(rsyslogDir);
  const rsyslog = await startRsyslog(rsyslogDir, 'tls');
  t.after(() => rsyslog.stop());
  writeFileSync(join(dir, 'rsyslog-ca.pem'), rsyslog.ca as string);
  let stalling: NodeJS.Timeout | undefined;
  t.after(() => clearTimeout(stalling));
  const { summary } = await runKillTwice(t, dir, 'siem', {
    output: {
      type: 'syslog',
      host: '127.0.0.1',
      port: rsyslog.port,
      ca: join(dir, 'rsyslog-ca.pem'),
      format: 'json',
    },
    refuseMarker: null,
    unacknowledged: true,
    // Back up already stalled: the forwarder sends 10,000 records in well under a second, which an rsyslog
    // left running a moment would take whole before the first kill.
    setDown: async (down) => {
      if (down) return rsyslog.stop();
      await rsyslog.start();
      rsyslog.freeze(true);
    },
    setSlow(slow) {
      clearTimeout(stalling);
      // Stopped most of the time (500 ms of every 550): loopback buffers take whole batches, so a lighter stall
      // let rsyslog take every record before the first kill.
      let frozen = slow;
      rsyslog.freeze(frozen);
      const stall = (): void => {
        stalling = setTimeout(
          () => {
            frozen = !frozen;
            rsyslog.freeze(frozen);
            stall();
          },
          frozen ? 500 : 50,
        );
      };
      if (slow) stall();
    },
    taken() {
      const counts = new Map<string, number>();
      for (const line of rsyslog.lines()) {
        const id = ID.exec(line)?.[1] ?? `unexpected line: ${line}`;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    },
    refused: () => new Set(),
  });
  t.diagnostic(summary);
});
