// The command-line options the A B tools (build-ab.ts, nats-ab.ts) share.

/** The value after `--name` on the command line, or undefined. */
export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

/**
 * Every `--base [LABEL=]BIN`: another checkout's bin/threatcol to run beside this build. Without a label it is
 * "before" ("before 1", "before 2", … when there are several).
 */
export function baseBuilds(): { label: string; bin: string }[] {
  const bases = process.argv.flatMap((a, i) => (a === '--base' ? [process.argv[i + 1] as string] : []));
  return bases.map((b, i) => {
    const eq = b.indexOf('=');
    const label = eq === -1 ? (bases.length === 1 ? 'before' : `before ${i + 1}`) : b.slice(0, eq);
    return { label, bin: b.slice(eq + 1) };
  });
}
