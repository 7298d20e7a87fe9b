// An OutputCursors whose backend module is imported on first use: a CLI command that opens the store to read
// sensors or records does not load the output feeds' modules.
import type { OutputCursors } from './store.js';

export function lazyOutputCursors(load: () => Promise<OutputCursors>): OutputCursors {
  let loaded: Promise<OutputCursors> | null = null;
  const cursors = () => {
    loaded ??= load();
    return loaded;
  };
  return {
    openFeed: async (options) => (await cursors()).openFeed(options),
    list: async () => (await cursors()).list(),
    replay: async (name, since) => (await cursors()).replay(name, since),
    forget: async (name) => (await cursors()).forget(name),
  };
}
