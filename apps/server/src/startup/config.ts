import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acpHarnesses, machineSizes, parseAddressRanges } from '@paddock/protocol';
import { defaultDockerHost, defaultSandboxImage, parseDockerHost } from '@paddock/sandbox';
import { z } from 'zod';

const positiveMs = z.coerce.number().int().positive();

/** `{"<org_id>": <credits>}`: a credit budget per organization; one not named is unlimited. */
const creditBudgets = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
      return z.NEVER;
    }
  })
  .pipe(
    z.record(z.uuid('keys must be organization ids'), z.number().int('credits must be whole numbers').min(0)),
  )
  .transform((budgets) => new Map(Object.entries(budgets)));

/** Comma-separated IP addresses and CIDR ranges (`10.0.0.0/8,::1`). */
const addressRanges = z.string().transform((text, ctx) => {
  try {
    return parseAddressRanges(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

const sizeUnits: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** A size in bytes, or with a binary unit (`64M`, `5G`, `5GiB`); `0` turns the quota of that size off. */
const byteSize = z
  .string()
  .regex(/^\d+\s*([KMGT](i?B)?)?$/i, 'must be bytes or a size such as 512M or 5G')
  .transform((text) => {
    const [, digits, unit] = /^(\d+)\s*([KMGT]?)/i.exec(text)!;
    return Number(digits) * sizeUnits[unit!.toUpperCase()]!;
  });

/** Every setting, parsed once at start-up from the environment (D1, D10). */
const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  PADDOCK_DATA_DIR: z.string().min(1).default('./.paddock'),
  /** The runner's cache of ACP programs (D9); default `<data dir>/harnesses`. */
  PADDOCK_HARNESS_CACHE: z.string().min(1).optional(),
  /** The built web app served at `/` (D17); default this checkout's `apps/web/dist`. */
  PADDOCK_WEB_DIR: z.string().min(1).optional(),
  DATABASE_URL: z
    .string()
    .regex(/^(postgres(ql)?:\/\/|sqlite:)/, 'must be a postgres:// URL (or sqlite:)')
    .optional(),
  PADDOCK_BOOTSTRAP_TOKEN: z.string().startsWith('pdk_pat_', 'must start with pdk_pat_').min(24).optional(),
  PADDOCK_ADMIN_PASSWORD: z.string().min(8).optional(),
  PADDOCK_SECRET_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, 'must be 32 bytes as 64 hex characters or base64')
    .optional(),
  PADDOCK_LEASE_TTL_MS: positiveMs.default(30_000),
  PADDOCK_ADOPTION_WINDOW_MS: positiveMs.default(180_000),
  /** How often the turn worker sweeps: turns other nodes queued, expired leases, inputs left without a turn. */
  PADDOCK_SWEEP_MS: positiveMs.default(1_000),
  /** How often each node looks for due schedules (issue 16 §3). */
  PADDOCK_SCHEDULE_POLL_MS: positiveMs.default(5_000),
  /** sandbox_c: frozen after this long without a turn. */
  PADDOCK_SANDBOX_IDLE_MS: positiveMs.default(5 * 60_000),
  /** Every sandbox the deployment hosts: stopped (workspace kept) after this long without a turn or code run. */
  PADDOCK_SANDBOX_IDLE_STOP_MS: positiveMs.default(15 * 60_000),
  /** sandbox_d: a sandbox lives this long from its first boot, then the task does not resume. */
  PADDOCK_SANDBOX_MAX_LIFETIME_MS: positiveMs.default(24 * 60 * 60_000),
  /** `embedded`: sandboxes run in the server process; `detached`: `paddock runner` processes host them. */
  PADDOCK_RUNNER: z.enum(['embedded', 'detached']).default('embedded'),
  PADDOCK_RUNNER_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  /** sandbox_e: how long a boot waits for the agent's self-hosted runner to connect before the turn fails. */
  PADDOCK_SELF_HOSTED_WAIT_MS: positiveMs.default(30_000),
  /** For `paddock runner`: the server it connects to. */
  PADDOCK_SERVER_URL: z.url().default('http://127.0.0.1:8787'),
  PADDOCK_SSE_KEEPALIVE_MS: positiveMs.default(15_000),
  /**
   * Many nodes on PostgreSQL: this node's own address, where the others forward the requests of the
   * threads whose workspace it holds (by default `http://HOST:PORT`).
   */
  PADDOCK_NODE_URL: z.url().optional(),
  /** Logs where each follow-up's time goes, input to first streamed chunk (docs/performance.md). */
  PADDOCK_TRACE_TURNS: z.stringbool().default(false),
  /** How often a node says it lives and which machines it reaches; three missed and they are gone. */
  PADDOCK_PRESENCE_MS: positiveMs.default(2_000),
  /**
   * How often an open event stream re-checks its credential, to end once it is revoked on another
   * node (a revocation on the stream's own node ends it at once).
   */
  PADDOCK_CREDENTIAL_RECHECK_MS: positiveMs.default(2_000),
  /** How long a login session (a JWT of the built-in identity provider) holds. */
  PADDOCK_SESSION_TTL_MS: positiveMs.default(60 * 60_000),
  /** An external OpenID Connect issuer whose access tokens are login sessions too (with its audience). */
  PADDOCK_OIDC_ISSUER: z.url().optional(),
  PADDOCK_OIDC_AUDIENCE: z.string().min(1).optional(),
  /** The issuer's client id for the web app's sign-in (a public client: code flow with PKCE). */
  PADDOCK_OIDC_CLIENT_ID: z.string().min(1).optional(),
  /** The scopes the web app asks the issuer for (its access token must carry the audience). */
  PADDOCK_OIDC_SCOPE: z.string().min(1).default('openid profile email'),
  /**
   * Enforce `publish` on the guarded writes outside the control plane (on by default: PATCH agent
   * sets the entrypoint, which runs code); off, a would-be denial is only logged.
   */
  PADDOCK_ENFORCE_WRITE_SCOPES: z.stringbool().default(true),
  /**
   * Non-public addresses (loopback, private, link-local …) that requests the server makes on a
   * user's behalf (the MCP probe) may reach; none by default, so a user cannot probe the server's network.
   */
  PADDOCK_OUTBOUND_ALLOW: addressRanges.default([]),
  /**
   * The reverse proxies in front of the server: their `X-Forwarded-For` names the client (whose
   * address the login lockout is keyed on). Unset: the socket's address is the client's.
   */
  PADDOCK_TRUST_PROXY: addressRanges.optional(),
  /** D10: how long the bytes of a cancelled (or lapsed) upload are kept before the purge drops them. */
  PADDOCK_UPLOAD_RETENTION_MS: positiveMs.default(24 * 60 * 60 * 1000),
  /** How long a signed upload URL works; `…/authorize` issues a fresh one. */
  PADDOCK_UPLOAD_URL_TTL_MS: positiveMs.default(60 * 60 * 1000),
  PADDOCK_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(5 * 1024 ** 3),
  /** `file`: `<data dir>/uploads`; `s3`: the bucket below (required then). */
  PADDOCK_UPLOAD_STORE: z.enum(['file', 's3']).default('file'),
  PADDOCK_UPLOAD_S3_BUCKET: z.string().min(1).optional(),
  PADDOCK_UPLOAD_S3_REGION: z.string().min(1).default('us-east-1'),
  /** An S3-compatible service (MinIO, R2 …); absent means AWS. */
  PADDOCK_UPLOAD_S3_ENDPOINT: z.url().optional(),
  PADDOCK_UPLOAD_S3_FORCE_PATH_STYLE: z.stringbool().default(false),
  PADDOCK_UPLOAD_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  PADDOCK_UPLOAD_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  PADDOCK_MAX_CONCURRENT_TURNS: z.coerce.number().int().positive().default(16),
  PADDOCK_SANDBOX: z.enum(['auto', 'bwrap', 'process']).default('auto'),
  /** How many sandboxes a runner keeps booted for the next threads to take over; 0: none. */
  PADDOCK_STANDBY_SANDBOXES: z.coerce.number().int().min(0).default(1),
  /** Their size: only a thread of that size takes one over. */
  PADDOCK_STANDBY_SIZE: z.enum(machineSizes).default('S'),
  /**
   * ACP harness values whose programs each standby sandbox starts ahead of its thread, their
   * sessions open (comma-separated; none by default): a new thread of one skips its program's start.
   */
  PADDOCK_STANDBY_HARNESSES: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((value) => value.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(acpHarnesses))),
  /** D4: the deployment config file (provider switches and rollouts), YAML or JSON. */
  PADDOCK_CONFIG: z.string().min(1).optional(),
  /** sandbox_b: the Docker engine, on this host (workspaces are bind-mounted), and its base image. */
  DOCKER_HOST: z
    .string()
    .default(defaultDockerHost)
    .refine((value) => {
      try {
        parseDockerHost(value);
        return true;
      } catch {
        return false;
      }
    }, 'must be unix:///path/to/docker.sock or tcp://host:port'),
  PADDOCK_DOCKER_IMAGE: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._/:-]*$/, 'must be a Docker image name (repo:tag)')
    .default(defaultSandboxImage),
  /**
   * As root, each thread's sandbox runs as a uid of its own, taken from this range when its workspace
   * is made (and kept: the workspace's owner). The range must hold no host user.
   */
  PADDOCK_SANDBOX_UID_BASE: z.coerce.number().int().min(1000).max(4_000_000_000).default(200_000),
  PADDOCK_SANDBOX_UID_COUNT: z.coerce.number().int().min(1).default(65_536),
  /** A workspace's disk quota by sandbox size (as root; a volume of its own). */
  PADDOCK_WORKSPACE_QUOTA_S: byteSize.default(5 * 1024 ** 3),
  PADDOCK_WORKSPACE_QUOTA_M: byteSize.default(10 * 1024 ** 3),
  PADDOCK_WORKSPACE_QUOTA_L: byteSize.default(20 * 1024 ** 3),
  /**
   * sandbox_f: how QEMU runs the micro-VMs' CPUs. `kvm` (hardware virtualization) is the only one for
   * real use; `tcg` (software emulation) is for tests on hosts whose KVM cannot run guests.
   */
  PADDOCK_MICROVM_ACCEL: z.enum(['kvm', 'tcg']).default('kvm'),
  PADDOCK_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PADDOCK_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
  /** Credit budgets per organization (model tokens; see docs/decisions.md); unlimited by default. */
  PADDOCK_CREDIT_BUDGETS: creditBudgets.default(new Map()),
  /** How long an organization's credit use is cached between sums. */
  PADDOCK_CREDIT_CACHE_MS: positiveMs.default(5_000),
  PADDOCK_DEFAULT_MODEL: z.string().min(1).optional(),
  /** The model that judges eval runs that name none; the gateway's default model when unset. */
  PADDOCK_EVAL_JUDGE_MODEL: z.string().min(1).optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url().optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
});

