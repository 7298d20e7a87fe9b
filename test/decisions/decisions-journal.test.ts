// The files backend's decisions journal, black box: a torn last line (a power cut in the middle of an append) is
// left out and never fatal, the next change is read; folding the journal into the snapshot keeps every entry,
// for readers and for a running watcher; a data directory holding only the older decisions.json reads as before.
// Property: whatever the changes and wherever the journal is cut, a read gives exactly the applies whose lines
// were whole, and a change applied after the cut is read too. Uses dist/ (npm run build).
import { strict as assert } from 'node:assert';
import { readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import type { DecisionChange, DecisionsState } from '../../src/store/decisions.js';
import { changeLines, headerLine } from '../../src/store/files/decisions-journal.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli.js';
import { blockChange } from '../helpers/decisions.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const GUARD_MS = 60_000;

async function storeOf(dataDir: string) {
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir, 'registry.pollIntervalMs': 100 },
  });
  return openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
}

const DAY_MS = 86_400_000;
const put = (address: string, reason = 'test'): DecisionChange =>
  blockChange(address, Date.now(), Date.now() + DAY_MS, { reason });

async function listed(dataDir: string): Promise<string[]> {
  const r = await runCli(['block', 'list', '--json', '--data-dir', dataDir]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { address: string }[]).map((b) => b.address).sort();
}

async function blockAdd(dataDir: string, address: string): Promise<void> {
  const r = await runCli(['block', 'add', address, '--for', '1h', '--reason', 'test', '--data-dir', dataDir]);
  assert.equal(r.code, 0, r.stderr);
}

test('a journal line torn by a cut is left out, never fatal, and the next change after it is read', async (t) => {
  const dataDir = makeTempDir(t);
  await blockAdd(dataDir, '198.51.100.1');
  const journal = join(dataDir, 'decisions.journal');
  const whole = statSync(journal).size;
  await blockAdd(dataDir, '198.51.100.2');
  // The second append cut halfway, as a power cut leaves an unsynced write.
  truncateSync(journal, whole + Math.floor((statSync(journal).size - whole) / 2));
  assert.deepEqual(await listed(dataDir), ['198.51.100.1/32']);
  await blockAdd(dataDir, '198.51.100.3');
  assert.deepEqual(await listed(dataDir), ['198.51.100.1/32', '198.51.100.3/32']);
  // Garbage in place of the tail (a cut leaving zeros or old blocks) is left out the same way.
  writeFileSync(journal, Buffer.alloc(300), { flag: 'a' });
  await blockAdd(dataDir, '198.51.100.4');
  assert.deepEqual(await listed(dataDir), ['198.51.100.1/32', '198.51.100.3/32', '198.51.100.4/32']);
});

test('folding the journal into the snapshot keeps every entry, for a reader and for a running watcher', async (t) => {
  const dataDir = makeTempDir(t);
  const writer = await storeOf(dataDir);
  t.after(() => writer.close());
  const reader = await storeOf(dataDir);
  t.after(() => reader.close());
  let seen: DecisionsState | null = null;
  const watch = reader.decisions.watch(
    (state) => {
      seen = state;
    },
    (error) => assert.fail(error),
  );
  t.after(() => watch.stop());
  const snapshot = join(dataDir, 'decisions.json');
  const generation = () => (JSON.parse(readFileSync(snapshot, 'utf8')) as { generation: number }).generation;
  await writer.decisions.apply([put('192.0.2.200/32')]);
  const first = generation();
  // Blocks added and extended (the same key again) until the journal has been folded twice.
  const expected = new Map<string, string>();
  for (let round = 0; generation() < first + 2; round++) {
    assert.ok(round < 200, 'the journal is folded into the snapshot');
    const changes: DecisionChange[] = [];
    for (let i = 0; i < 250; i++) {
      const address = `198.18.${((round * 250 + i) % 1000) >> 8}.${(round * 250 + i) % 256}/32`;
      changes.push(put(address, `round ${round}`));
      expected.set(address, `round ${round}`);
    }
    await writer.decisions.apply(changes);
  }
  await writer.decisions.apply([{ kind: 'block', key: '192.0.2.200/32', value: null }]);
  const reasons = (state: DecisionsState) =>
    new Map([...state.blocks].map(([key, b]) => [key, b.reason] as [string, string]));
  assert.deepEqual(reasons(await reader.decisions.read()), expected);
  await until(
    () => seen !== null && reasons(seen).size === expected.size && !seen.blocks.has('192.0.2.200/32'),
    GUARD_MS,
    "the watcher's state after the folds",
  );
  assert.deepEqual(reasons(seen as unknown as DecisionsState), expected);
  assert.ok(statSync(join(dataDir, 'decisions.journal')).size < statSync(snapshot).size);
});

test('a data directory with only the older decisions.json reads as before, and takes new changes', async (t) => {
  const dataDir = makeTempDir(t);
  const old = put('203.0.113.9/32', 'from before the journal').value;
  writeFileSync(
    join(dataDir, 'decisions.json'),
    `${JSON.stringify({
      version: 1,
      entries: {
        block: { '203.0.113.9/32': old },
        allow: {},
        feed: {},
        cleared: {},
        offence: {},
        fetch: {},
        rule: {},
      },
    })}\n`,
    { mode: 0o600 },
  );
  assert.deepEqual(await listed(dataDir), ['203.0.113.9/32']);
  await blockAdd(dataDir, '198.51.100.5');
  assert.deepEqual(await listed(dataDir), ['198.51.100.5/32', '203.0.113.9/32']);
  const r = await runCli(['block', 'list', '--json', '--data-dir', dataDir]);
  const kept = (JSON.parse(r.stdout) as { address: string; reason: string }[]).find(
    (b) => b.address === '203.0.113.9/32',
  );
  assert.equal(kept?.reason, 'from before the journal');
});

