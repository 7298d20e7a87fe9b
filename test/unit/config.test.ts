// Unit tests: configuration precedence, validation with every problem listed, data directory defaults, docs in sync.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { renderConffile, renderConfigTable, renderExampleConfig } from '../../src/config/describe-config.js';
import { stripJsonComments } from '../../src/config/jsonc.js';
import { loadConfig, resolveDataDir } from '../../src/config/load-config.js';
import { GROUPABLE_FIELDS } from '../../src/config/outputs-schema.js';
import { ThreatcolError } from '../../src/errors.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = new URL('../../', import.meta.url).pathname;
const none = '/nonexistent/threatcol/config.json';

test('defaults need no file', () => {
  const { config, configPath } = loadConfig({ env: {}, defaultConfigPath: none });
  assert.equal(configPath, null);
  assert.equal(config.server.port, 443);
  assert.equal(config.server.host, '::');
  assert.equal(config.tls.minVersion, 'TLSv1.2');
  assert.equal(config.firewall.defaultCriticality, 2);
});

test('precedence: flags > environment > file > defaults', (t) => {
  const dir = makeTempDir(t);
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    '// comment\n{ "server": { "port": 1001, "host": "127.0.0.1" }, "log": { "level": "warn" } }',
  );
  const env = { THREATCOL_SERVER_PORT: '1002', THREATCOL_LOG_LEVEL: 'debug' };
  const a = loadConfig({ configPath: file, env, overrides: { 'server.port': 1003 } });
  assert.equal(a.config.server.port, 1003);
  assert.equal(a.config.log.level, 'debug');
  assert.equal(a.config.server.host, '127.0.0.1');
  assert.equal(a.config.server.maxConnections, 4096);
  const b = loadConfig({ configPath: file, env: {} });
  assert.equal(b.config.server.port, 1001);
  const c = loadConfig({ env: { THREATCOL_CONFIG: file } });
  assert.equal(c.configPath, file);
});

test('every problem is listed: unknown keys, bad values, unknown env vars', (t) => {
  const dir = makeTempDir(t);
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({ server: { port: 70000, prot: 1 }, tls: { minVersion: 'TLSv1.0' }, extra: true }),
  );
  try {
    loadConfig({ configPath: file, env: { THREATCOL_NOPE: '1', THREATCOL_URL: 'https://x' } });
    assert.fail('expected CONFIG_INVALID');
  } catch (error) {
    assert.ok(error instanceof ThreatcolError);
    assert.equal(error.code, 'CONFIG_INVALID');
    assert.equal(error.exitCode, 78);
    const paths = (error.details ?? []).map((d) => d.path).sort();
    assert.deepEqual(paths, ['THREATCOL_NOPE', 'extra', 'server.port', 'server.prot', 'tls.minVersion']);
  }
});

test('a missing explicit file, bad JSON, bad zone and half a TLS pair are config errors', (t) => {
  const dir = makeTempDir(t);
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{ "server": ');
  for (const options of [
    { configPath: join(dir, 'missing.json'), env: {} },
    { configPath: bad, env: {} },
    { env: { THREATCOL_FIREWALL_DEFAULT_TIMEZONE: 'Mars/Olympus' }, defaultConfigPath: none },
    { env: { THREATCOL_TLS_CERT: '/x.pem' }, defaultConfigPath: none },
    { env: { THREATCOL_SERVER_PORT: 'abc' }, defaultConfigPath: none },
  ]) {
    assert.throws(
      () => loadConfig(options),
      (e: unknown) => e instanceof ThreatcolError && e.code === 'CONFIG_INVALID',
    );
  }
});

test("server.maxInflightBodyBytes below 4 × server.maxBodyBytes is refused, naming both (one sensor's quarter must hold one largest body)", () => {
  const load = (inflight: number) =>
    loadConfig({
      env: {
        THREATCOL_SERVER_MAX_INFLIGHT_BODY_BYTES: String(inflight),
        THREATCOL_SERVER_MAX_BODY_BYTES: '1048576',
      },
      defaultConfigPath: none,
    });
  assert.throws(
    () => load(4 * 1_048_576 - 1),
    (e: unknown) =>
      e instanceof ThreatcolError &&
      e.code === 'CONFIG_INVALID' &&
      /server\.maxInflightBodyBytes.*at least 4 × server\.maxBodyBytes \(4194304\)/.test(e.message),
  );
  assert.equal(load(4 * 1_048_576).config.server.maxInflightBodyBytes, 4 * 1_048_576);
});

test('data directory: config, then $STATE_DIRECTORY, then root or home default', () => {
  assert.equal(resolveDataDir('/srv/tc', {}, 0), '/srv/tc');
  assert.equal(
    resolveDataDir(null, { STATE_DIRECTORY: '/var/lib/threatcol:/other' }, 1000),
    '/var/lib/threatcol',
  );
  assert.equal(resolveDataDir(null, {}, 0), '/var/lib/threatcol');
  assert.equal(resolveDataDir(null, {}, 1000, '/home/ann'), '/home/ann/.local/state/threatcol');
});

test('the example config and the configuration table of docs/configuration.md are generated from the schema and in sync', () => {
  assert.equal(
    readFileSync(join(root, 'config/threatcol.example.json'), 'utf8'),
    renderExampleConfig(),
    'run npm run docs',
  );
  assert.ok(
    readFileSync(join(root, 'docs/configuration.md'), 'utf8').includes(renderConfigTable()),
    'run npm run docs',
  );
  const parsed = JSON.parse(stripJsonComments(renderExampleConfig()));
  const { config } = loadConfig({ env: {}, defaultConfigPath: none });
  assert.deepEqual(parsed, JSON.parse(JSON.stringify(config)));
});

test('property: comment stripping keeps JSON values intact', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const text = JSON.stringify(value, null, 1);
      assert.deepEqual(JSON.parse(stripJsonComments(`// head\n${text} /* tail */`)), JSON.parse(text));
    }),
    { seed: 5, numRuns: 500 },
  );
});

