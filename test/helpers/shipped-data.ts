// The shipped enrichment databases as `threatcol check` judges them, for tests that expect a healthy box's check.
import { loadConfig } from '../../src/config/load-config.js';
import { databasePaths, tryOpen } from '../../src/enrich/enricher.js';

/**
 * What check says of a shipped database on a healthy box: ok, or warn once its data is older than
 * enrich.maxAgeDays. Its build date is the data's (enrich.test.ts tests both answers with databases of its own): a
 * fixed 'ok' here would fail on every machine from the day the shipped data turned that old.
 */
export function shippedDataStatus(kind: 'country' | 'asn'): 'ok' | 'warn' {
  const { enrich } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent' }).config;
  const db = tryOpen(kind, databasePaths(enrich)[kind]);
  if (db instanceof Error) throw db;
  // As check counts it: whole days.
  if (db.builtAt === null) return 'warn';
  return Math.floor((Date.now() - db.builtAt) / 86_400_000) > enrich.maxAgeDays ? 'warn' : 'ok';
}
