// The pure parts of outputs on NATS: consumer names (a contract: operators and tests rely on them), the ack
// subjects a delivery is parsed from, and the skipped-range arithmetic that must never count a range twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { outputConsumerName, outputOfConsumer, parseOutputConsumer } from '../../src/store/nats/names.js';
import { parseAckSubject } from '../../src/store/nats/output-pull.js';
import { uncounted } from '../../src/store/nats/output-state.js';

test('an output’s consumer is threatcol_out_<name>, and the name is read back from it', () => {
  assert.equal(outputConsumerName('siem'), 'threatcol_out_siem');
  assert.equal(outputConsumerName('on-call_2'), 'threatcol_out_on-call_2');
  assert.equal(outputOfConsumer('threatcol_out_siem'), 'siem');
  assert.equal(outputOfConsumer('threatcol_out_'), null);
  assert.equal(outputOfConsumer('someone_elses'), null);
  fc.assert(
    fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), (name) => {
      const consumer = outputConsumerName(name);
      assert.match(consumer, /^[A-Za-z0-9_-]+$/, 'a valid consumer name');
      assert.equal(outputOfConsumer(consumer), name);
    }),
  );
});

test('a replay’s consumer is the next generation, threatcol_out<N>_<name>, never mistaken for another output', () => {
  assert.equal(outputConsumerName('siem', 2), 'threatcol_out2_siem');
  assert.deepEqual(parseOutputConsumer('threatcol_out2_siem'), { output: 'siem', generation: 2 });
  assert.deepEqual(parseOutputConsumer('threatcol_out_2_siem'), { output: '2_siem', generation: 0 });
  assert.equal(parseOutputConsumer('threatcol_out0_siem'), null);
  assert.equal(parseOutputConsumer('threatcol_out2_'), null);
  fc.assert(
    fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), fc.nat(1_000_000), (output, generation) => {
      const consumer = outputConsumerName(output, generation);
      assert.match(consumer, /^[A-Za-z0-9_-]+$/, 'a valid consumer name');
      assert.deepEqual(parseOutputConsumer(consumer), { output, generation });
    }),
  );
});

test('ack subjects give the stream sequence, in both the plain and the domain form', () => {
  const ns = 1_795_692_956_567_333_298n;
  assert.deepEqual(parseAckSubject(`$JS.ACK.THREATCOL.threatcol_out_x.1.42.7.${ns}.3`), { seq: 42 });
  assert.deepEqual(parseAckSubject(`$JS.ACK.hub.ACCHASH.THREATCOL.threatcol_out_x.2.43.8.${ns}.0.token`), {
    seq: 43,
  });
  assert.equal(parseAckSubject('_INBOX.abc.1'), null);
  assert.equal(parseAckSubject('$JS.ACK.too.short'), null);
  fc.assert(
    fc.property(fc.string(), (subject) => {
      const parsed = parseAckSubject(subject);
      assert.ok(parsed === null || Number.isSafeInteger(parsed.seq));
    }),
  );
});

test('skipped ranges: only sequences past both the consumer and what was counted before', () => {
  assert.equal(uncounted({ records: 0, throughSeq: 0 }, 10, 25), 15);
  assert.equal(uncounted({ records: 15, throughSeq: 25 }, 10, 25), 0, 'counted before');
  assert.equal(uncounted({ records: 15, throughSeq: 25 }, 10, 30), 5);
  assert.equal(uncounted({ records: 0, throughSeq: 0 }, 30, 25), 0, 'the consumer is past the gone range');
});
