// A loopback webhook that answers 200 to everything, for the output benchmarks (run in its own process); asked
// `posts` over IPC, it answers how many batches it took, so a figure can show its output really forwarded.
import { createServer } from 'node:http';

let posts = 0;
const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    posts++;
    res.writeHead(200);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.(server.address().port));
process.on('message', (m) => {
  if (m === 'posts') process.send?.({ posts });
});
