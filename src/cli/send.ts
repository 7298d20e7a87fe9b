// `threatcol send firewall|generic|syslog`: the command's definition (its arguments and options); what it does
// is in send-action.ts (send-syslog-action.ts for syslog), imported when the command runs.
import { Argument, type Command, Option } from 'commander';
import type { Endpoint } from '../client/sample-records.js';
import type { CliIo } from './io.js';
import type { SendOptions } from './send-action.js';
import type { SendSyslogOptions } from './send-syslog-action.js';

export function registerSend(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  program
    .command('send')
    .description('send records to a collector and print its answer; --count makes it a load generator')
    .addArgument(
      new Argument('<endpoint>', 'which endpoint to post to (syslog: octet-counted syslog messages)').choices(
        ['firewall', 'generic', 'syslog'],
      ),
    )
    .option('--data <json|@file|->', 'the body: inline JSON, @FILE to read a file, or - for standard input')
    .option('--sample', 'send a realistic random record of that kind instead of --data')
    .addOption(
      new Option('--format <format>', 'syslog: the message format').choices([
        'panos',
        'cef',
        'fortinet',
        'suricata',
      ]),
    )
    .option('--tcp', 'syslog: plain TCP instead of TLS')
    .option('--relp', 'syslog: RELP over TLS, each message answered once stored')
    .option(
      '--client-cert <file>',
      'syslog over TLS: present this PEM client certificate (the sensor pins it)',
    )
    .option('--client-key <file>', "syslog over TLS: the client certificate's PEM key")
    .option(
      '--source <address>',
      "syslog: send from this local address (one of this machine's), e.g. the firewall's address a sensor's --from names",
    )
    .option('--batch <n>', 'with --sample: send a JSON array of n records per request (1-1000)')
    .option(
      '--url <url>',
      'collector base URL (env THREATCOL_URL; default https://localhost:<server.port>); syslog: HOST:PORT (default localhost, syslog.listen, or syslog.tcpListen with --tcp, syslog.relpListen with --relp)',
    )
    .option(
      '--sensor <name>',
      "sensor name, sent as X-SENSOR_NAME (env THREATCOL_SENSOR); syslog: the sensor to test, from this collector's registry (its format; refused unless the connection is taken as its)",
    )
    .option('--key <key>', 'sensor key, sent as X-AUTH_KEY (env THREATCOL_KEY); visible to other users in ps')
    .option('--key-file <file>', 'read the sensor key from this file (first line)')
    .option('--ca <file>', 'trust this PEM CA certificate instead of the system CAs')
    .option('--fingerprint <sha256>', "pin the collector's certificate by its SHA-256 fingerprint")
    .option('--insecure', 'do not verify the certificate at all (prints a warning)')
    .option(
      '--count <n>',
      'load mode: send n requests, every --sample record a new one, and print what the collector stored',
    )
    .option(
      '--repeat',
      'load mode: send the same bodies again and again (up to 64 samples, or the --data body) to see ' +
        'retried deliveries answered as duplicates; /generic requests carry an Idempotency-Key per body',
    )
    .option('--concurrency <n>', 'load mode: keep-alive connections to use (default 1)')
    .option('--rate <r>', 'load mode: at most r requests per second in all')
    .option('--json', 'print the answer (or the load summary) as one JSON object')
    .option(
      '--config <file>',
      'configuration file, for the default port and data directory (default: /etc/threatcol/config.json)',
    )
    .option(
      '--data-dir <dir>',
      'data directory whose tls/cert.pem is trusted by default for a local URL (default: as for serve)',
    )
    .action((endpoint: Endpoint | 'syslog', options: SendOptions & SendSyslogOptions) =>
      run(async () =>
        endpoint === 'syslog'
          ? (await import('./send-syslog-action.js')).sendSyslogAction(options, io)
          : (await import('./send-action.js')).send(endpoint, options, io),
      ),
    );
}
