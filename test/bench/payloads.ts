// Request bodies of the benchmark, every record a distinct one: a ~400-byte firewall record and arrays of
// generic records. A repeated body would measure the collector's retry dedupe (it stores the first copy and
// answers the rest as duplicates) instead of storing. Each record takes a number from a per-process counter
// that starts at a random point, written into a body template built once, so the generator stays cheap.

/** What a load sends; the load worker turns it into bodies (functions cannot cross the process boundary). */
export type Payload = { kind: 'firewall' } | { kind: 'generic'; records: number };

/** Firewall source ports 1024-65535: record n is source address floor(n / PORTS), port 1024 + n % PORTS. */
const PORTS = 65_536 - 1024;
const MARK = '@@mark@@';
/** A generic record's destination: 32 bits of its number as fixed-width hex, written into the body. */
const DESTINATION = '2001:db8::0000:0000';
const HEX = Buffer.from('0123456789abcdef');

// A random start, so two generator processes against one collector do not send the same records (odds of
// overlap about 2^-11 when both send a million). Distinct for 2^32 generic and 10^12 firewall records.
let counter = Math.floor(Math.random() * 2 ** 32);

/** A PAN-OS-style threat log record as a firewall forwards it (about 400 bytes of JSON). */
export function firewallRecord(): Record<string, unknown> {
  return {
    threat_name: 'Microsoft Windows SMBv3 Remote Code Execution Vulnerability(91234)',
    threatid: 'Microsoft Windows SMBv3 Remote Code Execution Vulnerability(91234)',
    src: '192.0.2.10',
    dst: '198.51.100.20',
    proto: 'tcp',
    subcategory_of_app: 'file-sharing',
    thr_category: 'code-execution',
    app: 'ms-ds-smbv3',
    time_received: '2026/11/21 10:15:30',
    sport: 51234,
    dport: 445,
    severity: 'critical',
  };
}

/** Generic record `i` of an array, as before the records were distinct but for the destination's width. */
function genericRecord(i: number): Record<string, unknown> {
  return {
    source_ip: `203.0.113.${i % 250}`,
    destination_ip: DESTINATION,
    destination_port: 22,
    protocol: 'TCP',
    threat: 'SSH brute force: repeated failed logins for root',
    criticality: i % 5,
  };
}

/** The next body, different from every body this process made before. */
export function payloadBodies(payload: Payload): () => Buffer {
  if (payload.kind === 'firewall') {
    const [a, b, c] = cut(JSON.stringify({ ...firewallRecord(), src: MARK, sport: MARK }), [
      `"${MARK}"`,
      `"${MARK}"`,
    ]);
    return () => {
      const n = counter++;
      return Buffer.from(`${a}"${private10(Math.floor(n / PORTS))}"${b}${1024 + (n % PORTS)}${c}`);
    };
  }
  // Strings of 100 pieces cost 0.8 us a record to join and encode, which at the reference's ~10,000 arrays
  // a second would make the generator the limit: instead a copy of one buffer, 8 hex digits written per record.
  const template = Buffer.from(
    JSON.stringify(Array.from({ length: payload.records }, (_, i) => genericRecord(i))),
  );
  const slots: number[] = [];
  for (let at = template.indexOf(DESTINATION); at !== -1; at = template.indexOf(DESTINATION, at + 1)) {
    slots.push(at + DESTINATION.length - 9); // the first digit of XXXX:XXXX
  }
  return () => {
    const body = Buffer.allocUnsafe(template.length);
    template.copy(body);
    for (const at of slots) {
      const n = counter++ % 2 ** 32;
      for (let d = 0; d < 8; d++) {
        body[at + d + (d >= 4 ? 1 : 0)] = HEX[(n >>> ((7 - d) * 4)) & 15] as number;
      }
    }
    return body;
  };
}

/** An address in 10.0.0.0/8 (n modulo 2^24). */
function private10(n: number): string {
  return `10.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** Records per request. */
export function payloadRecords(payload: Payload): number {
  return payload.kind === 'firewall' ? 1 : payload.records;
}

/** The JSON cut at the marks, in order: the pieces between which the values go. */
function cut(json: string, marks: string[]): string[] {
  const parts: string[] = [];
  let rest = json;
  for (const mark of marks) {
    const at = rest.indexOf(mark);
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + mark.length);
  }
  parts.push(rest);
  return parts;
}
