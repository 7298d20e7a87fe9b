// Which sensor a syslog connection belongs to: by client certificate (pinned, or issued by its CA for its
// name) or by source network, the most specific network first.
import type { X509Certificate } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { Sensor } from '../../store/registry.js';
import { certificatesOf, normalizeFingerprint, parseCidr } from '../../store/sensor-syslog.js';
import { type ClientCertificate, issuedBy, issuingCas, namesSender } from './client-ca.js';

interface Candidate {
  sensor: Sensor;
  networks: BlockList;
  hasNetworks: boolean;
  fingerprints: Set<string>;
  /** `--client-ca` and `--client-cn`: the bundle as given (trusted for the handshake)... */
  cas: X509Certificate[];
  /** ...and its most specific CAs, which must have issued the certificate (or one of its issuers). */
  issuers: X509Certificate[];
  cn: string;
}

/** One `--from` network of an address-only sensor, for the longest-prefix look-up. */
interface Network {
  list: BlockList;
  prefix: number;
  candidate: Candidate;
}

/** The active sensors with a syslog identity, looked up per connection. */
export class SyslogSenders {
  #candidates: Candidate[] = [];
  /** The networks of the sensors known by address alone, longest prefix first (registry order among equals). */
  #networks: Network[] = [];

  /** Takes the registry's sensors as its shape check passed them (store/sensor-syslog.ts): never throws on them. */
  update(sensors: readonly Sensor[]): void {
    const candidates: Candidate[] = [];
    const networks: Network[] = [];
    for (const sensor of sensors) {
      const syslog = sensor.syslog;
      if (sensor.status !== 'active' || syslog === undefined) continue;
      const list = new BlockList();
      const parsed = syslog.from.map(parseCidr).filter((n) => n !== null);
      for (const n of parsed) list.addSubnet(n.address, n.prefix, n.family);
      const cas = certificatesOf(syslog.client_ca ?? '');
      const candidate: Candidate = {
        sensor,
        networks: list,
        hasNetworks: parsed.length > 0,
        fingerprints: new Set(syslog.client_cert_sha256.map(normalizeFingerprint)),
        cas,
        issuers: issuingCas(cas),
        cn: syslog.client_cn ?? '',
      };
      candidates.push(candidate);
      if (candidate.fingerprints.size > 0 || syslog.client_ca !== undefined) continue;
      for (const n of parsed) {
        const one = new BlockList();
        one.addSubnet(n.address, n.prefix, n.family);
        networks.push({ list: one, prefix: n.family === 'ipv4' ? n.prefix + 96 : n.prefix, candidate });
      }
    }
    // Stable: two sensors listing the same network keep registry order (`sensor add` warns of the overlap).
    networks.sort((a, b) => b.prefix - a.prefix);
    this.#candidates = candidates;
    this.#networks = networks;
  }

  /**
   * The sensor a connection from `address` with this client certificate (null: none) belongs to. A sensor
   * that knows its certificates (pinned, or by CA and name) is matched only by one of them (and, when it also
   * lists networks, from one of those): an address alone never stands in for its key. Otherwise the sensor
   * known by address alone whose network holding the address is the most specific (longest prefix); null
   * when none.
   */
  match(address: string, client: ClientCertificate | null): Sensor | null {
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (client !== null) {
      const fp = normalizeFingerprint(client.fingerprint);
      for (const c of this.#candidates) {
        const known =
          c.fingerprints.has(fp) ||
          (c.issuers.length > 0 &&
            issuedBy(client, c.issuers) &&
            namesSender(client.chain[0] as X509Certificate, c.cn));
        if (known && (!c.hasNetworks || c.networks.check(address, family))) return c.sensor;
      }
    }
    for (const n of this.#networks) if (n.list.check(address, family)) return n.candidate.sensor;
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