/** decisions.json of `generation` holding `blocks`, as a fold writes it. */
function writeSnapshot(dataDir: string, generation: number, blocks: DecisionChange[]): void {
  const block = Object.fromEntries(blocks.map((c) => [c.key, c.value]));
  const entries = { block, allow: {}, feed: {}, cleared: {}, offence: {}, fetch: {}, rule: {} };
  writeFileSync(join(dataDir, 'decisions.json'), `${JSON.stringify({ version: 1, generation, entries })}\n`, {
    mode: 0o600,
  });
}

test('a fold cut between its two renames (the old journal beside the new snapshot) loses no later change', async (t) => {
  for (const watched of [false, true]) {
    const dataDir = makeTempDir(t);
    const folded = put('192.0.2.1/32', 'folded');
    // The fold of generation 1 renamed its snapshot (generation 2) and died before it renamed the new journal.
    writeSnapshot(dataDir, 2, [folded]);
    writeFileSync(join(dataDir, 'decisions.journal'), headerLine(1) + changeLines([folded]), { mode: 0o600 });
    const writer = await storeOf(dataDir);
    t.after(() => writer.close());
    // The daemon's engine and feeds watch; a CLI command does not.
    if (watched) {
      const watch = writer.decisions.watch(
        () => {},
        (error) => assert.fail(error),
      );
      t.after(() => watch.stop());
    }
    await writer.decisions.apply([put('198.51.100.7/32', 'after the cut')]);
    // A restart: a fresh read of the files.
    const reader = await storeOf(dataDir);
    t.after(() => reader.close());
    const blocks = (await reader.decisions.read()).blocks;
    assert.equal(blocks.get('198.51.100.7/32')?.reason, 'after the cut', `watched: ${watched}`);
    assert.equal(blocks.get('192.0.2.1/32')?.reason, 'folded', `watched: ${watched}`);
  }
});

test('changes appended to the old journal beside a newer snapshot (by a collector before the fix) are read', async (t) => {
  const dataDir = makeTempDir(t);
  const folded = put('192.0.2.1/32', 'folded');
  const removed: DecisionChange = { kind: 'block', key: '192.0.2.2/32', value: null };
  writeSnapshot(dataDir, 2, [folded]);
  // The journal the fold read (a block, then one removed: the snapshot holds their end), then one change after.
  writeFileSync(
    join(dataDir, 'decisions.journal'),
    headerLine(1) +
      changeLines([put('192.0.2.2/32'), folded, removed, put('203.0.113.3/32', 'appended after the cut')]),
    { mode: 0o600 },
  );
  const store = await storeOf(dataDir);
  t.after(() => store.close());
  const blocks = (await store.decisions.read()).blocks;
  assert.deepEqual(
    new Map([...blocks].map(([key, b]) => [key, b.reason])),
    new Map([
      ['192.0.2.1/32', 'folded'],
      ['203.0.113.3/32', 'appended after the cut'],
    ]),
  );
});

test('property: a journal cut anywhere reads as the applies whose lines were whole, plus what came after', async (t) => {
  const dataDir = makeTempDir(t);
  let n = 0;
  const addresses = fc.constantFrom('192.0.2.1/32', '192.0.2.2/32', '192.0.2.3/32', '2001:db8:1:2::/64');
  const change = fc.record({
    address: addresses,
    remove: fc.boolean(),
    reason: fc.string({ maxLength: 30, unit: 'grapheme' }),
  });
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.array(change, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      async (applies, cutAt) => {
        const dir = join(dataDir, String(n++));
        const store = await storeOf(dir);
        try {
          const journal = join(dir, 'decisions.journal');
          const flat = applies.flat();
          for (const changes of applies)
            await store.decisions.apply(
              changes.map((c) =>
                c.remove ? { kind: 'block', key: c.address, value: null } : put(c.address, c.reason),
              ),
            );
          const text = readFileSync(journal);
          const cut = Math.floor(cutAt * text.length);
          truncateSync(journal, cut);
          // One line per change after the header line: the changes whose lines end before the cut count.
          let whole = -1;
          for (let at = text.indexOf(10); at !== -1 && at < cut; at = text.indexOf(10, at + 1)) whole++;
          const expected = new Map<string, string>();
          for (const c of flat.slice(0, Math.max(0, whole)))
            if (c.remove) expected.delete(c.address);
            else expected.set(c.address, c.reason);
          const read = await store.decisions.read();
          assert.deepEqual(new Map([...read.blocks].map(([k, b]) => [k, b.reason])), expected);
          await store.decisions.apply([put('198.51.100.99/32', 'after the cut')]);
          const again = (await store.decisions.read()).blocks;
          assert.equal(again.get('198.51.100.99/32')?.reason, 'after the cut');
        } finally {
          await store.close();
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('one large write by a process that watches nothing (a CLI command) keeps every change, on a new data directory and on one with a journal', async (t) => {
  for (const first of ['none', 'small'] as const) {
    const dataDir = makeTempDir(t);
    const store = await storeOf(dataDir);
    t.after(() => store.close());
    if (first === 'small') await store.decisions.apply([put('192.0.2.1/32')]);
    // Over a MiB of journal lines: past the size at which the journal is folded into a new snapshot.
    const changes = Array.from({ length: 20_000 }, (_, i) => put(`10.${i >> 8}.${i & 0xff}.1/32`));
    await store.decisions.apply(changes);
    const state = await store.decisions.read();
    assert.equal(state.blocks.size, changes.length + (first === 'small' ? 1 : 0), `first write: ${first}`);
  }
});
