// Why the listener could not be opened, as LISTEN_FAILED with the fix a sysadmin can apply (privileged
// port, port in use).
import { ThreatcolError } from '../errors.js';

export function listenError(error: NodeJS.ErrnoException, host: string, port: number): ThreatcolError {
  if (error.code === 'EACCES' && port < 1024) {
    return new ThreatcolError(
      'LISTEN_FAILED',
      `cannot listen on port ${port}: permission denied. Ports below 1024 need privilege: use --port 8443 ` +
        '(or another port above 1023), grant CAP_NET_BIND_SERVICE (setcap or the systemd unit shipped in systemd/), ' +
        'or run through systemd socket activation',
      { cause: error },
    );
  }
  if (error.code === 'EADDRINUSE') {
    return new ThreatcolError('LISTEN_FAILED', `cannot listen on ${host} port ${port}: already in use`, {
      cause: error,
    });
  }
  return new ThreatcolError('LISTEN_FAILED', `cannot listen on ${host} port ${port}: ${error.message}`, {
    cause: error,
  });
}
