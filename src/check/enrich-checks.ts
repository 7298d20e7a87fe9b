// `check`'s enrichment lines: each database the daemon would read (the shipped one or enrich.countryDb /
// enrich.asnDb), its type and build date; a warning when it is unreadable or older than enrich.maxAgeDays.
import type { Config } from '../config/schema.js';
import { answersItsKind, noAnswerWords } from '../enrich/databases.js';
import { databasePaths, tryOpen } from '../enrich/enricher.js';
import type { CheckResult } from './local-checks.js';

const DAY_MS = 86_400_000;

const FIELDS = { country: 'src_country, dst_country', asn: 'src_asn, src_as_org, dst_asn, dst_as_org' };
const KEYS = { country: 'enrich.countryDb', asn: 'enrich.asnDb' };

export function checkEnrichment(config: Config['enrich'], now: number): CheckResult[] {
  if (!config.enabled)
    return [
      { name: 'enrich', status: 'ok', message: 'off (enrich.enabled: false): records get no country or AS' },
    ];
  const paths = databasePaths(config);
  return (['country', 'asn'] as const).map((kind): CheckResult => {
    const name = `enrich ${kind}`;
    const db = tryOpen(kind, paths[kind]);
    if (db instanceof Error)
      return {
        name,
        status: 'warn',
        message: `${paths[kind]} unreadable (${db.message}): records are stored without ${FIELDS[kind]}; fix or replace the file (${KEYS[kind]}), it is read again when replaced`,
      };
    const built =
      db.builtAt === null ? 'at an unknown date' : new Date(db.builtAt).toISOString().slice(0, 10);
    const ageDays = db.builtAt === null ? null : Math.floor((now - db.builtAt) / DAY_MS);
    const what = `${paths[kind]} (${db.type}) built ${built}`;
    // Every warning the database earns, not the first alone.
    const warnings: string[] = [];
    if (!answersItsKind(db))
      warnings.push(
        `it ${noAnswerWords(kind)}; is it ${kind === 'asn' ? 'an AS' : 'a country'} database? Records get no ${FIELDS[kind]} from it (${KEYS[kind]})`,
      );
    if (ageDays === null)
      warnings.push(
        `its build date is unknown (no build_epoch in its metadata): make sure it is current (docs/operations.md)`,
      );
    else if (ageDays > config.maxAgeDays)
      warnings.push(
        `${ageDays} days ago: older than enrich.maxAgeDays (${config.maxAgeDays}); install a newer one (docs/operations.md)`,
      );
    if (warnings.length > 0) return { name, status: 'warn', message: `${what}: ${warnings.join('; ')}` };
    return { name, status: 'ok', message: `${what}, ${ageDays} days ago` };
  });
}
