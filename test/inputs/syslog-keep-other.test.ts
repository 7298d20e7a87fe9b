// Black box: syslog.keepOther stores messages that are not threats (traffic logs, system events) as records
// flagged "other", criticality from the syslog severity; without it they are only counted (syslog-listener.test.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import test from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { parseExposition } from '../helpers/prometheus.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/syslog/${name}.log`, import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean);

test('syslog.keepOther: a PAN-OS traffic log and a system event are stored flagged other beside the threat, and counted as other', async (t) => {
  const dir = makeTempDir(t);
  const added = await runCli([
    'sensor',
    'add',
    'pa',
    '--data-dir',
    dir,
    '--timezone',
    'Europe/Berlin',
    '--syslog',
    '--format',
    'panos',
    '--from',
    '127.0.0.1/32',
  ]);
  assert.equal(added.code, 0, added.stderr);
  const serve = await spawnServe(dir, [], {
    env: { THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0', THREATCOL_SYSLOG_KEEP_OTHER: 'true' },
  });
  t.after(() => serve.stop());
  const { tcpPort } = serve.logs.find((l) => l.msg === 'syslog listening') as { tcpPort: number };
  const [threat, , , traffic] = fixture('panos') as [string, string, string, string];
  // Severity 2 (critical) in <PRI>: the system event's criticality comes from it.
  const system =
    '<130>1 2026-11-26T12:05:00Z PA-VM - - - - 1,2026/11/26 12:05:00,012801096514,SYSTEM,general,2561,2026/11/26 12:05:00,,,,,,,,,';
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: tcpPort }, () =>
      socket.end([threat, traffic, system].map((m) => `${Buffer.byteLength(m)} ${m}`).join('')),
    );
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
  const records = await storedSyslog(dir, 3);
  const byThreat = new Map(records.map((r) => [r.threat, r]));
  assert.equal(records.length, 3);
  const kept = byThreat.get('TRAFFIC/end');
  assert.deepEqual(
    [
      kept?.sensor,
      kept?.format,
      kept?.other,
      kept?.src_ip,
      kept?.dst_port,
      kept?.criticality,
      kept?.criticality_source,
    ],
    ['pa', 'panos', true, '', 0, 0, 'severity'],
    'traffic: <14> is severity 6 (informational), criticality 0',
  );
  assert.equal(kept?.original, traffic);
  const event = byThreat.get('SYSTEM/general');
  assert.deepEqual(
    [event?.other, event?.criticality, event?.detected_at],
    [true, 4, '2026-11-26T12:05:00.000Z'],
  );
  const stored = byThreat.get('Eicar File Detected');
  assert.equal(stored?.other, undefined, 'a threat is not flagged');

  const families = parseExposition(await (await fetch(`${serve.adminUrl}/metrics`)).text());
  const value = (name: string) =>
    families.get(name)?.samples.find((s) => s.labels.sensor === 'pa' && s.labels.format === 'panos')?.value;
  assert.equal(value('threatcol_syslog_messages_other_total'), 2);
  assert.equal(value('threatcol_syslog_messages_stored_total'), 3);
});
