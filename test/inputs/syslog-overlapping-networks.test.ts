// Black box: two address-only syslog sensors whose `--from` networks overlap (wide 127.0.0.0/8, narrow
// 127.0.0.7/32), with the real CLI and a real listener: a connection belongs to the sensor of the most specific
// network whatever the order they were added in, and `sensor add` / `sensor set` warn of the overlap (exit 0).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const CEF = (threat: string) =>
  `<134>1 2026-11-26T12:00:00Z ngfw - - - - CEF:0|Check Point|VPN-1|R81|1|${threat}|8|src=10.0.0.1 dst=192.0.2.1 dpt=443 proto=TCP`;

/** One plain-TCP connection from `localAddress` sending one message; resolves once closed. */
function sendFrom(port: number, localAddress: string, threat: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress }, () =>
      socket.end(`${Buffer.byteLength(CEF(threat))} ${CEF(threat)}`),
    );
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.resume();
  });
}

test('syslog --from: the most specific network wins, and sensor add / set warn when networks overlap', async (t) => {
  const dir = makeTempDir(t);
  const sensor = async (verb: 'add' | 'set', name: string, ...args: string[]) => {
    // A listener configured, as serve below has it: only the overlap warning is under test here.
    const r = await runCli(
      ['sensor', verb, name, '--data-dir', dir, '--syslog', '--format', 'cef', ...args],
      {
        env: { THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0' },
      },
    );
    assert.equal(r.code, 0, r.stderr);
    return r.stderr;
  };
  const wideAdded = await sensor('add', 'wide', '--from', '127.0.0.0/8');
  const narrowAdded = await sensor('add', 'narrow', '--from', '127.0.0.7');
  // Identified by its certificate: its --from only narrows where that certificate may come from.
  const pinnedAdded = await sensor(
    'add',
    'pinned',
    '--from',
    '127.0.0.0/8',
    '--client-cert',
    selfSigned(dir),
  );

  const serve = await spawnServe(dir, [], { env: { THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0' } });
  t.after(() => serve.stop());
  const { tcpPort } = serve.logs.find((l) => l.msg === 'syslog listening') as { tcpPort: number };
  await sendFrom(tcpPort, '127.0.0.7', 'from .7');
  await sendFrom(tcpPort, '127.0.0.1', 'from .1');
  const stored = (await storedSyslog(dir, 2)).map((r) => `${r.sensor}: ${r.threat}`).sort();
  assert.deepEqual(stored, ['narrow: from .7', 'wide: from .1']);

  assert.equal(wideAdded, '', 'nothing to overlap yet');
  assert.match(
    narrowAdded,
    /^threatcol: warning: --from 127\.0\.0\.7 of "narrow" overlaps --from 127\.0\.0\.0\/8 of "wide"; a connection from an address in both belongs to "narrow", whose network is narrower\n$/,
  );
  assert.equal(pinnedAdded, '', 'a sensor known by its certificate competes with no address');
  const setStderr = await sensor('set', 'narrow', '--from', '127.0.0.0/8');
  assert.match(
    setStderr,
    /--from 127\.0\.0\.0\/8 of "narrow" overlaps --from 127\.0\.0\.0\/8 of "wide"; the same network/,
  );
  assert.equal(await sensor('set', 'narrow', '--from', '10.0.0.0/8'), '', 'no overlap, no warning');
});

function selfSigned(dir: string): string {
  const certPath = join(dir, 'pinned.pem');
  writeSelfSigned(certPath, join(dir, 'pinned.key'), { cn: 'pinned' });
  return certPath;
}
