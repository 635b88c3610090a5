/**
 * Where the program talks to and with which token (D15; the spec's Authentication rule 5 and
 * control-plane rule 10). Only `main.ts` reads `process.env`; these functions take it as an argument.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, exitCodes } from './output.ts';

export const defaultServiceUrl = 'http://127.0.0.1:8787';

/** The global flags that override the environment. */
export interface ConnectionFlags {
  url?: string;
  apiUrl?: string;
  controlPlaneUrl?: string;
  token?: string;
}

export type Env = Record<string, string | undefined>;

export interface Endpoints {
  /** The service, without `/v2`: the public thread and task routes. */
  baseUrl: string;
  /** The control plane, `/v2/cli` or the legacy `/api/cli` included. */
  controlPlaneUrl: string;
  /** True when `SERVICE_API_URL` selected the legacy control plane (`/api/cli`). */
  legacy: boolean;
}

/** An http(s) URL without trailing slashes (or without `suffix` when it already ends with it). */
function baseOf(value: string, source: string, suffix: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`${source} is not a URL: ${value}`, exitCodes.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`${source} must be an http:// or https:// URL: ${value}`, exitCodes.usage);
  let text = url.toString().replace(/\/+$/, '');
  if (text.endsWith(suffix)) text = text.slice(0, -suffix.length);
  return text;
}

/**
 * D15: the service is `--url` or `PADDOCK_URL` (default `http://127.0.0.1:8787`); without them, the
 * host `SERVICE_API_URL` names. The control plane is `{service}/v2/cli`; `SERVICE_CONTROL_PLANE_URL`
 * selects another host (`/v2/cli` appended); `SERVICE_API_URL` selects the legacy one, `/api/cli`.
 */
export function resolveEndpoints(flags: ConnectionFlags, env: Env): Endpoints {
  const pick = (flag: string | undefined, flagName: string, name: string) =>
    flag ? { value: flag, source: flagName } : env[name] ? { value: env[name]!, source: name } : undefined;
  const service = pick(flags.url, '--url', 'PADDOCK_URL');
  const legacyApi = pick(flags.apiUrl, '--api-url', 'SERVICE_API_URL');
  const controlPlane = pick(flags.controlPlaneUrl, '--control-plane-url', 'SERVICE_CONTROL_PLANE_URL');
  const base = service ?? legacyApi;
  const baseUrl = base ? baseOf(base.value, base.source, '/v2') : defaultServiceUrl;
  if (controlPlane)
    return {
      baseUrl,
      controlPlaneUrl: `${baseOf(controlPlane.value, controlPlane.source, '/v2/cli')}/v2/cli`,
      legacy: false,
    };
  if (legacyApi)
    return {
      baseUrl,
      controlPlaneUrl: `${baseOf(legacyApi.value, legacyApi.source, '/api/cli')}/api/cli`,
      legacy: true,
    };
  return { baseUrl, controlPlaneUrl: `${baseUrl}/v2/cli`, legacy: false };
}

/** The personal access token: `--token`, else `SERVICE_TOKEN` (never a token saved on disk, Auth 5). */
export function resolveToken(flags: ConnectionFlags, env: Env): string {
  const token = flags.token || env.SERVICE_TOKEN;
  if (!token) throw new CliError('no token: set SERVICE_TOKEN (or pass --token)', exitCodes.usage);
  return token;
}

/** The control-plane writes the legacy control plane does not take (spec, control plane rule 10). */
export const legacyRefusedWrites = {
  declarative_machine_kind: 'a declarative machine_kind write',
  declarative_default_model: 'a declarative default_model write',
  orchestration_create: 'creating an orchestration',
  schedule_trigger: 'a schedule-trigger write',
} as const;
export type LegacyRefusedWrite = keyof typeof legacyRefusedWrites;

/** Refuses, before anything is sent, a write the legacy control plane (`SERVICE_API_URL`) does not take. */
export function refuseOnLegacy(endpoints: Endpoints, write: LegacyRefusedWrite): void {
  if (!endpoints.legacy) return;
  throw new CliError(
    `refused before sending: ${legacyRefusedWrites[write]} is not supported on the legacy control plane ` +
      `(${endpoints.controlPlaneUrl}, selected by SERVICE_API_URL); set SERVICE_CONTROL_PLANE_URL or PADDOCK_URL instead`,
    exitCodes.failed,
  );
}

/** `$XDG_CONFIG_HOME/paddock`, else `~/.config/paddock`. */
export function configDir(env: Env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'paddock');
}
