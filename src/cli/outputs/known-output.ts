// The output an `outputs` command names: configured, or at least with a position left; OUTPUT_NOT_FOUND else.
import type { LoadedConfig } from '../../config/load-config.js';
import type { OutputConfig } from '../../config/outputs-schema.js';
import { ThreatcolError } from '../../errors.js';
import type { Store } from '../../store/store.js';

export async function knownOutput(loaded: LoadedConfig, store: Store, name: string): Promise<void> {
  if (Object.hasOwn(loaded.config.outputs, name)) return;
  const positions = await store.outputs.list();
  if (positions.some((p) => p.name === name)) return;
  throw notFound(loaded, name);
}

/** The configuration of an output the command must send through (test, dead-letter --retry). */
export function configuredOutput(loaded: LoadedConfig, name: string): OutputConfig {
  const output = Object.hasOwn(loaded.config.outputs, name) ? loaded.config.outputs[name] : undefined;
  if (!output) throw notFound(loaded, name);
  return output;
}

function notFound(loaded: LoadedConfig, name: string): ThreatcolError {
  const names = Object.keys(loaded.config.outputs);
  return new ThreatcolError(
    'OUTPUT_NOT_FOUND',
    `no output "${name}"${names.length > 0 ? ` (configured: ${names.join(', ')})` : ' (none configured)'}`,
  );
}
