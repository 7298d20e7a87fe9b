// /usr/share/doc/threatcol/copyright in Debian's machine-readable format (DEP-5): threatcol itself, the bundled
// Node runtime, and every bundled production module, each with the licence text it ships.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as layout from './layout.js';
import { productionModules, type StageOptions } from './stage.js';

interface Stanza {
  files: string;
  copyright: string;
  license: string;
  text: string;
}

export function renderCopyright(options: StageOptions): string {
  const { checkout } = options;
  const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { license: string };
  const stanzas: Stanza[] = [
    {
      files: '*',
      copyright: 'threatcol developers',
      license: manifest.license,
      text: licenceText(checkout) ?? `${manifest.license} (see package.json)`,
    },
    nodeStanza(options.nodeBinary, options.nodeVersion),
    ...productionModules(checkout).map((dir) => moduleStanza(checkout, dir)),
    enrichStanza(checkout),
  ];
  const header = [
    'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    `Upstream-Name: ${layout.PACKAGE}`,
    'Comment: The package bundles its own Node.js runtime (Debian 12 ships Node 18, too old) and the',
    ' production npm modules it runs on, exactly as package-lock.json pins them.',
  ].join('\n');
  return `${[header, ...stanzas.map(renderStanza)].join('\n\n')}\n`;
}

function renderStanza(s: Stanza): string {
  return [`Files: ${s.files}`, `Copyright: ${s.copyright}`, `License: ${s.license}`, indent(s.text)].join(
    '\n',
  );
}

/** DEP-5 continuation lines: one leading space, an empty line as ` .`. */
function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => (line.trim() === '' ? ' .' : ` ${line.replace(/\t/g, '    ').trimEnd()}`))
    .join('\n');
}

/**
 * The country and AS tables in dist/enrich/, built from ip-location-db's data (build-time modules, not shipped):
 * CC0 for the country table, CC BY 4.0 (RouteViews, DB-IP, NRO) for the AS one, whose attribution this carries.
 */
function enrichStanza(checkout: string): Stanza {
  const asn = join(checkout, 'node_modules/@ip-location-db/asn');
  const texts = ['ROUTEVIEWS-LICENSE', 'DBIP-LICENSE', 'NRO_LICENSE', 'MODIFICATIONS'].map((name) =>
    readFileSync(join(asn, name), 'utf8').trim(),
  );
  return {
    files: `${layout.LIB_DIR.slice(1)}/dist/enrich/*`,
    copyright:
      'RouteViews (routeviews.org), DB-IP (db-ip.com), Number Resource Organization (nro.net); compiled by ip-location-db (github.com/sapics/ip-location-db)',
    license: 'CC-BY-4.0 and CC0-1.0',
    text: [
      'The AS table is built from @ip-location-db/asn, the country table from',
      '@ip-location-db/geo-whois-asn-country-mmdb (CC0-1.0, itself from NRO statistics).',
      'IP Geolocation by DB-IP: https://db-ip.com',
      '',
      ...texts.flatMap((text) => [text, '']),
    ].join('\n'),
  };
}

function nodeStanza(nodeBinary: string, nodeVersion: string): Stanza {
  // Where Node's licence lives: beside bin/ in the runtime package (as in an official tarball), else a Debian or
  // NodeSource package's.
  const candidates = [
    join(dirname(nodeBinary), '..', 'LICENSE'),
    '/usr/share/doc/nodejs/LICENSE',
    join(dirname(nodeBinary), '..', 'share', 'doc', 'node', 'LICENSE'),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (!found) {
    throw new Error(
      `Node's LICENSE not found (looked in ${candidates.join(', ')}): the package must carry it`,
    );
  }
  return {
    files: layout.NODE_BIN.slice(1),
    copyright: 'Node.js contributors and the authors of the libraries it bundles (see below)',
    license: `MIT and others (Node.js ${nodeVersion}, as its LICENSE lists)`,
    text: readFileSync(found, 'utf8'),
  };
}

function moduleStanza(checkout: string, dir: string): Stanza {
  const path = join(checkout, dir);
  const pkg = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    license?: string | { type: string };
    author?: string | { name: string };
  };
  const license = typeof pkg.license === 'object' ? pkg.license.type : (pkg.license ?? 'UNKNOWN');
  const common = COMMON_LICENSES[license];
  const text = licenceText(path);
  const holders = text ? [...new Set(text.match(/^\s*Copyright\b.*$/gim)?.map((l) => l.trim()))] : [];
  const author = typeof pkg.author === 'object' ? pkg.author.name : pkg.author;
  return {
    files: `${layout.LIB_DIR.slice(1)}/${dir}/*`,
    copyright: holders.length > 0 ? holders.join('\n ') : (author ?? `the ${pkg.name} authors`),
    license: license.replace(/[()]/g, '').replace(/ OR /g, ' or ').replace(/ AND /g, ' and '),
    // Debian policy 12.5: a licence in /usr/share/common-licenses is referred to, not repeated.
    text: common
      ? `On Debian systems, the full text of the ${license} licence is in /usr/share/common-licenses/${common}.`
      : (text ??
        `${pkg.name} ${pkg.version} declares "${license}" in its package.json and ships no licence file.`),
  };
}

const COMMON_LICENSES: Record<string, string> = {
  'Apache-2.0': 'Apache-2.0',
  'GPL-2.0': 'GPL-2',
  'GPL-3.0': 'GPL-3',
  'LGPL-2.1': 'LGPL-2.1',
  'MPL-2.0': 'MPL-2.0',
};

/** The text of a LICENSE / LICENCE / COPYING file in `dir`, if it has one. */
function licenceText(dir: string): string | null {
  const file = readdirSync(dir)
    .sort()
    .find((name) => /^(licen[cs]e|copying)(\.(md|txt|markdown))?$/i.test(name));
  return file ? readFileSync(join(dir, file), 'utf8') : null;
}
