// Picks the receiver of an output's type. Each receiver is its own module; a type whose receiver is not built
// in this version is refused by name, never silently accepted.
import type { OutputConfig, OutputType } from '../../config/outputs-schema.js';
import { ThreatcolError } from '../../errors.js';
import type { Receiver } from './receiver.js';
import { createWebhookReceiver } from './webhook.js';

type ReceiverFactory = (output: OutputConfig, env: Record<string, string | undefined>) => Receiver;

const FACTORIES: Partial<Record<OutputType, ReceiverFactory>> = {
  webhook: createWebhookReceiver,
  // syslog, splunk_hec, elasticsearch, email: their modules register here.
};

export function createReceiver(
  name: string,
  output: OutputConfig,
  env: Record<string, string | undefined>,
): Receiver {
  const factory = FACTORIES[output.type];
  if (!factory) {
    throw new ThreatcolError(
      'OUTPUT_UNSUPPORTED',
      `output "${name}": the ${output.type} receiver is not part of this version`,
    );
  }
  return factory(output, env);
}
