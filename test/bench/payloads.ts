// Request bodies of the benchmark: a ~400-byte firewall record and an array of 100 generic records.

/** A PAN-OS-style threat log record as a firewall forwards it (about 400 bytes of JSON). */
export function firewallBody(): string {
  return JSON.stringify({
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
  });
}

/** `n` generic records in one JSON array. */
export function genericBatchBody(n: number): string {
  const records = Array.from({ length: n }, (_, i) => ({
    source_ip: `203.0.113.${i % 250}`,
    destination_ip: '2001:db8::1',
    destination_port: 22,
    protocol: 'TCP',
    threat: 'SSH brute force: repeated failed logins for root',
    criticality: i % 5,
  }));
  return JSON.stringify(records);
}
