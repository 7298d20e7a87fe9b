// The shipped enrichment tables (dist/enrich/, written by the build) against their source data: every range's
// first and last address, and the addresses just before and after it, both families, answer as the range tables
// read from @ip-location-db's files (a start and an end a range, searched as serve searched them before the tables
// were packed). And the packed files stay small: they ship in the package and the container image.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { mmdbRanges } from '../../packaging/generate/mmdb-ranges.js';
import { WORDS } from '../../src/enrich/address-words.js';
import { type AsnTable, type RangeTable, readAsnCsv, readAsnTable } from '../../src/enrich/asn-table.js';
import { SHIPPED_ASN, SHIPPED_COUNTRY } from '../../src/enrich/databases.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COUNTRY = join(ROOT, 'node_modules/@ip-location-db/geo-whois-asn-country-mmdb');
const ASN = join(ROOT, 'node_modules/@ip-location-db/asn');
const built = existsSync(SHIPPED_COUNTRY) && existsSync(SHIPPED_ASN);

/** Both tables together on disk at most (the source data's ranges as start and end arrays took 23 MB). */
const MAX_BYTES = 10_000_000;

test('the shipped tables together take at most 10 MB', (t) => {
  if (!built) return t.skip('dist/ not built (npm run build)');
  const bytes = statSync(SHIPPED_COUNTRY).size + statSync(SHIPPED_ASN).size;
  t.diagnostic(`country.table + asn.table: ${bytes} bytes`);
  assert.ok(bytes <= MAX_BYTES, `${bytes} bytes`);
});

/** Counts of addresses compared, and the first differences (a few are enough to see what went wrong). */
function compareAtBoundaries(reference: RangeTable, packed: AsnTable) {
  const wrong: string[] = [];
  let compared = 0;
  const same = (family: 4 | 6) => {
    compared++;
    // Both answer in an object they reuse: compared before the next look-up.
    const a = reference.find(family);
    const want = a === undefined ? '' : `${a.asn} ${a.org}`;
    const b = packed.find(family);
    const got = b === undefined ? '' : `${b.asn} ${b.org}`;
    if (want !== got && wrong.length < 5)
      wrong.push(
        `${Array.from(WORDS.subarray(0, family === 4 ? 1 : 4), (w) => w.toString(16))}: ${want} != ${got}`,
      );
  };
  const { v4, v6 } = reference;
  for (let i = 0; i < v4.count; i++) {
    for (const a of [v4.starts[i] as number, v4.ends[i] as number]) {
      for (const d of [-1, 0, 1]) {
        if (a + d < 0 || a + d > 0xffffffff) continue;
        WORDS[0] = a + d;
        same(4);
      }
    }
  }
  for (let i = 0; i < v6.count; i++) {
    for (const words of [v6.starts, v6.ends]) {
      for (const d of [-1, 0, 1] as const) {
        WORDS.set(words.subarray(i * 4, i * 4 + 4));
        if (d !== 0 && !step(d)) continue;
        same(6);
      }
    }
  }
  return { wrong, compared };
}

/** WORDS (128 bits) plus or minus one; false where it would wrap around. */
function step(d: 1 | -1): boolean {
  for (let k = 3; k >= 0; k--) {
    const w = WORDS[k] as number;
    if (d === 1 ? w !== 0xffffffff : w !== 0) {
      WORDS[k] = w + d;
      return true;
    }
    WORDS[k] = d === 1 ? 0 : 0xffffffff;
  }
  // Wrapped: put it back.
  for (let k = 3; k >= 0; k--) WORDS[k] = (WORDS[k] as number) - d;
  return false;
}

test('property: the country table answers as its MMDB at every range boundary, and one address either side', (t) => {
  if (!built) return t.skip('dist/ not built (npm run build)');
  const reference = mmdbRanges(join(COUNTRY, 'geo-whois-asn-country.mmdb'), (r) =>
    typeof r.country_code === 'string' ? r.country_code : undefined,
  );
  const { wrong, compared } = compareAtBoundaries(reference, readAsnTable(SHIPPED_COUNTRY));
  t.diagnostic(`${compared} addresses compared (${reference.ranges} ranges)`);
  assert.deepEqual(wrong, []);
  assert.ok(compared > 1_000_000, `${compared}`);
});

test('property: the AS table answers as its CSV files at every range boundary, and one address either side', (t) => {
  if (!built) return t.skip('dist/ not built (npm run build)');
  const reference = readAsnCsv(join(ASN, 'asn-ipv4-num.csv'), join(ASN, 'asn-ipv6.csv'));
  const { wrong, compared } = compareAtBoundaries(reference, readAsnTable(SHIPPED_ASN));
  t.diagnostic(`${compared} addresses compared (${reference.ranges} ranges)`);
  assert.deepEqual(wrong, []);
  assert.ok(compared > 1_000_000, `${compared}`);
});
