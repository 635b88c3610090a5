import type { Socket } from 'node:net';

/** Joins two half-open-capable sockets both ways (the API proxy, the egress proxy). */
export function pipeSockets(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const closeBoth = (): void => {
    a.destroy();
    b.destroy();
  };
  a.on('error', closeBoth);
  b.on('error', closeBoth);
  a.on('close', closeBoth);
  b.on('close', closeBoth);
}
