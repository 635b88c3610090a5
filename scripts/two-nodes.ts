import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';

/**
 * `npm run two-nodes`: two Paddock server nodes on one PostgreSQL database (`DATABASE_URL`), each
 * with a data dir of its own under `PADDOCK_NODES_DIR` (`.paddock-nodes`) and the same secret key,
 * behind a round-robin proxy on `PORT` (8787); the nodes listen on the two ports after it. Every
 * request may land on either node, as behind any load balancer. Ctrl-C stops the three.
 */
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl?.startsWith('postgres')) {
  process.stderr.write('two-nodes: set DATABASE_URL to a PostgreSQL database both nodes share\n');
  process.exit(2);
}
const port = Number(process.env.PORT ?? 8787);
const dir = resolve(process.env.PADDOCK_NODES_DIR ?? '.paddock-nodes');
const main = resolve(import.meta.dirname, '../apps/server/src/main.ts');

// One secret key for both: each seals and opens what the other stored (signing keys, secrets).
mkdirSync(dir, { recursive: true, mode: 0o700 });
const keyFile = join(dir, 'secret.key');
if (!existsSync(keyFile)) writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
const secretKey = readFileSync(keyFile, 'utf8').trim();

const children: ChildProcess[] = [];
const stop = () => {
  for (const child of children) child.kill('SIGTERM');
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

function startNode(name: string, nodePort: number): ChildProcess {
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      PORT: String(nodePort),
      PADDOCK_DATA_DIR: join(dir, name),
      PADDOCK_SECRET_KEY: secretKey,
      // The proxy is the client's address's source: the login lockout keys on the client it names.
      PADDOCK_TRUST_PROXY: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout!, child.stderr!])
    stream.on('data', (data: Buffer) => process.stdout.write(String(data).replace(/^(?=.)/gm, `[${name}] `)));
  child.on('exit', (code, signal) => {
    process.stdout.write(`[${name}] exited (${signal ?? code})\n`);
    stop();
    if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) process.exit(code ?? 0);
  });
  children.push(child);
  return child;
}

async function healthy(nodePort: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`http://127.0.0.1:${nodePort}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the node on port ${nodePort} did not answer within two minutes`);
}

// One after the other: the first start migrates the database and creates the admin.
const ports = [port + 1, port + 2];
startNode('a', ports[0]!);
await healthy(ports[0]!);
startNode('b', ports[1]!);
await healthy(ports[1]!);

// Round robin, a request at a time; answers (event streams included) are piped as they come.
let next = 0;
const proxy = createServer((incoming, answer) => {
  const target = ports[next++ % ports.length]!;
  const forwarded = request(
    {
      host: '127.0.0.1',
      port: target,
      method: incoming.method,
      path: incoming.url,
      headers: { ...incoming.headers, 'x-forwarded-for': incoming.socket.remoteAddress ?? '' },
    },
    (upstream) => {
      answer.writeHead(upstream.statusCode ?? 502, upstream.headers);
      upstream.pipe(answer);
    },
  );
  forwarded.on('error', () => {
    if (!answer.headersSent) answer.writeHead(502, { 'content-type': 'application/json' });
    answer.end('{"detail":"the node did not answer"}');
  });
  answer.on('close', () => forwarded.destroy());
  incoming.pipe(forwarded);
});
// WebSocket upgrades (a detached runner's link) go to a node as they are, bytes both ways.
proxy.on('upgrade', (incoming, socket, head) => {
  const upstream = connect(ports[next++ % ports.length]!, '127.0.0.1', () => {
    const lines = [`${incoming.method} ${incoming.url} HTTP/1.1`];
    for (let i = 0; i < incoming.rawHeaders.length; i += 2)
      lines.push(`${incoming.rawHeaders[i]}: ${incoming.rawHeaders[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    upstream.write(head);
    socket.pipe(upstream).pipe(socket);
  });
  upstream.on('error', () => socket.destroy());
  socket.on('error', () => upstream.destroy());
});
proxy.listen(port, '127.0.0.1', () => {
  process.stdout.write(
    `two-nodes: http://127.0.0.1:${port} → nodes on ports ${ports.join(' and ')}; ` +
      `the admin's token is in ${join(dir, 'a', 'bootstrap-token')}\n`,
  );
});
process.on('SIGINT', () => proxy.close());
process.on('SIGTERM', () => proxy.close());
