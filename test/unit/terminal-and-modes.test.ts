// Unit tests: what reaches the admin's terminal from sender-controlled strings, and file modes under a strict umask.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatRecordLine } from '../../src/cli/format-record.js';
import { safeJsonLine } from '../../src/cli/terminal-text.js';
import { writeFileAtomic } from '../../src/data-dir/file-owner.js';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const hostile = 'evil\u009b31m\u202eDER\u001b[2J\u2066x';

test('tail lines never carry C0/C1 controls or bidi overrides from a record', () => {
  const record = {
    received_at: '2026-11-21T10:00:00.000Z',
    criticality: 4,
    severity: 'critical',
    sensor: 's',
    src_ip: '192.0.2.1',
    dst_ip: '192.0.2.2',
    dst_port: 443,
    protocol: 'tcp',
    threat: hostile,
  };
  const line = formatRecordLine(record as never, false);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting that none of these is present
  assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  const json = safeJsonLine(JSON.stringify(record));
  assert.doesNotMatch(json, /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  assert.equal(JSON.parse(json).threat, hostile, 'still the same JSON value');
});

test('files are written with the mode asked for, whatever the umask', (t) => {
  const dir = makeTempDir(t);
  const previous = process.umask(0o077);
  try {
    writeFileAtomic(join(dir, 'stats.json'), '{}\n', 0o640, null);
  } finally {
    process.umask(previous);
  }
  assert.equal(statSync(join(dir, 'stats.json')).mode & 0o777, 0o640);
  assert.equal(readFileSync(join(dir, 'stats.json'), 'utf8'), '{}\n');
});

test('send refuses a plain http:// URL: the key never travels unencrypted', async () => {
  const r = await runCli([
    'send',
    'generic',
    '--sample',
    '--url',
    'http://127.0.0.1:9',
    '--sensor',
    's',
    '--key',
    'tck_x',
  ]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /must be https:\/\//);
});
