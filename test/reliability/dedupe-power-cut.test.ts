// A retry answered as a duplicate is answered for records on the disk: a batch written but not yet synced when
// the collector died (kill -9) is synced at the next start before the dedupe window counts it as stored, so a
// power cut after that 200 still finds it. On LazyFS, which drops every byte not fsynced.
import { strict as assert } from 'node:assert';
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { findLazyfs, mountLazyfs } from '../helpers/lazyfs.js';
import { firewallRecord } from '../helpers/records.js';
import { LAZYFS_ENV, readDisk } from './power-cut-support.js';
import { stopAfter } from './support.js';

const lazyfs = await findLazyfs();

test('power cut: a retry answered as a duplicate after kill -9 is answered for records on the disk', {
  skip: 'skip' in lazyfs ? lazyfs.skip : false,
}, async (t) => {
  const mount = await mountLazyfs(t, 'bin' in lazyfs ? lazyfs.bin : '', { cacheMiB: 64 });
  const dataDir = join(mount.dir, 'data');
  const key = await addSensorCli(dataDir, 'retry');
  const body = [firewallRecord()];

  const first = await spawnServe(dataDir, [], { env: LAZYFS_ENV });
  stopAfter(t, first);
  let agent = trustingAgent(dataDir);
  const stored = await post(first.url, '/firewall', body, { agent, sensor: 'retry', key });
  assert.equal(stored.status, 200, stored.text);
  const [id] = (stored.json as { ids: string[] }).ids;
  await agent.close();
  assert.equal((await first.stop()).code, 0, first.stderr());

  // What kill -9 between a batch's write and its fdatasync leaves: the line in the page cache, not on the disk
  // (the segment synced empty, then its bytes written again without a sync).
  const [segment] = listSegments(threatsDir(dataDir));
  assert.ok(segment, 'the record was stored in a segment');
  const bytes = readFileSync(segment.path);
  const fd = openSync(segment.path, 'w');
  try {
    fsyncSync(fd);
    writeSync(fd, bytes);
  } finally {
    closeSync(fd);
  }

  // The sender, never answered, sends the same request again: a duplicate of the record the window remembers.
  const second = await spawnServe(dataDir, [], { env: LAZYFS_ENV });
  stopAfter(t, second);
  agent = trustingAgent(dataDir);
  const retry = await post(second.url, '/firewall', body, { agent, sensor: 'retry', key });
  await agent.close();
  assert.equal(retry.status, 200, retry.text);
  assert.deepEqual(retry.json, { accepted: 1, ids: [id], duplicates: 1 });

  // The power goes: what the 200 named must be on the disk.
  second.child.kill('SIGKILL');
  await second.exited;
  await mount.cut();
  const disk = await readDisk(join(mount.disk, 'data'));
  assert.equal(disk.ids.get(id as string), 1, `record ${id}, answered as stored, is not on the disk`);
});
