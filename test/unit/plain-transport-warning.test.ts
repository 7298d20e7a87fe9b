// DESIGN 13: an output that sends records unencrypted across the network (http://, syslog over plain TCP) is
// allowed, and said in the log at its start; to loopback it is not worth a warning.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyOutputDefaults } from '../../src/config/outputs-schema.js';
import { warnPlainTransport } from '../../src/outputs/start-outputs.js';
import { memoryLogger } from '../helpers/outgoing.js';

const warned = (output: Record<string, unknown>): string[] => {
  const { logger, text } = memoryLogger();
  warnPlainTransport('out', applyOutputDefaults(output), logger);
  return text()
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
};

test('plain http:// and syslog over TCP warn unless loopback; TLS never does', () => {
  assert.deepEqual(warned({ type: 'webhook', url: 'http://hooks.example/x' }), [
    'output sends over plain http://: records cross the network unencrypted',
  ]);
  assert.deepEqual(warned({ type: 'webhook', url: 'http://127.0.0.1:8080/x' }), []);
  assert.deepEqual(warned({ type: 'elasticsearch', url: 'https://es.example:9200' }), []);
  assert.deepEqual(warned({ type: 'syslog', host: 'siem.example', transport: 'tcp' }), [
    'output sends syslog over plain TCP: records cross the network unencrypted',
  ]);
  assert.deepEqual(warned({ type: 'syslog', host: '::1', transport: 'tcp' }), []);
  assert.deepEqual(warned({ type: 'syslog', host: 'siem.example' }), []);
});
