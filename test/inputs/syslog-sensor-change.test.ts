// Black box: syslog connections known by address alone follow registry changes while they stay open. A plain-TCP
// and a RELP connection from 127.0.0.1, matched by a /8 sensor, store their next message under a /32 sensor
// added while they are open (the most specific network wins, as for a new connection), and are closed once no
// sensor they match is left.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import test from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { connectRelp } from '../helpers/relp-client.js';
import { LIBRELP_OFFERS } from '../helpers/relp-sensor.js';
import { readStoredSyslog, storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const CEF = (threat: string) =>
  `<134>1 2026-11-26T12:00:00Z ngfw - - - - CEF:0|Check Point|VPN-1|R81|1|${threat}|8|src=10.0.0.1 dst=192.0.2.1 dpt=443 proto=TCP`;
/** One message in octet-counting framing (RFC 6587). */
const framed = (threat: string) => `${Buffer.byteLength(CEF(threat))} ${CEF(threat)}`;

async function openTcp(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  socket.resume();
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await once(socket, 'connect');
  return { socket, closed };
}

/** Where each threat was stored: `threat -> sensor`. */
async function sensorsOf(dataDir: string): Promise<Map<string, unknown>> {
  return new Map((await readStoredSyslog(dataDir)).map((r) => [String(r.threat), r.sensor]));
}

test('syslog: open TCP and RELP connections known by address move to a narrower sensor added meanwhile, and close when none is left', async (t) => {
  const dir = makeTempDir(t);
  const env = { THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0', THREATCOL_SYSLOG_RELP_LISTEN: '127.0.0.1:0' };
  const sensor = (name: string, from: string) =>
    addSensorCli(dir, name, ['--syslog', '--format', 'cef', '--from', from], env);
  await sensor('wide', '127.0.0.0/8');
  const serve = await spawnServe(dir, [], { env });
  t.after(() => serve.stop());
  const { tcpPort, relpPort } = serve.logs.find((l) => l.msg === 'syslog listening') as {
    tcpPort: number;
    relpPort: number;
  };

  const tcp = await openTcp(tcpPort);
  tcp.socket.write(framed('tcp before'));
  const relp = await connectRelp(relpPort, {});
  relp.send(1, 'open', LIBRELP_OFFERS);
  assert.match(await relp.answer(1), /^200 OK/);
  relp.send(2, 'syslog', CEF('relp before'));
  assert.equal(await relp.answer(2), '200 OK');
  await storedSyslog(dir, 2);

  await sensor('narrow', '127.0.0.1');
  // The collector has taken the change once a new connection from the same address is stored under "narrow".
  let probes = 0;
  await until(
    async () => {
      const probe = await openTcp(tcpPort);
      probe.socket.end(framed(`probe ${++probes}`));
      await probe.closed;
      const stored = await sensorsOf(dir);
      return [...stored].some(([threat, name]) => threat.startsWith('probe') && name === 'narrow');
    },
    30_000,
    'a new connection stored under the narrower sensor',
    200,
  );

  tcp.socket.write(framed('tcp after'));
  relp.send(3, 'syslog', CEF('relp after'));
  assert.equal(await relp.answer(3), '200 OK');
  await storedSyslog(dir, 4 + probes);
  const stored = await sensorsOf(dir);
  assert.deepEqual(
    ['tcp before', 'relp before', 'tcp after', 'relp after'].map(
      (threat) => `${threat}: ${stored.get(threat)}`,
    ),
    ['tcp before: wide', 'relp before: wide', 'tcp after: narrow', 'relp after: narrow'],
  );

  // Revoking both leaves them no sensor: both are closed (the test's time limit bounds the wait).
  for (const name of ['narrow', 'wide']) {
    const revoked = await runCli(['sensor', 'revoke', name, '--data-dir', dir]);
    assert.equal(revoked.code, 0, revoked.stderr);
  }
  await Promise.all([tcp.closed, relp.closed]);
});
