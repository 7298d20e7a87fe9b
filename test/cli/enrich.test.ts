// Black box: country and AS of each record's public addresses, through the real binary: the shipped databases
// on /generic, /firewall and syslog; documentation and private addresses left alone; configured MMDB files
// replaced while serve runs; a missing or damaged one warned of by `check`, records stored without the fields.
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { firewallRecord, genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { tinyMmdb } from '../helpers/tiny-mmdb.js';
import { until } from '../helpers/until.js';

const FIELDS = ['src_country', 'src_asn', 'src_as_org', 'dst_country', 'dst_asn', 'dst_as_org'] as const;
const GOOGLE = { country: 'US', asn: 15169 };

/** serve with `config` as its file; a sensor `fw` on HTTPS; returns what sends a body to a route. */
async function serveWith(t: test.TestContext, config: Record<string, unknown>) {
  const dataDir = makeTempDir(t);
  const configPath = join(dataDir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ dataDir, ...config }));
  const key = await addSensorCli(dataDir, 'fw', ['--config', configPath]);
  const serve = await spawnServe(dataDir, ['--config', configPath]);
  t.after(() => serve.stop());
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const send = async (path: '/generic' | '/firewall', records: unknown[]) => {
    const r = await post(serve.url, path, records, { agent, sensor: 'fw', key });
    assert.equal(r.status, 200, r.text);
  };
  return { dataDir, configPath, serve, send };
}

/** Stored records by threat name (generic) or source address (firewall, syslog). */
const stored = (dataDir: string) => readStored(dataDir);

const enrichment = (r: Record<string, unknown>) =>
  Object.fromEntries(FIELDS.filter((f) => r[f] !== undefined).map((f) => [f, r[f]]));

function syslogPort(serve: ServeProcess): number {
  const line = serve.logs.find((l) => l.msg === 'syslog listening');
  assert.ok(line, 'serve logs where syslog listens');
  return line.tcpPort as number;
}

function sendSyslog(port: number, messages: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.end(messages.map((m) => `${Buffer.byteLength(m)} ${m}`).join(''));
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
}

const cef = (src: string, dst: string) =>
  `<134>Nov 26 12:00:05 gw ids: CEF:0|Check Point|VPN-1|R81|IPS|scan|High|src=${src} dst=${dst} spt=51000 dpt=80 proto=TCP`;

