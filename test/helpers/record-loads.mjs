// Preload (node --import) that appends the URL of every module the ES module loader loads to the file named by
// LOADED_MODULES_FILE: which module graph a command pulls in, observed from outside the code under test.
import { register } from 'node:module';

if (process.env.LOADED_MODULES_FILE)
  register('./record-loads-hooks.mjs', import.meta.url, { data: { file: process.env.LOADED_MODULES_FILE } });
