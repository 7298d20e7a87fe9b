// `send syslog --sample` messages are threats every parser reads whole: the right time, a severity from the
// format's table, never invalid or other.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SYSLOG_SAMPLE_FORMATS, sampleSyslogMessage } from '../../src/client/syslog-samples.js';
import { FORMAT_PARSERS } from '../../src/inputs/syslog/parsers/format-parsers.js';
import { parseSyslogHeader } from '../../src/inputs/syslog/syslog-header.js';

const AT = Date.parse('2026-11-26T12:00:05Z');

for (const format of SYSLOG_SAMPLE_FORMATS) {
  test(`${format}: 300 samples each parse as a complete threat at the time they carry`, () => {
    for (let i = 0; i < 300; i++) {
      const at = AT + i * 1000;
      const line = sampleSyslogMessage(format, at);
      const header = parseSyslogHeader(line, { timezone: 'UTC', nowMs: at });
      assert.ok(header.ok, line);
      const result = FORMAT_PARSERS[format](header.message, { timezone: 'UTC', defaultCriticality: 2 });
      assert.equal(result.kind, 'threat', `${line}\n${JSON.stringify(result)}`);
      if (result.kind !== 'threat') continue;
      assert.equal(result.fields.detected_at, new Date(at).toISOString(), line);
      assert.equal(result.fields.criticality_source, 'severity', line);
      assert.match(result.fields.threat_id ?? '', /^\d+$/);
    }
  });
}