export type Config = z.infer<typeof configSchema> & {
  dataDir: string;
  harnessCacheDir: string;
  webDir: string;
};

/** Where `npm run build -w @paddock/web` writes the web app. */
const builtWebApp = fileURLToPath(new URL('../../../web/dist', import.meta.url));

/** Parses the environment; a bad value throws one line naming the variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  // An empty variable means unset, as in most shells' `VAR= command`.
  const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = configSchema.safeParse(set);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(`invalid ${String(issue.path[0])}: ${issue.message}`);
  }
  if (result.data.PADDOCK_UPLOAD_STORE === 's3' && !result.data.PADDOCK_UPLOAD_S3_BUCKET) {
    throw new ConfigError('invalid PADDOCK_UPLOAD_S3_BUCKET: required when PADDOCK_UPLOAD_STORE=s3');
  }
  if (!result.data.PADDOCK_OIDC_ISSUER !== !result.data.PADDOCK_OIDC_AUDIENCE) {
    throw new ConfigError(
      'invalid PADDOCK_OIDC_AUDIENCE: PADDOCK_OIDC_ISSUER and PADDOCK_OIDC_AUDIENCE go together',
    );
  }
  if (result.data.PADDOCK_OIDC_CLIENT_ID && !result.data.PADDOCK_OIDC_ISSUER) {
    throw new ConfigError('invalid PADDOCK_OIDC_CLIENT_ID: it needs PADDOCK_OIDC_ISSUER');
  }
  const dataDir = resolve(result.data.PADDOCK_DATA_DIR);
  const harnessCacheDir = resolve(result.data.PADDOCK_HARNESS_CACHE ?? join(dataDir, 'harnesses'));
  const webDir = resolve(result.data.PADDOCK_WEB_DIR ?? builtWebApp);
  return { ...result.data, dataDir, harnessCacheDir, webDir };
}

/**
 * A start-up failure the user can fix (a busy port, a data dir that cannot be written, a database
 * that cannot be reached): `main.ts` prints its message as one line, without a stack, and exits 1.
 * Anything else that fails at start-up is a bug and keeps its stack.
 */
export class StartupError extends Error {}

/** A bad setting: one line naming the variable, exit 2. */
export class ConfigError extends StartupError {}
