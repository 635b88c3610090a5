import type { SandboxSize } from './provider.ts';

export interface SandboxLimits {
  memoryBytes: number;
  cpus: number;
  pids: number;
}

const GiB = 1024 ** 3;

export const sandboxLimits: Record<SandboxSize, SandboxLimits> = {
  S: { memoryBytes: 1 * GiB, cpus: 1, pids: 256 },
  M: { memoryBytes: 2 * GiB, cpus: 2, pids: 512 },
  L: { memoryBytes: 4 * GiB, cpus: 4, pids: 1024 },
};
