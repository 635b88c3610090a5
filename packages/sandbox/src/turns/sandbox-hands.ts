import type { SandboxHands } from '@paddock/harness';
import type { SupervisorClient } from '../supervisor-link/supervisor-client.ts';

/**
 * A sandbox's supervisor as a harness's hands, with where the sandbox's Node is. Every operation
 * waits for `ready` first (the sandbox's shared folder being shown), and fails with it.
 */
export function sandboxHands(client: SupervisorClient, nodeDir: string, ready?: Promise<void>): SandboxHands {
  const after = <T>(act: () => Promise<T>): Promise<T> => (ready ? ready.then(act) : act());
  return {
    nodeDir,
    spawn: (options) => after(() => client.spawn(options)),
    readFile: (within, path, maxBytes) => after(() => client.readFile(within, path, maxBytes)),
    writeFile: (within, path, data, mode) => after(() => client.writeFile(within, path, data, mode)),
    list: (within, path) => after(() => client.list(within, path)),
    stat: (within, path) => after(() => client.stat(within, path)),
    remove: (within, path) => after(() => client.remove(within, path)),
    symlink: (within, path, target) => after(() => client.symlink(within, path, target)),
    openDoor: () => after(() => client.openDoor()),
    aimDoor: (port, target) => after(() => client.aimDoor(port, target)),
    closeDoor: (port) => after(() => client.closeDoor(port)),
  };
}
