// Black box: a collector restart (and a package upgrade, which is a stop and a start) loses no message from
// Debian's rsyslog running the action `sensor show NAME --syslog` prints, for every configuration it prints:
// the pinned client certificate over TLS, a sensor known by address over TLS, plain TCP, and RELP. The
// connection rsyslog holds dies with the collector; the next message must still arrive.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { addRelpSensor } from '../helpers/relp-sensor.js';
import { spawnRsyslogd } from '../helpers/rsyslog.js';
import { readStoredSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

interface Case {
  name: string;
  /** The listener's variable (the port is this test's, the same after the restart). */
  listen: string;
  identity: 'cert' | 'address';
  snippet: 'rsyslog' | 'rsyslog_relp';
}

const CASES: Case[] = [
  {
    name: 'pinned client certificate over TLS',
    listen: 'THREATCOL_SYSLOG_LISTEN',
    identity: 'cert',
    snippet: 'rsyslog',
  },
  {
    name: 'sensor known by address over TLS',
    listen: 'THREATCOL_SYSLOG_LISTEN',
    identity: 'address',
    snippet: 'rsyslog',
  },
  { name: 'plain TCP', listen: 'THREATCOL_SYSLOG_TCP_LISTEN', identity: 'address', snippet: 'rsyslog' },
  { name: 'RELP', listen: 'THREATCOL_SYSLOG_RELP_LISTEN', identity: 'cert', snippet: 'rsyslog_relp' },
];

const cef = (n: number) => `CEF:0|restart|test|1.0|100|message ${n}|5|src=10.0.0.1 dst=192.0.2.1 act=blocked`;

// Each case has a data directory, ports, collector and rsyslogd of its own and spends most of its time waiting (the
// collector away, rsyslog's 5 s retry), a few seconds of CPU in all: the four run at once.
describe('restarts of the collector under the printed rsyslog actions', { concurrency: true }, () => {
  for (const c of CASES)
    test(`rsyslog with the printed action (${c.name}): restarts of the collector lose no message`, async (t) => {
      const dir = makeTempDir(t);
      let certPath = join(dir, 'any.pem');
      let keyPath = join(dir, 'any.key');
      if (c.identity === 'cert') ({ certPath, keyPath } = await addRelpSensor(dir, 'relay'));
      else await addSensorCli(dir, 'relay', ['--syslog', '--format', 'cef', '--from', '127.0.0.1/32']);
      const port = await freeLoopbackPort();
      const env = { [c.listen]: `127.0.0.1:${port}` };
      let serve: ServeProcess = await spawnServe(dir, [], { env });
      t.after(() => serve.stop());

      const shown = await runCli(['sensor', 'show', 'relay', '--data-dir', dir, '--syslog', '--json'], {
        env,
      });
      assert.equal(shown.code, 0, shown.stderr);
      const printed = (JSON.parse(shown.stdout) as { setup: Record<string, string | null> }).setup[c.snippet];
      assert.ok(printed, `sensor show prints ${c.snippet}`);
      // The action as printed, only the client certificate's paths pointed at this test's files.
      const action = printed
        .replaceAll('/etc/rsyslog.d/threatcol-client.pem', certPath)
        .replaceAll('/etc/rsyslog.d/threatcol-client.key', keyPath);
      if (c.identity === 'cert') assert.notEqual(action, printed, 'the action names the client certificate');

      // rsyslog loads modules outside a ruleset: the printed module() line goes first.
      const lines = action.split('\n');
      const modules = lines.filter((line) => line.startsWith('module('));
      const inPort = await freeLoopbackPort();
      const rsyslog = await spawnRsyslogd(
        t,
        dir,
        [
          `global(workDirectory="${dir}")`,
          'module(load="imtcp")',
          ...modules,
          `input(type="imtcp" address="127.0.0.1" port="${inPort}" ruleset="fwd")`,
          'ruleset(name="fwd") {',
          ...lines.filter((line) => !line.startsWith('module(')),
          '}',
        ],
        [inPort],
      );
      let sent = 0;
      const send = () => {
        sent += 1;
        const r = spawnSync(
          'logger',
          ['--tcp', '--octet-count', '-n', '127.0.0.1', '-P', String(inPort), '-t', 'ids'],
          {
            input: `${cef(sent)}\n`,
            timeout: 10_000,
          },
        );
        assert.equal(r.status, 0, String(r.stderr));
      };
      /** Waits until every message sent is stored (a hang guard), then they must be there once each. */
      const allArrived = async (what: string) => {
        const expected = Array.from({ length: sent }, (_, i) => `message ${i + 1}`);
        let threats: string[] = [];
        // A hang guard: the printed action retries a suspended action every 5 s (action.resumeInterval).
        await until(
          async () => {
            threats = (await readStoredSyslog(dir)).map((r) => String(r.threat));
            return expected.every((m) => threats.includes(m));
          },
          120_000,
          what,
          100,
        ).catch(() => {});
        assert.deepEqual(
          threats.sort(),
          expected.sort(),
          `${what}: every message stored once (rsyslogd: ${rsyslog.log()})`,
        );
      };

      send();
      await allArrived('before any restart');
      // A restart, then a stop with the collector away for a while and a start (a package upgrade); each
      // time rsyslog's connection is idle when the collector goes, and the next message is the first it writes.
      for (const [i, awayMs] of [0, 2000].entries()) {
        await serve.stop();
        await new Promise((resolve) => setTimeout(resolve, awayMs));
        serve = await spawnServe(dir, [], { env });
        await new Promise((resolve) => setTimeout(resolve, 3000));
        send();
        send();
        await allArrived(`after restart ${i + 1}`);
      }
    });
});
