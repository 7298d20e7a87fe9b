// Each receiver type's required keys, through the real binary: an output without one stops `serve` with 78
// (a configuration error like any other), naming the output and the key.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const CASES: { output: Record<string, unknown>; missing: string }[] = [
  { output: { type: 'syslog', format: 'cef' }, missing: 'host' },
  { output: { type: 'splunk_hec', tokenFile: '/etc/threatcol/hec.token' }, missing: 'url' },
  { output: { type: 'elasticsearch', index: 'threats' }, missing: 'url' },
  { output: { type: 'email', host: 'smtp.example', from: 'threatcol@example.org' }, missing: 'to' },
];

for (const { output, missing } of CASES) {
  test(`a ${output.type} output without ${missing} stops serve with 78, naming output and key`, async (t) => {
    const dir = makeTempDir(t);
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ outputs: { broken: output } }));
    const result = await runCli([
      'serve',
      '--data-dir',
      dir,
      '--config',
      config,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
    ]);
    assert.equal(result.code, 78, result.stderr);
    assert.match(result.stderr, new RegExp(`outputs\\.broken(\\.${missing})?: .*${missing}`));
  });
}
