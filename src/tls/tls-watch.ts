// Watches the certificate and key files (fs.watch on their directories, polling as the fallback) and calls back,
// debounced, when either changed: renewal tools write the two files one after the other, often by rename.
import { watchFiles } from '../watch-files.js';

export interface TlsWatchOptions {
  certPath: string;
  keyPath: string;
  /** Called once the files have been quiet for `debounceMs` after a change. */
  onChange: () => void;
  pollIntervalMs: number;
  debounceMs?: number;
  /** false: poll only, as where inotify is unavailable (tests use it to exercise the fallback). */
  useFsWatch?: boolean;
}

export interface TlsWatch {
  /** Takes the files as they are now as the loaded state (after a reload by other means, e.g. SIGHUP). */
  accept(): void;
  stop(): void;
}

export function watchTlsFiles(options: TlsWatchOptions): TlsWatch {
  const watch = watchFiles({
    paths: [options.certPath, options.keyPath],
    onChange: options.onChange,
    pollIntervalMs: options.pollIntervalMs,
    debounceMs: options.debounceMs ?? 500,
    ...(options.useFsWatch === undefined ? {} : { useFsWatch: options.useFsWatch }),
  });
  return { accept: () => watch.accept(), stop: () => watch.stop() };
}
