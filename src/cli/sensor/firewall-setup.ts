// The text a firewall admin pastes into PAN-OS: URI, headers and the payload template for the threat log.

/** The 11 variables of spec 2.1 plus severity, each inside double quotes (templates paste values raw). */
export const FIREWALL_FIELDS = [
  'threat_name',
  'threatid',
  'src',
  'dst',
  'proto',
  'subcategory_of_app',
  'thr_category',
  'app',
  'time_received',
  'sport',
  'dport',
  'severity',
] as const;

export function firewallPayloadTemplate(): string {
  return `{${FIREWALL_FIELDS.map((f) => `"${f}":"$${f}"`).join(',')}}`;
}

/**
 * The port a firewall sends to: the collector's `server.port`. 0 means a free port picked at each start, which no
 * firewall can be told in advance: the text says where to read it instead.
 */
function portText(port: number): string {
  return port === 0 ? '<the port in the "threatcol is listening" log line>' : String(port);
}

export function firewallSetupText(name: string, key: string | null, port: number): string {
  const keyLine = key ?? '<the key printed by "threatcol sensor add" or "threatcol sensor rotate">';
  return [
    `PAN-OS HTTP server profile: protocol HTTPS, port ${portText(port)}, TLS version 1.2, no certificate profile,`,
    'HTTP method POST, any dummy username and password (they are ignored).',
    '',
    'Payload format, log type "threat":',
    '  URI:     /firewall',
    '  Headers:',
    '    content-type: application/json',
    `    X-AUTH_KEY: ${keyLine}`,
    `    X-SENSOR_NAME: ${name}`,
    '  Payload:',
    `    ${firewallPayloadTemplate()}`,
  ].join('\n');
}

/** The setup of `firewallSetupText` as data, for `sensor show --firewall --json`. */
export function firewallSetupJson(name: string, port: number): Record<string, unknown> {
  return {
    name,
    server_profile: {
      protocol: 'HTTPS',
      port: port === 0 ? null : port,
      tls_version: '1.2',
      certificate_profile: null,
      method: 'POST',
    },
    log_type: 'threat',
    uri: '/firewall',
    headers: {
      'content-type': 'application/json',
      'X-AUTH_KEY': null,
      'X-SENSOR_NAME': name,
    },
    payload: firewallPayloadTemplate(),
    note: 'X-AUTH_KEY is the key printed once by "threatcol sensor add" or "threatcol sensor rotate"',
  };
}

/** What `sensor add` and `sensor rotate` print after their first line: the key once, the headers, the template. */
export function newKeyText(name: string, key: string, port: number, note?: string): string {
  return [
    '',
    `  Key: ${key}`,
    '',
    ...(note === undefined ? [] : [note]),
    'The key is shown only now; threatcol keeps only its hash. Send it with every request:',
    `  X-AUTH_KEY: ${key}`,
    `  X-SENSOR_NAME: ${name}`,
    '',
    firewallSetupText(name, key, port),
  ].join('\n');
}
