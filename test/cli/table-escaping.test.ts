// Every table the CLI prints shows one row per entry: a line break, escape or bidi control in any field (a
// dead letter's threat or answer, a sensor's description) is shown as `?`, never as a new row.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const FORGE = '\nFORGED  row  \r\u001b[2J\u202e';

test('outputs dead-letter: a threat or answer with line breaks cannot forge table rows', async (t) => {
  const dir = makeTempDir(t);
  mkdirSync(join(dir, 'outputs'));
  const record = storedGenericRecord({ threat: `evil${FORGE}threat` });
  writeFileSync(
    join(dir, 'outputs', 'hook.dead-letter.ndjson'),
    `${JSON.stringify({ at: '2026-11-27T10:00:00.000Z', answer: `HTTP 400${FORGE}answer`, record })}\n`,
  );
  const listed = await runCli(['outputs', 'dead-letter', 'hook', '--data-dir', dir]);
  assert.equal(listed.code, 0, listed.stderr);
  const lines = listed.stdout.split('\n');
  assert.ok(!lines.some((l) => l.startsWith('FORGED')), listed.stdout);
  for (const c of ['\r', '\u001b', '\u202e'])
    assert.ok(!listed.stdout.includes(c), JSON.stringify(listed.stdout));
  const row = lines.find((l) => l.includes(record.id as string)) ?? '';
  assert.match(row, /evil\?FORGED {2}row {2}\?\?\[2J\?threat/);
  assert.match(row, /HTTP 400\?FORGED {2}row {2}\?\?\[2J\?answer$/);
});

test('sensor list: a description with a line feed stays in its row', async (t) => {
  const dir = makeTempDir(t);
  const added = await runCli(['sensor', 'add', 's1', '--data-dir', dir, '--description', `one${FORGE}two`]);
  assert.equal(added.code, 0, added.stderr);
  const listed = await runCli(['sensor', 'list', '--data-dir', dir]);
  assert.equal(listed.code, 0, listed.stderr);
  const lines = listed.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 2, listed.stdout);
  assert.match(lines[1] ?? '', /one\?FORGED {2}row {2}\?\?\[2J\?two$/);
});
