// `feed show --firewall`: the setup printed for each format, line by line against the vendors' documented
// syntax (no such device runs here), and the systemd unit checked by systemd-analyze where it is installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { firewallSetup } from '../../src/cli/blocklist/feed-show.js';
import type { FeedEntry, FeedFormat } from '../../src/store/decisions.js';
import { needs } from '../helpers/needs.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const URL_ = 'https://collector.example:8443/feeds/edge';

function setup(format: FeedFormat): string[] {
  const feed: FeedEntry = {
    name: 'edge',
    format,
    passwordHash: `sha256:${'0'.repeat(64)}`,
    maxEntries: null,
    family: 'any',
    createdAt: '2026-01-01T00:00:00.000Z',
    rotatedAt: null,
  };
  return firewallSetup(feed, URL_).split('\n');
}

test('paloalto: an External Dynamic List of type IP with the URL, a certificate profile and the credentials', () => {
  const commands = setup('paloalto').filter((l) => !l.startsWith('#'));
  assert.deepEqual(commands, [
    `set external-list threatcol-edge type ip url ${URL_}`,
    'set external-list threatcol-edge type ip certificate-profile threatcol-ca',
    'set external-list threatcol-edge type ip auth username edge password PASSWORD',
    'set external-list threatcol-edge type ip recurring five-minute',
  ]);
});

test('fortinet: config system external-resource of type address, balanced edit/next/end', () => {
  const lines = setup('fortinet')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.trim());
  assert.deepEqual(lines, [
    'config system external-resource',
    'edit "threatcol-edge"',
    'set type address',
    `set resource "${URL_}"`,
    'set username "edge"',
    'set password PASSWORD',
    'set refresh-rate 5',
    'next',
    'end',
  ]);
});

test('mikrotik: a scheduler fetching over https and importing, and drop rules on the list for both families', () => {
  const [scheduler, v4, v6] = setup('mikrotik');
  assert.match(scheduler ?? '', /^\/system scheduler add name=threatcol-edge interval=5m on-event="/);
  assert.match(
    scheduler ?? '',
    new RegExp(`/tool fetch url=\\\\"${URL_.replace(/[.]/g, '\\.')}\\\\" user=edge password=PASSWORD`),
  );
  assert.match(scheduler ?? '', /check-certificate=yes; :delay 5s; \/import file-name=threatcol\.rsc"$/);
  assert.match(v4 ?? '', /^\/ip firewall raw add chain=prerouting src-address-list=threatcol action=drop/);
  assert.match(v6 ?? '', /^\/ipv6 firewall raw add chain=prerouting src-address-list=threatcol action=drop/);
});

test('nftables: a oneshot service and its timer, which systemd-analyze verifies', (t) => {
  const lines = setup('nftables');
  const exec = lines.filter((l) => l.startsWith('ExecStart='));
  // The password never on a command line (any local user reads those in /proc): curl takes it from a file
  // only root reads, written as the setup says. Two ExecStart lines: nft runs only when curl succeeded.
  assert.equal(exec.length, 2, exec.join('\n'));
  assert.match(
    exec[0] as string,
    /^ExecStart=\/usr\/bin\/curl -fsS --cacert \S+ -K \/etc\/threatcol-feed\/curl\.conf -o \/run\/threatcol-feed\.nft https:\/\/\S+$/,
  );
  assert.equal(exec[1], 'ExecStart=/usr/sbin/nft -f /run/threatcol-feed.nft');
  assert.doesNotMatch(exec.join('\n'), /PASSWORD|password|-u /);
  assert.ok(
    lines.some((l) => /user = "\S+:PASSWORD"/.test(l)),
    'the curl.conf line to write',
  );
  assert.ok(
    lines.some((l) => /umask 077 .*> \/etc\/threatcol-feed\/curl\.conf/.test(l)),
    'root only',
  );
  const missing = needs('systemd');
  if (missing) {
    t.skip(missing);
    return;
  }
  const dir = makeTempDir(t);
  const service = lines.slice(
    lines.indexOf('[Service]'),
    lines.indexOf('# /etc/systemd/system/threatcol-feed.timer'),
  );
  const timer = lines.slice(
    lines.indexOf('[Timer]'),
    lines.indexOf('# systemctl enable --now threatcol-feed.timer'),
  );
  writeFileSync(
    join(dir, 'threatcol-feed.service'),
    `[Unit]\nDescription=threatcol feed\n${service.join('\n')}\n`,
  );
  writeFileSync(
    join(dir, 'threatcol-feed.timer'),
    `[Unit]\nDescription=threatcol feed\n${timer.join('\n')}\n`,
  );
  const verify = spawnSync(
    'systemd-analyze',
    ['verify', '--man=no', join(dir, 'threatcol-feed.service'), join(dir, 'threatcol-feed.timer')],
    {
      encoding: 'utf8',
    },
  );
  assert.doesNotMatch(verify.stderr, /threatcol-feed\.(service|timer):\d+:/, verify.stderr);
});
