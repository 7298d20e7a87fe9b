// The field layouts of the MMDB files enrich.countryDb and enrich.asnDb take: GeoLite2, DB-IP, ip-location-db and
// IPinfo each name the country and the AS their own way; a value that is no code or no AS number gives nothing.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { readAddress } from '../../src/enrich/address-words.js';
import { openDatabase } from '../../src/enrich/databases.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { tinyMmdb } from '../helpers/tiny-mmdb.js';

function lookUp(t: test.TestContext, kind: 'country' | 'asn', fields: Record<string, unknown>) {
  const path = join(makeTempDir(t), `${kind}.mmdb`);
  writeFileSync(path, tinyMmdb({ '8.8.8.0/24': fields as Record<string, string> }));
  const db = openDatabase(kind, path);
  const family = readAddress('8.8.8.8') as 4;
  return kind === 'country' ? db.country('8.8.8.8', family) : db.asn('8.8.8.8', family);
}

test('country: iso_code (GeoLite2, DB-IP), registered_country, country_code (ip-location-db), a plain code (IPinfo)', (t) => {
  assert.equal(lookUp(t, 'country', { country: { iso_code: 'US' } }), 'US');
  assert.equal(lookUp(t, 'country', { registered_country: { iso_code: 'DE' } }), 'DE');
  assert.equal(lookUp(t, 'country', { country_code: 'FR' }), 'FR');
  assert.equal(lookUp(t, 'country', { country: 'NL', country_name: 'Netherlands' }), 'NL');
  assert.equal(lookUp(t, 'country', { country: 'Netherlands' }), undefined, 'a name is no code');
});

test('AS: autonomous_system_number (GeoLite2, DB-IP), asn "AS15169" with as_name (IPinfo); "" or "AS" is no AS 0', (t) => {
  assert.deepEqual(
    lookUp(t, 'asn', { autonomous_system_number: 15169, autonomous_system_organization: 'G' }),
    {
      asn: 15169,
      org: 'G',
    },
  );
  assert.deepEqual(lookUp(t, 'asn', { asn: 'AS15169', as_name: 'Google LLC' }), {
    asn: 15169,
    org: 'Google LLC',
  });
  assert.deepEqual(lookUp(t, 'asn', { asn: '3320' }), { asn: 3320, org: '' });
  assert.equal(lookUp(t, 'asn', { asn: '' }), undefined);
  assert.equal(lookUp(t, 'asn', { asn: 'AS' }), undefined);
  assert.equal(lookUp(t, 'asn', { asn: 'AS15169x' }), undefined);
});
