// Realistic random records for `threatcol send --sample`: documentation-range and private addresses, common
// ports, PAN-OS style threat names `Name(12345)`, firewall time in `YYYY/MM/DD HH:MM:SS` and a severity.
import { SEVERITY_LABELS, type SeverityLabel } from '../records/criticality.js';

export type Endpoint = 'firewall' | 'generic';

const THREATS = [
  ['EICAR Test File Detection', 86708, 'virus', 'medium'],
  ['SSH2 Login Attempt', 31914, 'brute-force', 'informational'],
  ['HTTP Directory Traversal Vulnerability', 30844, 'code-execution', 'high'],
  ['Microsoft Windows SMB Remote Code Execution Vulnerability', 33338, 'code-execution', 'critical'],
  ['Apache Log4j Remote Code Execution Vulnerability', 91991, 'code-execution', 'critical'],
  ['SIPVicious Scanner Detection', 40015, 'info-leak', 'low'],
  ['HTTP SQL Injection Attempt', 38195, 'sql-injection', 'high'],
  ['Suspicious DNS Query (generic:malware-c2.example)', 109001014, 'spyware', 'medium'],
  ['TCP Port Scan', 8001, 'scan', 'informational'],
  ['Cobalt Strike Beacon Command and Control Traffic Detection', 86446, 'spyware', 'critical'],
  ['RDP Brute Force Attempt', 40021, 'brute-force', 'high'],
  ['PHP Remote File Inclusion Vulnerability', 35167, 'code-execution', 'medium'],
] as const;

const APPS = [
  ['web-browsing', 'internet-utility', 'tcp', 80],
  ['ssl', 'encrypted-tunnel', 'tcp', 443],
  ['ssh', 'remote-access', 'tcp', 22],
  ['ms-rdp', 'remote-access', 'tcp', 3389],
  ['ms-ds-smb', 'storage-backup', 'tcp', 445],
  ['dns', 'infrastructure', 'udp', 53],
  ['smtp', 'email', 'tcp', 25],
  ['mysql', 'database', 'tcp', 3306],
  ['sip', 'voip-video', 'udp', 5060],
  ['web-browsing', 'internet-utility', 'tcp', 8080],
] as const;

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
const int = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

/** An outside address: from the documentation ranges (RFC 5737, RFC 3849), never a real host. */
function outsideAddress(): string {
  if (Math.random() < 0.15) return `2001:db8:${int(0, 0xffff).toString(16)}::${int(1, 0xffff).toString(16)}`;
  return `${pick(['192.0.2', '198.51.100', '203.0.113'])}.${int(1, 254)}`;
}

/** An inside address: private ranges (RFC 1918), as a firewall would see its own hosts. */
function insideAddress(): string {
  const net = pick(['10.0', '10.20', '172.16', '192.168.1']);
  return net.split('.').length === 3 ? `${net}.${int(2, 254)}` : `${net}.${int(0, 255)}.${int(2, 254)}`;
}

/** `YYYY/MM/DD HH:MM:SS` in UTC, the PAN-OS `$time_received` shape. */
export function firewallTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

export function sampleFirewallRecord(now: number = Date.now()): Record<string, unknown> {
  const [name, id, category, severity] = pick(THREATS);
  const [app, subcategory, proto, dport] = pick(APPS);
  const inbound = Math.random() < 0.6;
  const threat = `${name}(${id})`;
  return {
    threat_name: threat,
    threatid: threat,
    src: inbound ? outsideAddress() : insideAddress(),
    dst: inbound ? insideAddress() : outsideAddress(),
    proto,
    subcategory_of_app: subcategory,
    thr_category: category,
    app,
    time_received: firewallTime(now - int(0, 5000)),
    sport: int(1024, 65535),
    dport,
    severity,
  };
}

export function sampleGenericRecord(): Record<string, unknown> {
  const [name, , , severity] = pick(THREATS);
  const [, , proto, port] = pick(APPS);
  return {
    source_ip: outsideAddress(),
    destination_ip: insideAddress(),
    destination_port: port,
    protocol: proto.toUpperCase(),
    threat: name,
    criticality: SEVERITY_LABELS.indexOf(severity as SeverityLabel),
  };
}

export function sampleRecord(endpoint: Endpoint): Record<string, unknown> {
  return endpoint === 'firewall' ? sampleFirewallRecord() : sampleGenericRecord();
}

/** A request body: one sample record, or a JSON array of `batch` of them. */
export function sampleBody(endpoint: Endpoint, batch: number | undefined): string {
  if (batch === undefined) return JSON.stringify(sampleRecord(endpoint));
  return JSON.stringify(Array.from({ length: batch }, () => sampleRecord(endpoint)));
}
