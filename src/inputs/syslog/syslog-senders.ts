// Which sensor a syslog connection belongs to: by pinned client-certificate fingerprint or by source network.
import { BlockList, isIP } from 'node:net';
import type { Sensor } from '../../store/registry.js';

/** A CIDR as `sensor add --from` takes it: an address and an optional prefix length (a bare address is /32 or /128). */
export function parseCidr(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
  if (prefix < 0 || prefix > max) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A certificate fingerprint as stored: lower-case hex without colons (node writes `AB:CD:...`). */
export function normalizeFingerprint(text: string): string {
  return text.replace(/:/g, '').toLowerCase();
}

interface Candidate {
  sensor: Sensor;
  networks: BlockList;
  hasNetworks: boolean;
  fingerprints: Set<string>;
}

/** The active sensors with a syslog identity, looked up per connection. */
export class SyslogSenders {
  #candidates: Candidate[] = [];

  update(sensors: readonly Sensor[]): void {
    this.#candidates = sensors
      .filter((s) => s.status === 'active' && s.syslog !== undefined)
      .map((sensor) => {
        const networks = new BlockList();
        for (const cidr of sensor.syslog?.from ?? []) {
          const parsed = parseCidr(cidr);
          if (parsed) networks.addSubnet(parsed.address, parsed.prefix, parsed.family);
        }
        return {
          sensor,
          networks,
          hasNetworks: (sensor.syslog?.from.length ?? 0) > 0,
          fingerprints: new Set((sensor.syslog?.client_cert_sha256 ?? []).map(normalizeFingerprint)),
        };
      });
  }

  /**
   * The sensor a connection from `address` with this client certificate (null: none) belongs to. A sensor
   * that pins certificates is matched only by one of them (and, when it also lists networks, from one of
   * those): an address alone never stands in for its key. Otherwise the sensor whose networks hold the
   * address; null when none.
   */
  match(address: string, fingerprint: string | null): Sensor | null {
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (fingerprint !== null) {
      const fp = normalizeFingerprint(fingerprint);
      const pinned = this.#candidates.find((c) => c.fingerprints.has(fp));
      if (pinned && (!pinned.hasNetworks || pinned.networks.check(address, family))) return pinned.sensor;
    }
    for (const c of this.#candidates) {
      if (c.fingerprints.size === 0 && c.networks.check(address, family)) return c.sensor;
    }
    return null;
  }

  /** Whether `sensor` (as matched earlier) still sends syslog with the same identity. */
  stillValid(sensor: Sensor): boolean {
    const now = this.#candidates.find((c) => c.sensor.name === sensor.name)?.sensor;
    return now !== undefined && JSON.stringify(now.syslog) === JSON.stringify(sensor.syslog);
  }
}