test('the shipped databases give 8.8.8.8 and 2001:4860:4860::8888 US, AS15169 on every input; documentation and private addresses get nothing', async (t) => {
  const { dataDir, serve, send } = await serveWith(t, { syslog: { tcpListen: '127.0.0.1:0' } });
  const added = await runCli(
    ['sensor', 'add', 'gw', '--data-dir', dataDir, '--syslog', '--format', 'cef', '--from', '127.0.0.1'],
    {},
  );
  assert.equal(added.code, 0, added.stderr);
  const none = [
    '192.0.2.7',
    '198.51.100.7',
    '203.0.113.7',
    '2001:db8::7',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '127.0.0.1',
    '169.254.1.1',
    'fd00::1',
    'fe80::1',
    '::1',
    '::ffff:192.168.1.1',
    '224.0.0.1',
  ];
  await send('/generic', [
    genericRecord({ threat: 'v4', source_ip: '8.8.8.8', destination_ip: '192.0.2.1' }),
    genericRecord({ threat: 'v6', source_ip: '2001:4860:4860::8888', destination_ip: '10.0.0.1' }),
    genericRecord({ threat: 'mapped', source_ip: '::ffff:8.8.8.8', destination_ip: '8.8.4.4' }),
    ...none.map((a) => genericRecord({ threat: `none ${a}`, source_ip: a, destination_ip: a })),
  ]);
  await send('/firewall', [firewallRecord({ src: '8.8.8.8', dst: '2001:4860:4860::8888' })]);
  // The syslog sensor is noticed within a second or so: send until its record is stored.
  const port = syslogPort(serve);
  await until(
    async () => {
      await sendSyslog(port, [cef('8.8.8.8', '203.0.113.9')]);
      return stored(dataDir).some((r) => r.endpoint === 'syslog');
    },
    30_000,
    'a syslog record stored',
    200,
  );

  // A syslog line sent again while the first was still being stored lands later: read once nothing more comes.
  let count = -1;
  await until(
    () => {
      const now = stored(dataDir).length;
      const settled = now === count;
      count = now;
      return settled;
    },
    30_000,
    'the stored records settle',
    500,
  );
  const records = stored(dataDir);
  const generic = (threat: string) => records.find((r) => r.threat === threat) as Record<string, unknown>;
  const google = (side: 'src' | 'dst', r: Record<string, unknown>) => {
    assert.equal(r[`${side}_country`], GOOGLE.country, JSON.stringify(r));
    assert.equal(r[`${side}_asn`], GOOGLE.asn, JSON.stringify(r));
    assert.match(String(r[`${side}_as_org`]), /google/i);
  };
  google('src', generic('v4'));
  assert.deepEqual(
    Object.keys(enrichment(generic('v4'))).filter((f) => f.startsWith('dst')),
    [],
  );
  google('src', generic('v6'));
  google('src', generic('mapped'));
  google('dst', generic('mapped'));
  const firewall = records.find((r) => r.endpoint === 'firewall') as Record<string, unknown>;
  google('src', firewall);
  google('dst', firewall);
  const syslog = records.find((r) => r.endpoint === 'syslog') as Record<string, unknown>;
  google('src', syslog);
  assert.equal(syslog.dst_country, undefined);
  for (const a of none) assert.deepEqual(enrichment(generic(`none ${a}`)), {}, a);

  // What `threats tail --json` prints is the stored line: the fields are there too.
  const tail = await runCli(['threats', 'tail', '--data-dir', dataDir, '--no-follow', '--json', '-n', '500']);
  const printed = tail.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(printed.find((r) => r.threat === 'v6')?.src_asn, GOOGLE.asn);
  // threats stats groups by them: the Google sources, and the rest without a country.
  const statsBy = async (by: string) => {
    const r = await runCli(['threats', 'stats', '--data-dir', dataDir, '--by', by, '--top', '0', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return Object.fromEntries(
      (JSON.parse(r.stdout) as { rows: { key: string; count: number }[] }).rows.map((x) => [x.key, x.count]),
    );
  };
  const withSource = records.filter((x) => x.src_country === 'US').length;
  // The syslog line is sent again while none is stored yet: a slow box may store two.
  const syslogs = records.filter((x) => x.endpoint === 'syslog').length;
  assert.equal(withSource, 4 + syslogs, 'v4, v6, mapped, firewall, syslog');
  assert.deepEqual(await statsBy('src_country'), { US: withSource, '(none)': records.length - withSource });
  assert.deepEqual(await statsBy('src_asn'), {
    [`AS15169 ${String(generic('v4').src_as_org)}`]: withSource,
    '(none)': records.length - withSource,
  });

  const check = await runCli(['check', '--no-daemon', '--json', '--config', join(dataDir, 'config.json')]);
  const lines = (JSON.parse(check.stdout) as { checks: { name: string; status: string; message: string }[] })
    .checks;
  for (const kind of ['country', 'asn']) {
    const line = lines.find((c) => c.name === `enrich ${kind}`);
    assert.ok(line, `check names the ${kind} database`);
    assert.match(line.message, /built 20\d\d-\d\d-\d\d/);
  }
});

test('configured MMDB files are read again when replaced, without a restart; an old one is warned of', async (t) => {
  const dir = makeTempDir(t);
  const countryDb = join(dir, 'country.mmdb');
  const asnDb = join(dir, 'asn.mmdb');
  const write = (path: string, buf: Buffer) => {
    writeFileSync(`${path}.tmp`, buf);
    renameSync(`${path}.tmp`, path);
  };
  const old = Math.floor(Date.parse('2020-01-01') / 1000);
  write(countryDb, tinyMmdb({ '8.8.8.0/24': { country: { iso_code: 'US' } } }, { builtAt: old }));
  write(
    asnDb,
    tinyMmdb({
      '8.8.8.0/24': { autonomous_system_number: 15169, autonomous_system_organization: 'Google LLC' },
    }),
  );
  const { dataDir, configPath, send } = await serveWith(t, { enrich: { countryDb, asnDb } });
  let n = 0;
  const sendOne = async () => {
    const threat = `t${++n}`;
    await send('/generic', [genericRecord({ threat, source_ip: '8.8.8.8' })]);
    return stored(dataDir).find((r) => r.threat === threat) as Record<string, unknown>;
  };
  assert.deepEqual(enrichment(await sendOne()), {
    src_country: 'US',
    src_asn: 15169,
    src_as_org: 'Google LLC',
  });

  const check = await runCli(['check', '--no-daemon', '--json', '--config', configPath]);
  const lines = (JSON.parse(check.stdout) as { checks: { name: string; status: string; message: string }[] })
    .checks;
  const country = lines.find((c) => c.name === 'enrich country');
  assert.equal(country?.status, 'warn', JSON.stringify(country));
  assert.match(country.message, /2020-01-01.*older than enrich\.maxAgeDays \(180\)/);
  assert.equal(lines.find((c) => c.name === 'enrich asn')?.status, 'ok');

  write(countryDb, tinyMmdb({ '8.8.8.0/24': { country_code: 'DE' } }));
  write(
    asnDb,
    tinyMmdb({ '8.8.8.0/24': { autonomous_system_number: 3320, autonomous_system_organization: 'DTAG' } }),
  );
  let last: Record<string, unknown> = {};
  await until(
    async () => {
      last = enrichment(await sendOne());
      return last.src_country === 'DE' && last.src_asn === 3320;
    },
    30_000,
    'the replaced databases in use',
    200,
  );
  assert.deepEqual(last, { src_country: 'DE', src_asn: 3320, src_as_org: 'DTAG' });

  // A file whose metadata has no build date: read all the same (the daemon once threw logging its date, from the
  // watcher's timer: the process died), and check says its age is unknown.
  write(countryDb, tinyMmdb({ '8.8.8.0/24': { country: { iso_code: 'FR' } } }, { builtAt: null }));
  await until(
    async () => enrichment(await sendOne()).src_country === 'FR',
    30_000,
    'the undated database in use',
    200,
  );
  const undated = await runCli(['check', '--no-daemon', '--json', '--config', configPath]);
  const line = (
    JSON.parse(undated.stdout) as { checks: { name: string; status: string; message: string }[] }
  ).checks.find((c) => c.name === 'enrich country');
  assert.equal(line?.status, 'warn', JSON.stringify(line));
  assert.match(line.message, /built at an unknown date: its build date is unknown/);
});

test('a missing or damaged database is warned of by check, and records are stored without its fields', async (t) => {
  const dir = makeTempDir(t);
  const countryDb = join(dir, 'absent.mmdb');
  const asnDb = join(dir, 'damaged.mmdb');
  writeFileSync(asnDb, 'not a database at all\n'.repeat(100));
  const { dataDir, configPath, serve, send } = await serveWith(t, { enrich: { countryDb, asnDb } });
  await send('/generic', [genericRecord({ threat: 'public', source_ip: '8.8.8.8' })]);
  const record = stored(dataDir).find((r) => r.threat === 'public') as Record<string, unknown>;
  assert.deepEqual(enrichment(record), {});
  const warned = serve.logs.filter((l) => String(l.msg).startsWith('enrichment database unreadable'));
  assert.deepEqual(warned.map((l) => l.database).sort(), ['asn', 'country']);

  const check = await runCli(['check', '--no-daemon', '--json', '--config', configPath]);
  const lines = (JSON.parse(check.stdout) as { checks: { name: string; status: string; message: string }[] })
    .checks;
  for (const [kind, path] of [
    ['country', countryDb],
    ['asn', asnDb],
  ] as const) {
    const line = lines.find((c) => c.name === `enrich ${kind}`);
    assert.equal(line?.status, 'warn', JSON.stringify(line));
    assert.ok(line.message.startsWith(`${path} unreadable`), line.message);
  }
});

test('enrich.enabled false: no fields, and check says so', async (t) => {
  const { dataDir, configPath, send } = await serveWith(t, { enrich: { enabled: false } });
  await send('/generic', [genericRecord({ threat: 'off', source_ip: '8.8.8.8', destination_ip: '8.8.4.4' })]);
  assert.deepEqual(
    enrichment(stored(dataDir).find((r) => r.threat === 'off') as Record<string, unknown>),
    {},
  );
  const check = await runCli(['check', '--no-daemon', '--json', '--config', configPath]);
  const line = (JSON.parse(check.stdout) as { checks: { name: string; message: string }[] }).checks.find(
    (c) => c.name === 'enrich',
  );
  assert.match(String(line?.message), /^off/);
});

test('the NATS backend stores the same fields', async (t) => {
  const nats = await startNatsServer(t);
  const { configPath, send } = await serveWith(t, {
    store: { backend: 'nats' },
    nats: { servers: [nats.url] },
  });
  await send('/generic', [
    genericRecord({ threat: 'v4', source_ip: '8.8.8.8', destination_ip: '203.0.113.1' }),
    genericRecord({ threat: 'v6', source_ip: '2001:4860:4860::8888', destination_ip: '8.8.4.4' }),
  ]);
  const tail = await runCli(['threats', 'tail', '--config', configPath, '--no-follow', '--json', '-n', '10']);
  assert.equal(tail.code, 0, tail.stderr);
  const records = tail.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const v4 = records.find((r) => r.threat === 'v4') as Record<string, unknown>;
  const v6 = records.find((r) => r.threat === 'v6') as Record<string, unknown>;
  assert.equal(v4.src_country, GOOGLE.country);
  assert.equal(v4.src_asn, GOOGLE.asn);
  assert.equal(v4.dst_country, undefined);
  assert.equal(v6.src_asn, GOOGLE.asn);
  assert.equal(v6.dst_country, GOOGLE.country);
});

test('a database rewritten in place is read again; a damaged rewrite stores records without its fields, check warns, and a good one brings them back', async (t) => {
  const dir = makeTempDir(t);
  const countryDb = join(dir, 'country.mmdb');
  // In place: the same file (inode) truncated and written again, as `cp new.mmdb country.mmdb` does.
  writeFileSync(countryDb, tinyMmdb({ '8.8.8.0/24': { country: { iso_code: 'US' } } }));
  const { dataDir, configPath, serve, send } = await serveWith(t, { enrich: { countryDb } });
  let n = 0;
  const sendOne = async () => {
    const threat = `t${++n}`;
    await send('/generic', [genericRecord({ threat, source_ip: '8.8.8.8' })]);
    return stored(dataDir).find((r) => r.threat === threat) as Record<string, unknown>;
  };
  const countryNow = async (want: string | undefined, what: string) => {
    let last: unknown = null;
    await until(
      async () => {
        last = (await sendOne()).src_country;
        return last === want;
      },
      30_000,
      `${what} (last src_country ${String(last)})`,
      200,
    );
  };
  assert.equal((await sendOne()).src_country, 'US');

  writeFileSync(countryDb, tinyMmdb({ '8.8.8.0/24': { country_code: 'DE' } }));
  await countryNow('DE', 'the database rewritten in place in use');

  writeFileSync(countryDb, 'damaged by a failed download\n'.repeat(50));
  await countryNow(undefined, 'the damaged rewrite leaves the field out');
  // The AS comes from the shipped database: only the damaged one's field is missing.
  const record = await sendOne();
  assert.equal(record.src_country, undefined);
  assert.equal(record.src_asn, GOOGLE.asn);
  assert.ok(
    serve.logs.some(
      (l) => String(l.msg).startsWith('enrichment database unreadable') && l.database === 'country',
    ),
    'serve logs the damaged database',
  );
  const check = await runCli(['check', '--no-daemon', '--json', '--config', configPath]);
  const line = (
    JSON.parse(check.stdout) as { checks: { name: string; status: string; message: string }[] }
  ).checks.find((c) => c.name === 'enrich country');
  assert.equal(line?.status, 'warn', JSON.stringify(line));
  assert.ok(line.message.startsWith(`${countryDb} unreadable`), line.message);

  writeFileSync(countryDb, tinyMmdb({ '8.8.8.0/24': { country_code: 'FR' } }));
  await countryNow('FR', 'a good file again in use');
});

test('databases swapped (an AS file as enrich.countryDb, a country file as enrich.asnDb): check and serve warn', async (t) => {
  const dir = makeTempDir(t);
  const countryDb = join(dir, 'GeoLite2-ASN.mmdb');
  const asnDb = join(dir, 'GeoLite2-Country.mmdb');
  writeFileSync(
    countryDb,
    tinyMmdb(
      { '8.8.8.0/24': { autonomous_system_number: 15169, autonomous_system_organization: 'Google LLC' } },
      { type: 'GeoLite2-ASN' },
    ),
  );
  writeFileSync(
    asnDb,
    tinyMmdb({ '8.8.8.0/24': { country: { iso_code: 'US' } } }, { type: 'GeoLite2-Country' }),
  );
  const { configPath, serve } = await serveWith(t, { enrich: { countryDb, asnDb } });
  const check = await runCli(['check', '--no-daemon', '--json', '--config', configPath]);
  const lines = (JSON.parse(check.stdout) as { checks: { name: string; status: string; message: string }[] })
    .checks;
  for (const [kind, what] of [
    ['country', 'a country'],
    ['asn', 'an AS'],
  ] as const) {
    const line = lines.find((c) => c.name === `enrich ${kind}`);
    assert.equal(line?.status, 'warn', JSON.stringify(line));
    assert.ok(
      line.message.includes(`gives no ${kind === 'asn' ? 'AS' : 'country'} for 8.8.8.8`),
      line.message,
    );
    assert.ok(line.message.includes(`is it ${what} database?`), line.message);
  }
  const warned = serve.logs.filter((l) => String(l.msg).startsWith('enrichment database gives no'));
  assert.deepEqual(warned.map((l) => l.database).sort(), ['asn', 'country']);
});
