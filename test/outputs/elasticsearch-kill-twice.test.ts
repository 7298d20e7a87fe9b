// The kill-twice scenario (test/outputs/kill-twice.ts) for the `elasticsearch` output, against the loopback
// `_bulk` server: down (503), then slow, mapping errors refused per item; a re-sent document answers 409.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startBulkServer } from '../helpers/bulk-server.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { runKillTwice } from './kill-twice.js';

test('elasticsearch: 10,000 records, bulk down then slow and refusing items, serve killed -9 twice: none skipped', async (t) => {
  const dir = makeTempDir(t);
  const apiKey = 'dGhyZWF0Y29sOnNlY3JldA==';
  writeFileSync(join(dir, 'es.apikey'), `${apiKey}\n`);
  const bulk = await startBulkServer(t, `ApiKey ${apiKey}`);
  writeFileSync(join(dir, 'es-ca.pem'), bulk.ca);
  const { summary } = await runKillTwice(t, dir, 'elastic', {
    output: {
      type: 'elasticsearch',
      url: bulk.url,
      ca: join(dir, 'es-ca.pem'),
      tokenFile: join(dir, 'es.apikey'),
      index: 'threats',
    },
    refuseMarker: bulk.mappingErrorMarker,
    setDown(down) {
      bulk.down = down;
    },
    setSlow(slow) {
      bulk.delayMs = slow ? 30 : 0;
    },
    taken: () => bulk.taken,
    refused: () => bulk.refused,
  });
  t.diagnostic(summary);
});
