// `sensor add` and `sensor set` warn when a sensor known by address alone lists a `--from` network that
// overlaps another such sensor's: the listener then takes a connection as the sensor of the narrower network.
import { BlockList } from 'node:net';
import type { Sensor } from '../../store/registry.js';
import { parseCidr } from '../../store/sensor-syslog.js';

/** Whether the listener matches `sensor` by source address (no pinned certificate, no CA). */
function byAddress(sensor: Sensor): boolean {
  const syslog = sensor.syslog;
  return (
    sensor.status === 'active' &&
    syslog !== undefined &&
    syslog.client_cert_sha256.length === 0 &&
    syslog.client_ca === undefined
  );
}

/** Whether two CIDRs share an address: the wider one holds the narrower one's first address. */
function overlap(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  if (x === null || y === null || x.family !== y.family) return false;
  const [wide, narrow] = x.prefix <= y.prefix ? [x, y] : [y, x];
  const list = new BlockList();
  list.addSubnet(wide.address, wide.prefix, wide.family);
  return list.check(narrow.address, narrow.family);
}

/** One line per overlap of `sensor`'s networks with another address-only sensor's, saying who takes what. */
export function overlapWarnings(sensor: Sensor, all: readonly Sensor[]): string[] {
  if (!byAddress(sensor)) return [];
  const lines: string[] = [];
  for (const other of all) {
    if (other.name === sensor.name || !byAddress(other)) continue;
    for (const mine of sensor.syslog?.from ?? []) {
      for (const theirs of other.syslog?.from ?? []) {
        if (!overlap(mine, theirs)) continue;
        const a = parseCidr(mine)?.prefix ?? 0;
        const b = parseCidr(theirs)?.prefix ?? 0;
        const who =
          a === b
            ? 'the same network: which of the two a connection from it belongs to is not defined'
            : `a connection from an address in both belongs to "${a > b ? sensor.name : other.name}", whose network is narrower`;
        lines.push(
          `threatcol: warning: --from ${mine} of "${sensor.name}" overlaps --from ${theirs} of "${other.name}"; ${who}`,
        );
      }
    }
  }
  return lines;
}
