// Which of `send`'s options belong to one endpoint only (one command defines them all): given to another, a usage
// error naming them, so a user who meant the other kind of sending learns it instead of sending something else.
import { ThreatcolError } from '../errors.js';

type FlagList = readonly [option: string, flag: string][];

/** `send syslog`'s own: the format, the transport, the client certificate and the source address. */
export const SYSLOG_ONLY_FLAGS: FlagList = [
  ['format', '--format'],
  ['tcp', '--tcp'],
  ['relp', '--relp'],
  ['clientCert', '--client-cert'],
  ['clientKey', '--client-key'],
  ['source', '--source'],
];

/** `send firewall|generic`'s own: a syslog sender is known by its certificate or address, and sends samples. */
export const HTTPS_ONLY_FLAGS: FlagList = [
  ['key', '--key'],
  ['keyFile', '--key-file'],
  ['batch', '--batch'],
  ['repeat', '--repeat'],
  ['rate', '--rate'],
];

/** Throws USAGE naming every flag of `list` given in `options` (`for`: whose they are; `not`: this command). */
export function refuseFlags(options: object, list: FlagList, owner: string, command: string): void {
  const given = list.filter(([option]) => (options as Record<string, unknown>)[option] !== undefined);
  if (given.length === 0) return;
  throw new ThreatcolError(
    'USAGE',
    `${given.map(([, flag]) => flag).join(', ')}: for ${owner} only, not ${command}`,
  );
}
