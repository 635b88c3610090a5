import { findBwrap, isExecutable, probeBwrap } from './bwrap/bwrap-probe.ts';
import { type BwrapProviderOptions, createBwrapProvider, defaultSandboxUid } from './bwrap/bwrap-provider.ts';
import { sandboxSeccompFilter } from './bwrap/seccomp-filter.ts';
import { createProcessProvider } from './process/process-provider.ts';
import type { SandboxProvider } from './provider.ts';

/** What `GET /v2/machines/capabilities` reports about sandboxes. */
export interface ProviderReport {
  kind: SandboxProvider['kind'];
  isolation: string;
  cgroups: boolean;
  /** Why bubblewrap is not used, when it is not. */
  reason?: string;
}

export interface DetectProviderOptions extends BwrapProviderOptions {
  /** Use the process provider even where bubblewrap works. */
  forceProcess?: boolean;
}

/** Bubblewrap when it is installed and a probe sandbox starts, else the plain process provider. */
export async function detectProvider(
  options: DetectProviderOptions,
): Promise<{ provider: SandboxProvider; report: ProviderReport }> {
  const fallback = (reason: string) => {
    const provider = createProcessProvider({
      nodePath: options.nodePath,
      bootTimeoutMs: options.bootTimeoutMs,
      harnessDir: options.harnessDir,
    });
    return {
      provider,
      report: { kind: provider.kind, isolation: provider.isolation, cgroups: false, reason },
    };
  };
  if (options.forceProcess) return fallback('process provider chosen by configuration');
  const bwrapPath = options.bwrapPath ?? (await findBwrap());
  if (!bwrapPath || !(await isExecutable(bwrapPath))) return fallback('bwrap is not installed');
  const setprivPath = options.setprivPath ?? '/usr/bin/setpriv';
  const asRoot = process.getuid?.() === 0;
  if (asRoot && !(await isExecutable(setprivPath))) return fallback('running as root but setpriv is missing');
  const uid = asRoot ? (options.sandboxUid ?? defaultSandboxUid) : undefined;
  const probe = await probeBwrap({
    bwrapPath,
    setprivPath,
    privileged: uid !== undefined,
    uid,
    seccomp: sandboxSeccompFilter(),
  });
  if (!probe.ok) return fallback(probe.reason);
  const provider = await createBwrapProvider({ ...options, bwrapPath, setprivPath });
  return {
    provider,
    report: { kind: provider.kind, isolation: provider.isolation, cgroups: provider.cgroups },
  };
}
