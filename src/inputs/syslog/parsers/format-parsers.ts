// The format parsers by the name a sensor's `--format` gives.

import type { SyslogFormat } from '../../../store/syslog-formats.js';
import { parseCef } from './cef.js';
import { parseFortinet } from './fortinet.js';
import { parsePanos } from './panos.js';
import type { FormatParser } from './parse-result.js';
import { parseSuricata } from './suricata.js';

export const FORMAT_PARSERS = {
  panos: parsePanos,
  cef: parseCef,
  fortinet: parseFortinet,
  suricata: parseSuricata,
} as const satisfies Record<SyslogFormat, FormatParser>;

export type { SyslogFormat } from '../../../store/syslog-formats.js';

/**
 * The parser of format `name`, or undefined when there is none. Own names only: `constructor` or `toString`
 * must not find what every object inherits.
 */
export function parserOf(name: string): FormatParser | undefined {
  return Object.hasOwn(FORMAT_PARSERS, name) ? FORMAT_PARSERS[name as SyslogFormat] : undefined;
}
