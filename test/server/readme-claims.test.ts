// What the README and the command reference claim about records and headers holds against the real server:
// the extra-field limit (in the same words as the error), threat_id not always numeric, and spaces around
// header values not a cause of 401.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { connect } from 'node:tls';
import { MAX_EXTRA_FIELDS } from '../../src/schemas/common.js';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { firewallRecord, genericRecord, readStored } from '../helpers/records.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
/** The command reference, where what `serve` does with each request is told. */
const CLI_DOC = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

test('the extra-field limit of the command reference is the one the server applies and names', async (t) => {
  assert.ok(CLI_DOC.includes(`Up to ${MAX_EXTRA_FIELDS} extra fields`));
  assert.ok(CLI_DOC.includes(`at most ${MAX_EXTRA_FIELDS} extra fields`));
  const server = await startTestServer(t);
  const key = await server.addSensor('s');
  const extras = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x${i}`, i]));
  for (const [path, record] of [
    ['/generic', genericRecord],
    ['/firewall', firewallRecord],
  ] as const) {
    const ok = await post(server.url, path, record(extras(MAX_EXTRA_FIELDS)), {
      sensor: 's',
      key,
      agent: server.agent,
    });
    assert.equal(ok.status, 200, ok.text);
    const tooMany = await post(server.url, path, record(extras(MAX_EXTRA_FIELDS + 1)), {
      sensor: 's',
      key,
      agent: server.agent,
    });
    assert.equal(errorCode(tooMany), 'VALIDATION_FAILED');
    assert.match(tooMany.text, new RegExp(`at most ${MAX_EXTRA_FIELDS} extra fields`));
  }
});

test('threat_id is the digits when there are some, else threatid as sent; the README says so', async (t) => {
  assert.match(README, /`threat_id` \| firewall only: .*not always numeric/);
  const server = await startTestServer(t);
  const key = await server.addSensor('s');
  const cases: [Record<string, unknown>, string][] = [
    [{ threat_name: 'EICAR(86708)', threatid: 'EICAR(86708)' }, '86708'],
    [{ threat_name: 'Suspicious DNS', threatid: 'spyware-dns' }, 'spyware-dns'],
  ];
  for (const [fields, expected] of cases) {
    const r = await post(server.url, '/firewall', firewallRecord(fields), {
      sensor: 's',
      key,
      agent: server.agent,
    });
    assert.equal(r.status, 200, r.text);
    const id = (r.json as { ids: string[] }).ids[0];
    assert.equal(readStored(server.dataDir).find((x) => x.id === id)?.threat_id, expected);
  }
});

test('spaces around header values are stripped by HTTP: not a cause of 401, and the README does not say so', async (t) => {
  assert.doesNotMatch(README, /typos and extra spaces|wrong: spaces,/);
  const server = await startTestServer(t);
  const key = await server.addSensor('s');
  const body = JSON.stringify(genericRecord());
  const raw =
    `POST /generic HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
    `X-AUTH_KEY:    ${key}   \r\nX-SENSOR_NAME: \t s \t\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port: Number(new URL(server.url).port), rejectUnauthorized: false },
      () => socket.write(raw),
    );
    let text = '';
    socket.setEncoding('utf8').on('data', (d: string) => (text += d));
    socket.on('end', () => resolve(text)).on('error', reject);
  });
  assert.match(answer, /^HTTP\/1\.1 200 /);
});

test('the README has what a sysadmin looks for: upgrade, backup, restore, uninstall, Node on Debian 12, ...', () => {
  for (const heading of [
    '### Node.js on Debian 12',
    '### Where things are after `npm install -g`',
    '### The certificate fingerprint, again',
    '### Host firewall',
    '### Upgrade',
    '### Backup',
    '### Restore',
    '### Uninstall',
  ]) {
    assert.ok(README.includes(`\n${heading}\n`), heading);
  }
  for (const doc of ['docs/performance.md', 'docs/reliability.md', 'docs/development.md']) {
    assert.ok(README.includes(`](${doc})`), `README links ${doc}`);
    assert.ok(readFileSync(new URL(`../../${doc}`, import.meta.url), 'utf8').length > 500, doc);
  }
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    files: string[];
  };
  assert.ok(pkg.files.includes('docs'), 'the package ships docs/, which the README links');
});
