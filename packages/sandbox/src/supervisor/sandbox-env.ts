/** Variables meant for the supervisor alone; the entrypoint and the harness's tools must not inherit them. */
const supervisorOnly = ['NODE_COMPILE_CACHE', 'PADDOCK_PROXY_SOCKET'];

/** The environment the provider gave the sandbox (secrets, PADDOCK_*, PATH, HOME), for child processes. */
export function sandboxEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !supervisorOnly.includes(name)) env[name] = value;
  }
  return env;
}
