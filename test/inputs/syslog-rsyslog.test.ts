// Black box: Debian's rsyslog (rsyslog-gnutls) forwards to `threatcol serve` over TLS with a pinned client
// certificate, one action octet-counted and one LF-framed; each message is stored once, by one process and by
// `serve --workers 2`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import { spawnServe } from '../helpers/cli.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { addRelpSensor } from '../helpers/relp-sensor.js';
import { spawnRsyslogd } from '../helpers/rsyslog.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const cefLines = readFileSync(new URL('../fixtures/syslog/cef.log', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => line.slice(line.indexOf('CEF:')));

// One process, and two workers (the two actions are two connections, handed to the workers in turn).
for (const workers of ['1', '2'])
  test(`rsyslog forwards over TLS, octet-counted and LF-framed: each threat stored once under the pinned sensor (serve --workers ${workers})`, async (t) => {
    const dir = makeTempDir(t);
    const { certPath, keyPath } = await addRelpSensor(dir, 'relay');
    const serve = await spawnServe(dir, ['--workers', workers], {
      env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0' },
    });
    t.after(() => serve.stop());
    const tlsPort = serve.logs.find((l) => l.msg === 'syslog listening')?.tlsPort as number;

    const [octetIn, lfIn] = [await freeLoopbackPort(), await freeLoopbackPort()];
    const forward = (framing: string) =>
      `action(type="omfwd" target="127.0.0.1" port="${tlsPort}" protocol="tcp" StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="anon" TCP_Framing="${framing}" template="RSYSLOG_SyslogProtocol23Format")`;
    const rsyslog = await spawnRsyslogd(
      t,
      dir,
      [
        `global(workDirectory="${dir}" defaultNetstreamDriverCAFile="${certPath}" defaultNetstreamDriverCertFile="${certPath}" defaultNetstreamDriverKeyFile="${keyPath}")`,
        'module(load="imtcp")',
        `input(type="imtcp" address="127.0.0.1" port="${octetIn}" ruleset="octet")`,
        `input(type="imtcp" address="127.0.0.1" port="${lfIn}" ruleset="lf")`,
        `ruleset(name="octet") { ${forward('octet-counted')} }`,
        `ruleset(name="lf") { ${forward('traditional')} }`,
      ],
      [octetIn, lfIn],
    );

    const send = (port: number, lines: string[]) => {
      const r = spawnSync(
        'logger',
        ['--tcp', '--octet-count', '-n', '127.0.0.1', '-P', String(port), '-t', 'ids'],
        {
          input: `${lines.join('\n')}\n`,
          timeout: 10_000,
        },
      );
      assert.equal(r.status, 0, String(r.stderr));
    };
    const [checkPoint, escapes, sophos, traffic] = cefLines as [string, string, string, string];
    send(octetIn, [checkPoint, traffic, escapes]);
    send(lfIn, [sophos]);

    const records = await storedSyslog(dir, 3, `three records forwarded by rsyslog (${rsyslog.log()})`);
    assert.deepEqual(records.map((r) => [r.sensor, r.threat]).sort(), [
      ['relay', 'Virus detected'],
      ['relay', 'Web Server Enforcement Violation'],
      ['relay', 'detected a | in packet \\ here'],
    ]);
    for (const r of records) assert.match(String(r.original), /^<\d+>1 \S+ \S+ ids /); // rsyslog's RFC 5424 header
  });
