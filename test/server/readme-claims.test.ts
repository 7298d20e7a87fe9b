// What the documentation (README.md and docs/*.md) claims about records and headers holds against the real server:
// the extra-field limit (in the same words as the error), threat_id not always numeric, and spaces around header
// values not a cause of 401. Also that the front page leads to the operator's pages.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { connect } from 'node:tls';
import { MAX_EXTRA_FIELDS } from '../../src/schemas/common.js';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { firewallRecord, genericRecord, readStored } from '../helpers/records.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const README = read('README.md');
/** Every page of the documentation, so a claim is found wherever it lives (the manual moves between pages). */
const DOCS = [
  README,
  ...readdirSync(new URL('../../docs/', import.meta.url))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => read(`docs/${name}`)),
].join('\n');

test('the extra-field limit of the documentation is the one the server applies and names', async (t) => {
  assert.ok(DOCS.includes(`Up to ${MAX_EXTRA_FIELDS} extra fields`));
  assert.ok(
    DOCS.includes(`at most ${MAX_EXTRA_FIELDS} extra\n  fields`) ||
      DOCS.includes(`at most ${MAX_EXTRA_FIELDS} extra fields`),
  );
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

test('threat_id is the digits when there are some, else threatid as sent; docs/records.md says so', async (t) => {
  assert.match(read('docs/records.md'), /`threat_id` \| firewall only: .*not always numeric/);
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

test('spaces around header values are stripped by HTTP: not a cause of 401, and no page says so', async (t) => {
  assert.doesNotMatch(DOCS, /typos and extra spaces|wrong: spaces,/);
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

test('the README is a front page that leads to what a sysadmin looks for', () => {
  // The Commands section is on its way to docs/cli.md (generated with the man pages); the rest must stay a front
  // page. Once the section is a pointer, this measures the whole README.
  const commands = README.indexOf('\n## Commands\n');
  const commandsEnd = README.indexOf('\n## ', commands + 1);
  const front = commands === -1 ? README : README.slice(0, commands) + README.slice(commandsEnd);
  assert.ok(
    Buffer.byteLength(front) <= 30 * 1024,
    `README ${Buffer.byteLength(front)} bytes besides Commands`,
  );
  for (const heading of [
    '## Install from the package',
    '## Upgrade, remove, purge',
    '### Node.js on Debian 12',
    '### Where things are after `npm install -g`',
    '### The certificate fingerprint, again',
    '## Host firewall',
    '### Upgrade from source',
    '### Backup',
    '### Restore',
    '### Uninstall from source',
    '## Running several collectors',
    '## Troubleshooting',
  ]) {
    assert.ok(read('docs/operations.md').includes(`\n${heading}\n`), heading);
  }
  for (const doc of [
    'docs/operations.md',
    'docs/configuration.md',
    'docs/records.md',
    'docs/errors.md',
    'docs/firewall-setup.md',
    'docs/performance.md',
    'docs/reliability.md',
    'docs/development.md',
  ]) {
    assert.ok(README.includes(`](${doc})`), `README links ${doc}`);
    assert.ok(read(doc).length > 500, doc);
  }
  const pkg = JSON.parse(read('package.json')) as { files: string[] };
  assert.ok(pkg.files.includes('docs'), 'the package ships docs/, which the README links');
});
