import { chmod, mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type AddressRange, egressPort } from '@paddock/protocol';
import { type EgressProxy, type EgressRecord, startEgressProxy } from './egress-proxy.ts';
import {
  type EgressDecision,
  type EgressPolicy,
  egressPolicy,
  type NetworkPolicy,
} from './network-policy.ts';

/** What every sandbox's egress proxy on a runner decides by, besides its thread's policy. */
export interface EgressSettings {
  /**
   * The hosts of the package registries this runner's tools use (`readRegistries`): asked for when
   * a `registries` sandbox first connects, so a runner whose sandboxes never do never reads them.
   */
  registries: () => Promise<readonly string[]>;
  /** Deployment-wide domain patterns, allowed under every policy but `none`. */
  domains: readonly string[];
  /** Non-public address ranges the proxies may connect to all the same (a private mirror). */
  allowAddresses: readonly AddressRange[];
}

/**
 * The environment that points the usual tools (curl, git, npm, pip, Node's fetch) at the egress
 * proxy, and keeps the sandbox's own loopback (the Paddock API, a dev server) off it. `caBundle`:
 * the host's certificate bundle as the sandbox sees it (its /etc/ssl is the host's), which Node
 * and Python's tools, whose own CA lists ignore it, are told to trust too (a deployment behind an
 * intercepting proxy, or with a private registry, has its authority there).
 */
export function egressProxyEnv(caBundle?: string): Record<string, string> {
  const proxy = `http://127.0.0.1:${egressPort}`;
  const direct = '127.0.0.1,localhost,::1';
  const trust: Record<string, string> = caBundle
    ? { NODE_EXTRA_CA_CERTS: caBundle, PIP_CERT: caBundle, REQUESTS_CA_BUNDLE: caBundle }
    : {};
  return {
    ...trust,
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: direct,
    no_proxy: direct,
    NODE_USE_ENV_PROXY: '1',
  };
}

const standby: EgressDecision = { allowed: false, reason: 'the sandbox serves no thread yet' };

/**
 * One sandbox's egress proxy, on a unix socket the provider shows inside it. It refuses everything
 * until `serve` gives it its thread's policy and where to report connections: a standby sandbox is
 * booted before anyone knows whose it will be.
 */
export class SandboxEgress {
  readonly socketPath: string;
  readonly #settings: EgressSettings;
  #proxy: EgressProxy | undefined;
  #policy: EgressPolicy = () => standby;
  #report: (record: EgressRecord) => void = () => {};

  private constructor(socketPath: string, settings: EgressSettings) {
    this.socketPath = socketPath;
    this.#settings = settings;
  }

  static async start(socketPath: string, settings: EgressSettings): Promise<SandboxEgress> {
    await mkdir(dirname(socketPath), { recursive: true, mode: 0o755 });
    await rm(socketPath, { force: true });
    const egress = new SandboxEgress(socketPath, settings);
    egress.#proxy = await startEgressProxy({
      listen: { path: socketPath },
      policy: (host, port) => egress.#policy(host, port),
      allowAddresses: settings.allowAddresses,
      onConnection: (record) => egress.#report(record),
    });
    // The sandbox connects as its own unprivileged uid; it sees only this socket of the runner's.
    await chmod(socketPath, 0o666);
    return egress;
  }

  /** From now on the thread's policy decides, and its connections are reported to `report`. */
  serve(policy: NetworkPolicy, report: (record: EgressRecord) => void): void {
    const { domains } = this.#settings;
    this.#report = report;
    if (policy !== 'registries') {
      this.#policy = decideOrRefuse(() => egressPolicy(policy, { registries: [], extraDomains: domains }));
      return;
    }
    let built: Promise<EgressPolicy> | undefined;
    this.#policy = async (host, port) => {
      built ??= this.#settings
        .registries()
        .then((registries) =>
          decideOrRefuse(() => egressPolicy(policy, { registries, extraDomains: domains })),
        );
      return (await built)(host, port);
    };
  }

  async close(): Promise<void> {
    await this.#proxy?.close();
    await rm(this.socketPath, { force: true });
  }
}

/** The policy, or one that refuses everything saying why it could not be built (a bad pattern). */
function decideOrRefuse(build: () => EgressPolicy): EgressPolicy {
  try {
    return build();
  } catch (error) {
    const refused: EgressDecision = {
      allowed: false,
      reason: `network policy unusable: ${(error as Error).message}`,
    };
    return () => refused;
  }
}
