// Writes the shipped enrichment databases into a built tree's enrich/ folder (packaging/build-dist.mjs runs it
// after tsc): the country MMDB of @ip-location-db/geo-whois-asn-country-mmdb as it is, and the AS CSV of
// @ip-location-db/asn converted into the table src/enrich/asn-table.ts loads in milliseconds (reading the CSV
// takes seconds, too long for every start). The table is kept in node_modules/.cache by the package's version,
// so a build converts it once. Run as `node --import tsx packaging/generate/enrich-data.ts OUT_DIR`.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asnTableFile, readAsnCsv } from '../../src/enrich/asn-table.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COUNTRY = join(ROOT, 'node_modules/@ip-location-db/geo-whois-asn-country-mmdb');
const ASN = join(ROOT, 'node_modules/@ip-location-db/asn');

export function writeEnrichData(out: string): void {
  mkdirSync(out, { recursive: true });
  copyFileSync(join(COUNTRY, 'geo-whois-asn-country.mmdb'), join(out, 'country.mmdb'));
  const version = JSON.parse(readFileSync(join(ASN, 'package.json'), 'utf8')).version as string;
  const cacheDir = join(ROOT, 'node_modules/.cache/threatcol');
  const cached = join(cacheDir, `asn-${version}.table`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    const temp = `${cached}.${process.pid}.tmp`;
    writeFileSync(temp, asnTableFile(readAsnCsv(join(ASN, 'asn-ipv4-num.csv'), join(ASN, 'asn-ipv6.csv'))));
    renameSync(temp, cached);
  }
  copyFileSync(cached, join(out, 'asn.table'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeEnrichData(process.argv[2] as string);
