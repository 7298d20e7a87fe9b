// node:http for whoever needs it, taken through getBuiltinModule, not an import: an ES-module import of node:http
// reads every export, its lazy getters too, and so loads Node's bundled undici (fetch, WebSocket: about 70 ms of
// CPU) into a process that never uses it. test/cli/lazy-loading.test.ts fails when undici comes back into a start.

export const nodeHttp = process.getBuiltinModule('node:http');
