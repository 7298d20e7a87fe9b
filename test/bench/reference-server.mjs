// The benchmark's ceiling: a bare node:https server with threatcol's TLS policy, timeouts and certificate that
// reads the body and answers 200. Started by the benchmark as `node reference-server.mjs CERT KEY`; prints
// {"port"} once listening.
import { answerOk, serveBench } from './bench-server.mjs';

serveBench((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    Buffer.concat(chunks);
    answerOk(res);
  });
});
