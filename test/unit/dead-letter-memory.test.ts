// What an output remembers having dead-lettered: the last run's dead letters count as written only while they are
// still listed, so a record refused again after a --retry delivered it (or the size bound dropped it) is written
// again, not swallowed; this run's own stay remembered until their batch is acknowledged.
import assert from 'node:assert/strict';
import { unlinkSync } from 'node:fs';
import { test } from 'node:test';
import { appendDeadLetters, deadLetterMemory } from '../../src/outputs/dead-letter.js';
import { deadLetterPath } from '../../src/outputs/dead-letter-files.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const letter = (id: string) => ({ line: JSON.stringify({ id, threat: 'refused' }), answer: 'HTTP 400' });

test("the last run's dead letters count as written only while listed; this run's until acknowledged", (t) => {
  const dataDir = makeTempDir(t);
  appendDeadLetters(dataDir, 'hook', [letter('r-earlier')], '2026-11-30T00:00:00.000Z', null);
  const memory = deadLetterMemory(dataDir, 'hook', { count: 100, max: 1000 });
  assert.equal(memory.has('r-earlier'), true, 'listed: a batch handed over again does not write it twice');
  // This run refuses another record; its batch is acknowledged.
  appendDeadLetters(dataDir, 'hook', [letter('s-now')], '2026-11-30T00:01:00.000Z', null);
  memory.add('s-now');
  assert.equal(memory.has('s-now'), true);
  memory.settled([{ id: 's-now' }]);
  assert.equal(memory.has('s-now'), false, 'acknowledged: a later refusal of it is written');
  // A --retry delivered the dead letters and deleted the file: r-earlier, refused again (a replay), is written.
  unlinkSync(deadLetterPath(dataDir, 'hook'));
  assert.equal(memory.has('r-earlier'), false, 'no longer listed: written again, not lost');
});
