// What the `feed`, `block` and `allow` commands share: names, durations and networks from the command line,
// the feed's URL, and who is running the command (recorded with a manual block or allow entry).
import { hostname, userInfo } from 'node:os';
import { type Network, parseBlockDuration, parseNetwork } from '../../config/blocklist-schema.js';
import type { Config } from '../../config/schema.js';
import { formatNetwork } from '../../decisions/networks.js';
import { ThreatcolError } from '../../errors.js';

export const FEED_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A feed name is part of its URL: letters, digits, `_`, `-` (no `/`, `..` or spaces); `unknown` is /metrics' label
 * for a name that is no feed. */
export function checkFeedName(name: string): string {
  if (name === 'unknown') {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      '"unknown" is not a feed name: /metrics counts requests for names that are no feed under it',
    );
  }
  if (!FEED_NAME.test(name)) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `"${name}" is not a feed name: 1-64 letters, digits, "_" or "-" (it is part of the feed's URL)`,
    );
  }
  return name;
}

/** `--for 24h` in milliseconds. */
export function forDuration(text: string, flag = '--for'): number {
  const ms = parseBlockDuration(text);
  if (ms === null) {
    throw new ThreatcolError('INVALID_ARGUMENT', `${flag} "${text}" is not a duration (e.g. 30m, 24h, 7d)`);
  }
  return ms;
}

/** An address or CIDR from the command line, in its canonical network form (host bits cleared). */
export function networkArgument(text: string): { network: Network; key: string } {
  const network = parseNetwork(text.trim());
  if (network === null) {
    throw new ThreatcolError('INVALID_ARGUMENT', `"${text}" is not an IPv4 or IPv6 address or CIDR`);
  }
  return { network, key: formatNetwork(network) };
}

/** Who runs the command (the CLI's user), recorded with manual decisions. */
export function whoAmI(env: Record<string, string | undefined>): string {
  const sudo = env.SUDO_USER;
  try {
    const user = userInfo().username;
    return sudo && sudo !== user ? `${sudo} (as ${user})` : user;
  } catch {
    return sudo ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** `https://HOST[:PORT]/feeds/NAME` on the collector's HTTPS listener. */
export function feedUrl(config: Config, name: string): string {
  const configured = config.server.host;
  const host = configured === '::' || configured === '0.0.0.0' || configured === '' ? hostname() : configured;
  const port = config.server.port === 443 ? '' : `:${config.server.port}`;
  const shown = host.includes(':') ? `[${host}]` : host;
  return `https://${shown}${port}/feeds/${name}`;
}

export function feedNotFound(name: string): ThreatcolError {
  return new ThreatcolError('FEED_NOT_FOUND', `no feed named "${name}" (threatcol feed list shows them)`);
}
