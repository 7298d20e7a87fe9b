// Each receiver type's required keys, through the real binary: an output without one stops `serve` with 78
// (a configuration error like any other), naming the output and the key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeTempDir } from '../helpers/temp-dir.js';
import { serveRefusing } from './output-serve.js';

const CASES: { output: Record<string, unknown>; missing: string }[] = [
  { output: { type: 'syslog', format: 'cef' }, missing: 'host' },
  { output: { type: 'splunk_hec', tokenFile: '/etc/threatcol/hec.token' }, missing: 'url' },
  { output: { type: 'elasticsearch', index: 'threats' }, missing: 'url' },
  { output: { type: 'email', host: 'smtp.example', from: 'threatcol@example.org' }, missing: 'to' },
];

for (const { output, missing } of CASES) {
  test(`a ${output.type} output without ${missing} stops serve with 78, naming output and key`, async (t) => {
    const stderr = await serveRefusing(makeTempDir(t), { broken: output });
    assert.match(stderr, new RegExp(`outputs\\.broken(\\.${missing})?: .*${missing}`));
  });
}
