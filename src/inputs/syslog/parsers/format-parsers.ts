// The format parsers by the name a sensor's `--format` gives.
import { parseCef } from './cef.js';
import type { SyslogFormat } from './format-names.js';
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

export type { SyslogFormat } from './format-names.js';
