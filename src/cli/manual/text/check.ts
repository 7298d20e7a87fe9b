// Reference prose of `threatcol check`: the installation self-test and what makes each check fail.
import type { CommandManual } from '../command-manual.js';

export const checkManual: CommandManual = {
  description: `
Checks the installation and prints one line per check, \`OK\`, \`WARN\` or \`FAIL\`; it exits 0 when nothing
failed, else 78 with \`threatcol: CHECK_FAILED: …\` on stderr. Warnings (a certificate that expires within
14 days, a data directory owned by root or readable by the group) do not fail.

Run it as root on the service's host (the default data directory is then \`/var/lib/threatcol\`, the
service's own); before the first start, \`--no-daemon\` leaves out the daemon check. The \`config\` line names
the file and the \`THREATCOL_*\` variables it used. The \`tls\` line shows the certificate's SHA-256 fingerprint
(what \`send --fingerprint\` pins).
`,
  options: {
    '--json': `print \`{"ok": true|false, "checks": [{"name", "status", "message"}]}\``,
    '--test-outputs': `send one marked sample record through each enabled output's receiver (as \`outputs test\` does; an alert channel shows it) instead of asking the daemon for their state`,
  },
  sections: [
    {
      title: `The checks`,
      body: `
| check | FAIL when |
|---|---|
| \`config\` | the configuration (file, \`THREATCOL_*\`, flags) does not validate; the other checks need it and are skipped |
| \`tls\` | the certificate or key cannot be read, or the key does not belong to the certificate (OK when none is configured and the self-signed one is not generated yet) |
| \`certificate expiry\` | the certificate has expired (WARN within 14 days) |
| \`data directory\` | it is not a usable directory (WARN when it does not exist yet: \`serve\` and systemd's \`StateDirectory=\` create it) |
| \`owner\` | run as a user who does not own it, or (as root) files in it, \`tls/\` or \`threats/\` not owned by the directory's owner |
| \`modes\` | \`sensors.json\` or \`tls/key.pem\` is readable by group or others, or the directory is world-writable |
| \`free space\` | less than 256 MiB (or \`store.minFreeBytes\` when configured) is free on its file system |
| \`registry\` | the sensor registry cannot be read at all (\`REGISTRY_CORRUPT\`); WARN naming each entry that is not a valid sensor (no keys, a bad name, time zone or time, a malformed syslog identity): the daemon skips those, the other sensors keep working |
| \`port\` | this user may not bind the port (below 1024 without \`CAP_NET_BIND_SERVICE\`), or another program holds it (threatcol itself is recognised, with \`--no-daemon\` too, by the certificate it serves: a TLS handshake, no request) |
| \`daemon\` | no TLS handshake completes on the port (a handshake only: no request is sent, so \`check\` leaves nothing in the daemon's journal); WARN when the daemon serves another certificate than the file holds (reload it) |
| \`ready\` | the admin listener's \`GET /readyz\` does not answer 200: the message gives the daemon's reasons (store not writable, below \`store.minFreeBytes\`, stopping); WARN when \`admin.listen\` is \`""\` or has port 0 (pass \`--admin-listen\`) |
| \`output NAME\` | never FAIL: WARN when the daemon reports the output paused (a refused credential) or failing for over a minute, with its last error; with \`--test-outputs\`, WARN when its receiver did not take the sample record |
`,
    },
  ],
  exitStatus: `0 when no check failed (warnings included), 78 (\`CHECK_FAILED\`) when one did.`,
};
