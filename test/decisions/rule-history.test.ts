// Each rule's history, through the real binary on both backends: a collector's engine stores per rule its
// newest matching record and newest block; `threatcol check` warns about a rule that blocked nothing for 7 days
// while records met its criteria (the week is written into the store directly: no test waits 7 days).
// Uses dist/ (npm run build).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import type { RuleEntry } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const GUARD_MS = 30_000;
const DAY_MS = 86_400_000;
const RULES = {
  critical: { minCriticality: 4, duration: '24h' },
  // Met by every record of criticality 2 or more, blocks nothing: 1,000 records about one address never come.
  flood: { minCriticality: 2, minRecords: 1000, within: '1h', duration: '1h' },
};

/** `threatcol check`'s line about the rules, for a data directory and configuration file. */
async function checkRulesLine(dataDir: string, config: string, env: Record<string, string>) {
  const r = await runCli(
    ['check', '--no-daemon', '--port', '0', '--json', '--data-dir', dataDir, '--config', config],
    { env },
  );
  assert.equal(r.code, 0, r.stderr);
  const checks = (JSON.parse(r.stdout) as { checks: { name: string; status: string; message: string }[] })
    .checks;
  return checks.find((c) => c.name === 'rules');
}

for (const backend of ['files', 'nats'] as const) {
  test(`${backend}: the engine stores each rule's newest match and block; check warns about a rule that blocked nothing for 7 days while records met it`, async (t) => {
    const env: Record<string, string> = {};
    const overrides: Record<string, unknown> = {};
    if (backend === 'nats') {
      const node = await startNatsServer(t);
      Object.assign(env, { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: node.url });
      Object.assign(overrides, { 'store.backend': 'nats', 'nats.servers': [node.url] });
    }
    const dataDir = makeTempDir(t);
    const config = join(makeTempDir(t), 'config.json');
    writeFileSync(config, JSON.stringify({ blocklist: { rules: RULES } }));
    const store = await openStore(
      loadConfig({
        env: {},
        defaultConfigPath: '/nonexistent/threatcol.json',
        overrides: { dataDir, 'blocklist.rules': RULES, ...overrides },
      }).config,
      { dataDir, logger: pino({ level: 'silent' }) },
    );
    t.after(() => store.close());
    const rulesLine = () => checkRulesLine(dataDir, config, env);

    const key = await addSensorCli(dataDir, 'fw1', [], env);
    const serve = await spawnServe(dataDir, ['--config', config], { env });
    t.after(() => serve.stop('SIGKILL'));
    const agent = trustingAgent(dataDir);
    t.after(() => agent.close());
    const sentAt = Date.now();
    const reply = await post(
      serve.url,
      '/generic',
      [genericRecord({ source_ip: '198.51.100.30', criticality: 4 })],
      { sensor: 'fw1', key, agent },
    );
    assert.equal(reply.status, 200);
    let rules = new Map<string, RuleEntry>();
    await until(
      async () => {
        rules = (await store.decisions.read()).rules;
        return rules.get('critical')?.lastBlock != null && rules.get('flood')?.lastMatch != null;
      },
      GUARD_MS,
      'both rules’ history stored',
    );
    const critical = rules.get('critical') as RuleEntry;
    const flood = rules.get('flood') as RuleEntry;
    // The record's own time: the one it was received at, between the request and now.
    for (const at of [critical.lastBlock, critical.lastMatch, flood.lastMatch]) {
      const ms = Date.parse(at as string);
      assert.ok(ms >= sentAt - 1000 && ms <= Date.now(), `${at} is the record's time`);
    }
    assert.equal(flood.lastBlock, null);
    assert.equal(critical.lastBlock, critical.lastMatch);
    // A rule counting for less than 7 days is not yet suspect.
    assert.equal((await rulesLine())?.status, 'ok');
    await serve.stop();

    // A week and more of history, written as the engine would have.
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    const entry = (rule: string, e: Omit<RuleEntry, 'rule'>) => ({
      kind: 'rule' as const,
      key: rule,
      value: { rule, ...e },
    });
    await store.decisions.apply([
      entry('critical', { since: ago(30 * DAY_MS), lastMatch: ago(3_600_000), lastBlock: ago(8 * DAY_MS) }),
      entry('flood', { since: ago(10 * DAY_MS), lastMatch: ago(60_000), lastBlock: null }),
    ]);
    const both = await rulesLine();
    assert.equal(both?.status, 'warn');
    assert.match(both?.message ?? '', /rule critical blocked nothing for 7 days \(last block /);
    assert.match(both?.message ?? '', /rule flood blocked nothing for 7 days \(never, counting since /);

    // A rule that blocked within the week, and one no record met for a week: neither is a warning.
    await store.decisions.apply([
      entry('critical', { since: ago(30 * DAY_MS), lastMatch: ago(3_600_000), lastBlock: ago(6 * DAY_MS) }),
      entry('flood', { since: ago(30 * DAY_MS), lastMatch: ago(8 * DAY_MS), lastBlock: null }),
    ]);
    assert.equal((await rulesLine())?.status, 'ok');
  });
}

test('check warns about a rule whose duration blocklist.maxDuration cuts short (its blocks last maxDuration)', async (t) => {
  const dataDir = makeTempDir(t);
  const config = join(makeTempDir(t), 'config.json');
  const rulesLine = async (blocklist: Record<string, unknown>) => {
    writeFileSync(config, JSON.stringify({ blocklist }));
    return checkRulesLine(dataDir, config, {});
  };
  const long = await rulesLine({ rules: { ...RULES, year: { minCriticality: 4, duration: '60d' } } });
  assert.equal(long?.status, 'warn');
  assert.match(
    long?.message ?? '',
    /^rule year: duration 60d is longer than blocklist\.maxDuration \(30d\): its blocks last 30d/,
  );
  assert.doesNotMatch(long?.message ?? '', /rule (critical|flood)/);
  // Within it (the default maxDuration raised): no warning.
  assert.equal(
    (await rulesLine({ rules: { year: { minCriticality: 4, duration: '60d' } }, maxDuration: '90d' }))
      ?.status,
    'ok',
  );
});
