import { createServer } from 'node:http';

// The baseline: a bare node:http server answering a thread-shaped JSON body, no auth, no store.
const body = process.argv[2] ?? '{}';
const server = createServer((_req, res) => {
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
