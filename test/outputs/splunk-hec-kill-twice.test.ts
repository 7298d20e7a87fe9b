// The kill-twice scenario (test/outputs/kill-twice.ts) for the `splunk_hec` output with indexer acknowledgement,
// against the loopback HEC server: busy (503 code 9), then slow, invalid events refused (400 code 6).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startHecServer } from '../helpers/hec-server.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { runKillTwice } from './kill-twice.js';

test('splunk_hec: 10,000 records, HEC busy then slow and refusing events, serve killed -9 twice: none skipped', async (t) => {
  const dir = makeTempDir(t);
  const token = '6f1c0c4e-2b1d-4f7a-9d55-threatcol';
  const hec = await startHecServer(t, token);
  hec.ackAfterPolls = 1;
  writeFileSync(join(dir, 'hec.token'), `${token}\n`);
  writeFileSync(join(dir, 'hec-ca.pem'), hec.ca);
  const { summary } = await runKillTwice(t, dir, 'siem', {
    output: {
      type: 'splunk_hec',
      url: hec.url,
      ca: join(dir, 'hec-ca.pem'),
      tokenFile: join(dir, 'hec.token'),
      index: 'threats',
      ackPollIntervalMs: 100,
    },
    refuseMarker: hec.invalidMarker,
    setDown(down) {
      hec.down = down;
    },
    setSlow(slow) {
      hec.delayMs = slow ? 30 : 0;
    },
    taken() {
      const counts = new Map<string, number>();
      for (const e of hec.events) {
        const id = e.fields?.threatcol_id as string;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    },
    refused: () => hec.refused,
    // An event request answered 400 carries no ackId: the events before the invalid one are sent again.
    resentByDesign: () => hec.takenBeforeRefusal,
  });
  t.diagnostic(summary);
});
