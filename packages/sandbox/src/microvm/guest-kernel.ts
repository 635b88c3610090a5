import { access, constants, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A Debian kernel on the host (package linux-image-amd64) the guests boot, with its modules. */
export interface GuestKernel {
  version: string;
  vmlinuz: string;
  /** Module files to load, in order (dependencies first), as absolute host paths. */
  modules: string[];
}

/**
 * What the guest's init loads: virtio over MMIO (the `microvm` machine has no PCI), the virtio
 * console for the supervisor's ports, and 9p for the shared directories. Debian builds them as
 * modules; its `cloud` kernel has no 9p at all.
 */
export const guestModules = ['virtio_mmio', 'virtio_console', '9pnet_virtio', '9p'];

/** The newest kernel under /boot whose modules include everything the guest needs; undefined if none. */
export async function findGuestKernel(
  bootDir = '/boot',
  modulesRoot = '/lib/modules',
): Promise<GuestKernel | undefined> {
  const names = await readdir(bootDir).catch(() => [] as string[]);
  const versions = names
    .filter((name) => name.startsWith('vmlinuz-'))
    .map((name) => name.slice('vmlinuz-'.length))
    .sort((a, b) => b.localeCompare(a, undefined, { numeric: true }));
  for (const version of versions) {
    const vmlinuz = join(bootDir, `vmlinuz-${version}`);
    const modulesDir = join(modulesRoot, version);
    const dep = await readFile(join(modulesDir, 'modules.dep'), 'utf8').catch(() => undefined);
    if (dep === undefined || !(await readable(vmlinuz))) continue;
    const order = moduleLoadOrder(dep, guestModules);
    if (order) return { version, vmlinuz, modules: order.map((path) => join(modulesDir, path)) };
  }
  return undefined;
}

/**
 * The files of `wanted` and everything they depend on, dependencies first (modules.dep lists each
 * module's full dependency set). Undefined when one is missing or built in is not told apart: a
 * built-in module is not in modules.dep, and then this kernel is passed over.
 */
export function moduleLoadOrder(modulesDep: string, wanted: string[]): string[] | undefined {
  const deps = new Map<string, string[]>();
  for (const line of modulesDep.split('\n')) {
    const [file, rest] = line.split(':');
    if (!file || rest === undefined) continue;
    deps.set(file, rest.trim().split(/\s+/).filter(Boolean));
  }
  const byName = new Map<string, string>();
  for (const file of deps.keys()) byName.set(moduleName(file), file);
  const order: string[] = [];
  const visit = (file: string): void => {
    if (order.includes(file)) return;
    for (const dependency of deps.get(file) ?? []) visit(dependency);
    order.push(file);
  };
  for (const name of wanted) {
    const file = byName.get(name);
    if (!file) return undefined;
    visit(file);
  }
  return order;
}

/** `kernel/fs/9p/9p.ko.xz` → `9p`; modules.dep spells names with `-` or `_` as the files do. */
function moduleName(file: string): string {
  const base = file.slice(file.lastIndexOf('/') + 1);
  return base.replace(/\.ko(\.\w+)?$/, '').replaceAll('-', '_');
}

async function readable(path: string): Promise<boolean> {
  return access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
}
