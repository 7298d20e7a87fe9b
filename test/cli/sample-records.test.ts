// The records `send --sample` makes always pass the collector's own validation, in single and batch bodies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sampleBody, sampleFirewallRecord, sampleGenericRecord } from '../../src/client/sample-records.js';
import { validateBody } from '../../src/schemas/validate-records.js';

test('2000 random samples of each kind validate, with PAN-OS shaped names, times and severities', () => {
  for (let i = 0; i < 2000; i++) {
    const fw = sampleFirewallRecord(Date.parse('2026-03-29T01:30:00Z') + i * 997_000);
    const check = validateBody('firewall', fw, 1);
    assert.equal(check.ok, true, JSON.stringify({ fw, check }));
    assert.match(String(fw.threat_name), /^[A-Z][^()]*(\([^()]*\))?[^()]*\(\d+\)$/);
    assert.match(String(fw.time_received), /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}$/);
    assert.ok(['informational', 'low', 'medium', 'high', 'critical'].includes(String(fw.severity)));
    const gen = sampleGenericRecord();
    assert.equal(validateBody('generic', gen, 1).ok, true, JSON.stringify(gen));
  }
  const batch = JSON.parse(sampleBody('generic', 7)) as unknown[];
  assert.equal(batch.length, 7);
  assert.equal(validateBody('generic', batch, 1000).ok, true);
});
