import type { SandboxHands } from '@paddock/harness';
import type { SupervisorClient } from '../supervisor-link/supervisor-client.ts';

/** A sandbox's supervisor as a harness's hands, with where the sandbox's Node is. */
export function sandboxHands(client: SupervisorClient, nodeDir: string): SandboxHands {
  return {
    nodeDir,
    spawn: (options) => client.spawn(options),
    readFile: (within, path, maxBytes) => client.readFile(within, path, maxBytes),
    writeFile: (within, path, data, mode) => client.writeFile(within, path, data, mode),
    list: (within, path) => client.list(within, path),
    stat: (within, path) => client.stat(within, path),
    remove: (within, path) => client.remove(within, path),
    symlink: (within, path, target) => client.symlink(within, path, target),
    openDoor: () => client.openDoor(),
    aimDoor: (port, target) => client.aimDoor(port, target),
    closeDoor: (port) => client.closeDoor(port),
  };
}
