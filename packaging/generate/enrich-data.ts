// Writes the shipped enrichment databases into a built tree's enrich/ folder (packaging/build-dist.mjs runs it
// after tsc) as the range tables src/enrich/asn-table.ts loads in milliseconds: the country MMDB of
// @ip-location-db/geo-whois-asn-country-mmdb walked into ranges (a binary search is ~5x faster than the MMDB's
// tree walk), and the AS CSV of @ip-location-db/asn (reading the CSV takes seconds, too long for every start).
// Each table is kept in node_modules/.cache by its package's version, so a build converts it once. Run as `node --import tsx packaging/generate/enrich-data.ts OUT_DIR`.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asnTableFile, type RangeTable, readAsnCsv, TABLE_MAGIC } from '../../src/enrich/asn-table.js';
import { mmdbRanges } from './mmdb-ranges.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COUNTRY = join(ROOT, 'node_modules/@ip-location-db/geo-whois-asn-country-mmdb');
const ASN = join(ROOT, 'node_modules/@ip-location-db/asn');

export function writeEnrichData(out: string): void {
  mkdirSync(out, { recursive: true });
  const cacheDir = join(ROOT, 'node_modules/.cache/threatcol');
  mkdirSync(cacheDir, { recursive: true });
  /** The table `make` gives, kept by the data package's version so a build makes it once (seconds each). */
  const cached = (name: string, pkg: string, make: () => RangeTable) => {
    const version = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version as string;
    // The layout's version in the name: a cache of an older layout is made again.
    const path = join(cacheDir, `${name}-${version}-${TABLE_MAGIC.trim().toLowerCase()}.table`);
    if (!existsSync(path)) {
      const temp = `${path}.${process.pid}.tmp`;
      writeFileSync(temp, asnTableFile(make(), dataDate(version)));
      renameSync(temp, path);
    }
    copyFileSync(path, join(out, `${name}.table`));
  };
  cached('country', COUNTRY, () =>
    mmdbRanges(join(COUNTRY, 'geo-whois-asn-country.mmdb'), (r) =>
      typeof r.country_code === 'string' ? r.country_code : undefined,
    ),
  );
  cached('asn', ASN, () => readAsnCsv(join(ASN, 'asn-ipv4-num.csv'), join(ASN, 'asn-ipv6.csv')));
}

/** ip-location-db's versions end in the data's date and hour: 2.3.2026061719 is 2026-06-17 19:00 UTC. */
function dataDate(version: string): number {
  const m = /(\d{4})(\d{2})(\d{2})(\d{2})$/.exec(version);
  if (!m) throw new Error(`no date in the data package's version ${version}`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeEnrichData(process.argv[2] as string);
