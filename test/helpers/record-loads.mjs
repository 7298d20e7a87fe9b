// Preload (node --import) that appends the URL of every module the process loads to the file named by
// LOADED_MODULES_FILE: ES modules as the loader loads them (record-loads-hooks.mjs), CommonJS ones (required
// from a CommonJS package or through createRequire) from the require cache at exit, and Node's own modules
// (`node:internal/deps/undici/undici`, ...) from process.moduleLoadList at exit. Which module graph a command
// pulls in, observed from outside the code under test.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.LOADED_MODULES_FILE;
if (file) {
  register('./record-loads-hooks.mjs', import.meta.url, { data: { file } });
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => {
    const urls = Object.keys(cache).map((path) => `${pathToFileURL(path).href}\n`);
    const builtins = process.moduleLoadList
      .filter((entry) => entry.startsWith('NativeModule '))
      .map((entry) => `node:${entry.slice('NativeModule '.length)}\n`);
    appendFileSync(file, [...urls, ...builtins].join(''));
  });
}
