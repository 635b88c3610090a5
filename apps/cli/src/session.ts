/**
 * `paddock login|logout` and `paddock token create|list|rename|revoke` (D15): the login session is
 * kept in the config directory (mode 0600) and only the token commands use it; a minted token is
 * saved there too, where the control-plane commands never read it (they take SERVICE_TOKEN).
 */
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient, type PaddockClient } from '@paddock/sdk';
import type { Command } from 'commander';
import { configDir } from './config.ts';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';
import { confirm, readLine, readSecret } from './prompt.ts';

interface Session {
  url: string;
  username: string;
  access_token: string;
  expires_at: string;
}

const sessionFile = (ctx: Context) => join(configDir(ctx.env), 'session.json');
const tokenFile = (ctx: Context, id: string) => join(configDir(ctx.env), 'tokens', `${id}.token`);

/** Writes a file only its owner may read (0600), in directories only its owner may enter. */
async function writePrivate(file: string, text: string): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600);
}

async function loadSession(ctx: Context): Promise<Session | undefined> {
  try {
    return JSON.parse(await readFile(sessionFile(ctx), 'utf8')) as Session;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A client with the saved login session's token, for the service it was made on. */
async function sessionClient(ctx: Context): Promise<PaddockClient> {
  const session = await loadSession(ctx);
  if (!session) throw new CliError('not logged in: run paddock login first', exitCodes.failed);
  if (Date.parse(session.expires_at) <= Date.now())
    throw new CliError('the login session expired: run paddock login again', exitCodes.failed);
  return createClient({ baseUrl: session.url, token: session.access_token });
}

async function login(ctx: Context, opts: { username?: string; password?: string }): Promise<number> {
  const username = await readLine(opts.username, 'username: ', 'no username: pass --username');
  const password = await readSecret(opts.password, 'password: ');
  const { baseUrl } = ctx.endpoints();
  const answer = await createClient({ baseUrl, token: '' }).cli.login(username, password);
  await writePrivate(
    sessionFile(ctx),
    `${JSON.stringify({ url: baseUrl, username, access_token: answer.access_token, expires_at: answer.expires_at } satisfies Session)}\n`,
  );
  const doc = { username, url: baseUrl, expires_at: answer.expires_at, session_file: sessionFile(ctx) };
  ctx.out.result(doc, () =>
    ctx.out.line(`logged in to ${baseUrl} as ${username} until ${answer.expires_at}`),
  );
  return exitCodes.ok;
}

async function logout(ctx: Context): Promise<number> {
  const session = await loadSession(ctx);
  if (session)
    await createClient({ baseUrl: session.url, token: session.access_token })
      .cli.logout()
      .catch(() => undefined); // an expired or revoked session is logged out already
  await rm(sessionFile(ctx), { force: true });
  ctx.out.result({ logged_out: Boolean(session) }, () =>
    ctx.out.line(session ? `logged out of ${session.url}` : 'not logged in'),
  );
  return exitCodes.ok;
}

async function createToken(ctx: Context, opts: { name?: string; scopes?: string }): Promise<number> {
  const client = await sessionClient(ctx);
  const created = await client.cli.tokens.create({
    ...(opts.name !== undefined && { name: opts.name }),
    ...(opts.scopes !== undefined && { scopes: opts.scopes }),
  });
  const file = tokenFile(ctx, created.id);
  await writePrivate(file, `${created.token}\n`);
  ctx.out.result({ ...created, saved_to: file }, () => {
    ctx.out.line(`created token ${created.name} (${created.id}), scopes ${created.scopes.join(',')}`);
    ctx.out.line(`saved to ${file}; shown this once:`);
    ctx.out.line(created.token);
    ctx.out.note('control-plane commands read SERVICE_TOKEN, not this file: export SERVICE_TOKEN=…');
  });
  return exitCodes.ok;
}

async function listTokens(ctx: Context): Promise<number> {
  const { items } = await (await sessionClient(ctx)).cli.tokens.list();
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no tokens');
    ctx.out.table(
      ['id', 'name', 'prefix', 'scopes', 'created'],
      items.map((t) => [t.id, t.name, t.prefix, t.scopes.join(','), t.created_at]),
    );
  });
  return exitCodes.ok;
}

async function renameToken(ctx: Context, id: string, name: string): Promise<number> {
  const token = await (await sessionClient(ctx)).cli.tokens.rename(id, name);
  ctx.out.result(token, () => ctx.out.line(`renamed token ${token.id} to ${token.name}`));
  return exitCodes.ok;
}

async function revokeToken(ctx: Context, id: string, opts: { yes?: boolean }): Promise<number> {
  const client = await sessionClient(ctx);
  await confirm(opts.yes, `revoke token ${id}`);
  await client.cli.tokens.revoke(id);
  await rm(tokenFile(ctx, id), { force: true });
  ctx.out.result({ revoked: id }, () => ctx.out.line(`revoked token ${id}`));
  return exitCodes.ok;
}

export function sessionCommands(program: Command, context: () => Context): void {
  const run = (action: (ctx: Context) => Promise<number>) => async () =>
    context().exit(await action(context()));
  program
    .command('login')
    .description("log in with the service's built-in login; the session is kept for the token commands")
    .option('--username <name>', 'the user (prompted on a terminal)')
    .option('--password <password>', 'the password (default: prompted without echo, or read from stdin)')
    .action((opts) => run((ctx) => login(ctx, opts))());
  program.command('logout').description('end the saved login session and forget it').action(run(logout));
  const token = program.command('token').description('personal access tokens (needs paddock login)');
  token
    .command('create')
    .description('mint a personal access token; it is shown once and saved in the config directory')
    .option('--name <name>', 'a name for it')
    .option('--scopes <scopes>', 'comma-separated: read, publish, admin (default: read)')
    .action((opts) => run((ctx) => createToken(ctx, opts))());
  token.command('list').description('list your personal access tokens').action(run(listTokens));
  token
    .command('rename')
    .description('rename a personal access token')
    .argument('<id>', 'the token id')
    .argument('<name>', 'its new name')
    .action((id: string, name: string) => run((ctx) => renameToken(ctx, id, name))());
  token
    .command('revoke')
    .description('revoke a personal access token')
    .argument('<id>', 'the token id')
    .option('--yes', 'do not ask for confirmation')
    .action((id: string, opts) => run((ctx) => revokeToken(ctx, id, opts))());
}
