import type { GatewayDoor } from './gateway-door.ts';

/** The gateway doors open in this sandbox, by port; node:http is loaded with the first. */
const doors = new Map<number, GatewayDoor>();

export async function openDoor(): Promise<number> {
  const { openGatewayDoor } = await import('./gateway-door.ts');
  const door = await openGatewayDoor();
  const port = Number(new URL(door.url).port);
  doors.set(port, door);
  return port;
}

export function aimDoor(port: number, apiUrl: string, token: string): void {
  const door = doors.get(port);
  if (!door) throw Object.assign(new Error(`no gateway door on port ${port}`), { code: 'ENOENT' });
  door.open({ apiUrl, token });
}

export function closeDoor(port: number): void {
  doors.get(port)?.close();
  doors.delete(port);
}