test('the package conffile: every key commented out (defaults in force), and uncommenting all of it gives the defaults', () => {
  const conffile = renderConffile();
  assert.deepEqual(JSON.parse(stripJsonComments(conffile)), {});
  const uncommented = conffile
    .split('\n')
    .map((line) => line.replace(/^( *)\/\/(?! )/, '$1'))
    .join('\n');
  assert.deepEqual(
    JSON.parse(stripJsonComments(uncommented)),
    JSON.parse(stripJsonComments(renderExampleConfig())),
  );
  // The key an admin uncomments alone (with its object's lines) is valid JSON despite the comma it carries.
  const onePort = conffile
    .replace('  //"server": {', '  "server": {')
    .replace('    //"port": 443,', '    "port": 8443,')
    .replace(/^ {2}\/\/},$/m, '  },');
  assert.deepEqual(JSON.parse(stripJsonComments(onePort)), { server: { port: 8443 } });
});

test('property: trailing commas before } and ] are dropped, commas in strings are kept', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const text = JSON.stringify(value, null, 1).replace(/\n(\s*[}\]])/g, ',\n$1');
      assert.deepEqual(JSON.parse(stripJsonComments(text)), JSON.parse(JSON.stringify(value)));
    }),
    { seed: 7, numRuns: 500 },
  );
  assert.equal(JSON.parse(stripJsonComments('{"a": ",}", "b": [1, 2,],}')).a, ',}');
});

test('outputs.NAME.group.by names stored record fields only: a typo is refused, naming the key', () => {
  const dir = makeTempDir();
  const file = join(dir, 'config.json');
  const hook = (by: string[]) =>
    JSON.stringify({
      outputs: { alerts: { type: 'webhook', url: 'https://198.51.100.9/h', group: { by, window: '10m' } } },
    });
  writeFileSync(file, hook(['src_ip', 'threat', 'src_asn']));
  const group = loadConfig({ configPath: file, env: {} }).config.outputs.alerts?.group as {
    by?: string[];
  } | null;
  assert.deepEqual(group?.by, ['src_ip', 'threat', 'src_asn']);
  writeFileSync(file, hook(['src_addr']));
  assert.throws(
    () => loadConfig({ configPath: file, env: {} }),
    (e: unknown) =>
      e instanceof ThreatcolError &&
      e.code === 'CONFIG_INVALID' &&
      /outputs\.alerts\.group\.by/.test(e.message),
  );
});

test('GROUPABLE_FIELDS is every field of a stored record but original', () => {
  const full: Required<StoredRecord> = {
    id: 'x',
    received_at: '2026-11-29T00:00:00.000Z',
    sensor: 'fw',
    endpoint: 'syslog',
    format: 'cef',
    criticality: 2,
    severity: 'medium',
    criticality_source: 'sender',
    src_ip: '192.0.2.1',
    dst_ip: '198.51.100.2',
    src_port: 1,
    dst_port: 2,
    protocol: 'tcp',
    threat: 't',
    threat_id: 'i',
    detected_at: 'd',
    src_country: 'US',
    src_asn: 1,
    src_as_org: 'o',
    dst_country: 'US',
    dst_asn: 2,
    dst_as_org: 'p',
    remote_addr: '127.0.0.1',
    repaired: true,
    truncated: true,
    other: true,
    original: 'm',
    dedupe_key: 'k',
  };
  assert.deepEqual(
    [...GROUPABLE_FIELDS].sort(),
    Object.keys(full)
      .filter((k) => k !== 'original')
      .sort(),
  );
});
