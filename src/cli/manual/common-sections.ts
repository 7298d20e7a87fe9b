// What every command's page shares, derived from the code that decides it: exit statuses from the error
// catalogue, environment variables from the configuration schema, and the files threatcol reads and writes.
import { DEFAULT_CONFIG_PATH, envNameFor, listConfigKeys } from '../../config/config-keys.js';
import { REGISTRY_FILE, SILENCES_FILE, STATS_FILE, THREATS_DIR } from '../../data-dir/data-layout.js';
import { CATALOGUE, EXIT } from '../../errors.js';

/** A term and its explanation (inline Markdown): one `.TP` item of a page, one list item of docs/cli.md. */
export interface Entry {
  term: string;
  text: string;
}

type ExitStatus = (typeof EXIT)[keyof typeof EXIT];

/** sysexits(3)'s meaning of each status the CLI uses. */
const EXIT_MEANINGS: Record<ExitStatus, string> = {
  0: 'success',
  64: 'usage error (EX_USAGE): a mistake on the command line (for send: a path or method the collector does not serve)',
  65: 'data error (EX_DATAERR): the input or the registry is not as it must be',
  66: 'no input (EX_NOINPUT): the data directory does not exist',
  69: 'unavailable (EX_UNAVAILABLE): a service, port or collector cannot be used now; try again later',
  70: 'internal error (EX_SOFTWARE): a bug; the message carries the stack',
  74: 'input/output error (EX_IOERR): the disk failed',
  77: 'permission denied (EX_NOPERM): authentication refused, or files this user may not read',
  78: 'configuration error (EX_CONFIG): the configuration, TLS material or installation needs the admin',
};

/** One entry per exit status, naming the error codes that exit with it. */
export function exitStatusEntries(): Entry[] {
  const statuses = [...new Set(Object.values(EXIT))].sort((a, b) => a - b);
  return statuses.map((status) => {
    const codes = Object.entries(CATALOGUE)
      .filter(([, entry]) => entry.exit === status)
      .map(([code]) => `\`${code}\``);
    const text = EXIT_MEANINGS[status];
    return { term: String(status), text: codes.length === 0 ? `${text}.` : `${text}: ${codes.join(', ')}.` };
  });
}

/** The environment variables every command reads (besides the configuration's, listed apart). */
export function baseEnvironmentEntries(): Entry[] {
  return [
    {
      term: 'THREATCOL_CONFIG',
      text: `the configuration file when \`--config\` is not given (default: \`${DEFAULT_CONFIG_PATH}\` if it exists).`,
    },
    {
      term: 'STATE_DIRECTORY',
      text: "set by systemd (the unit's `StateDirectory=`): the default data directory.",
    },
    { term: 'HOME', text: 'the default data directory of an ordinary user is `~/.local/state/threatcol`.' },
  ];
}

/** `THREATCOL_<KEY>` for every configuration key: the key, its default and meaning. */
export function configEnvironmentEntries(): Entry[] {
  return listConfigKeys().map((leaf) => ({
    term: envNameFor(leaf.path),
    text: `\`${leaf.path.join('.')}\` (default \`${JSON.stringify(leaf.schema.default)}\`): ${leaf.schema.description ?? ''}`,
  }));
}

/** How the configuration's variables relate to the file and the flags. */
export const CONFIG_ENVIRONMENT_NOTE =
  'Every configuration key can be set by a `THREATCOL_*` variable named after it (`server.maxBodyBytes` is ' +
  '`THREATCOL_SERVER_MAX_BODY_BYTES`; a list is comma-separated, an object is JSON). Precedence: flags > ' +
  'environment > configuration file > defaults. An unknown `THREATCOL_*` variable is a configuration error (78).';

export function fileEntries(): Entry[] {
  return [
    {
      term: DEFAULT_CONFIG_PATH,
      text: 'the configuration file, read when it exists (or the one `--config` or `THREATCOL_CONFIG` names): JSON with comments; unknown keys are errors.',
    },
    {
      term: '/var/lib/threatcol',
      text: "the data directory of the service (systemd's `StateDirectory=`) and of root; an ordinary user's is `~/.local/state/threatcol`. `--data-dir`, `dataDir` in the configuration or `THREATCOL_DATA_DIR` choose another.",
    },
    {
      term: `<dataDir>/${REGISTRY_FILE}`,
      text: 'the sensor registry (names, key hashes, status; mode 0600): written only by the CLI, under a lock.',
    },
    {
      term: `<dataDir>/${STATS_FILE}`,
      text: 'last seen, last address and counts per sensor: written only by the daemon.',
    },
    {
      term: `<dataDir>/${SILENCES_FILE}`,
      text: 'the sensors reported silent and not yet back (sensor set --expect-every): written only by the daemon.',
    },
    {
      term: `<dataDir>/${THREATS_DIR}/`,
      text: 'the stored records, append-only NDJSON segments: written only by the daemon.',
    },
    {
      term: '<dataDir>/tls/cert.pem, <dataDir>/tls/key.pem',
      text: 'the self-signed certificate and key, generated at the first start when none is configured.',
    },
    {
      term: '/usr/lib/systemd/system/threatcol.service',
      text: 'the unit of the Debian package, enabled on install (`threatcol systemd-unit` writes one for other installations).',
    },
    {
      term: '/usr/lib/systemd/system/threatcol.socket, threatcol-socket.service',
      text: 'the socket-activated variant, shipped but not enabled; each variant conflicts with the other.',
    },
    {
      term: '/usr/share/bash-completion/completions/threatcol',
      text: "the bash completion (`threatcol completion bash` prints it); zsh's is `/usr/share/zsh/vendor-completions/_threatcol`, fish's `/usr/share/fish/vendor_completions.d/threatcol.fish`.",
    },
  ];
}
