// Which sensor a syslog connection belongs to: by client certificate (pinned, or issued by its CA for its
// name) or by source network.
import type { X509Certificate } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { Sensor } from '../../store/registry.js';
import { type ClientCertificate, certificatesOf, issuedBy, namesSender } from './client-ca.js';

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
  /** `--client-ca` and `--client-cn`: certificates this CA issued for this name. */
  cas: X509Certificate[];
  cn: string;
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
          cas: certificatesOf(sensor.syslog?.client_ca ?? ''),
          cn: sensor.syslog?.client_cn ?? '',
        };
      });
  }

  /**
   * The sensor a connection from `address` with this client certificate (null: none) belongs to. A sensor
   * that knows its certificates (pinned, or by CA and name) is matched only by one of them (and, when it also
   * lists networks, from one of those): an address alone never stands in for its key. Otherwise the sensor
   * whose networks hold the address; null when none.
   */
  match(address: string, client: ClientCertificate | null): Sensor | null {
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (client !== null) {
      const fp = normalizeFingerprint(client.fingerprint);
      for (const c of this.#candidates) {
        const known =
          c.fingerprints.has(fp) ||
          (c.cas.length > 0 &&
            issuedBy(client, c.cas) &&
            namesSender(client.chain[0] as X509Certificate, c.cn));
        if (known && (!c.hasNetworks || c.networks.check(address, family))) return c.sensor;
      }
    }
    for (const c of this.#candidates) {
      if (c.fingerprints.size === 0 && c.cas.length === 0 && c.networks.check(address, family))
        return c.sensor;
    }
    return null;
  }

  /** The CAs of every sensor identified by `--client-ca`, once each (PEM): the TLS listener's trusted CAs. */
  clientCas(): string[] {
    const pems = new Map<string, string>();
    for (const c of this.#candidates) for (const ca of c.cas) pems.set(ca.fingerprint256, ca.toString());
    return [...pems.values()];
  }

  /** Whether `sensor` (as matched earlier) still sends syslog with the same identity. */
  stillValid(sensor: Sensor): boolean {
    const now = this.#candidates.find((c) => c.sensor.name === sensor.name)?.sensor;
    return now !== undefined && JSON.stringify(now.syslog) === JSON.stringify(sensor.syslog);
  }
}
