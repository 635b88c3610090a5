/**
 * An agent's secrets, keys, connections and MCP servers: `paddock secret list|set|delete`,
 * `paddock key list|create|revoke`, `paddock connection list|chat|meeting|disconnect`,
 * `paddock mcp <agent>`. Secret values are never printed; a minted key is shown once.
 */
import type { Command } from 'commander';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';
import { confirm, readSecret } from './prompt.ts';

const secretName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The agent's secret names (the public agent record holds names only). */
async function secretNames(ctx: Context, agentId: string): Promise<string[]> {
  return [...(await ctx.client().agents.get(agentId)).secret_names].sort();
}

async function listSecrets(ctx: Context, agentId: string): Promise<number> {
  const names = await secretNames(ctx, agentId);
  ctx.out.result({ names }, () => {
    if (names.length === 0) return ctx.out.line('no secrets');
    for (const name of names) ctx.out.line(name);
  });
  return exitCodes.ok;
}

/** Sets one secret, keeping the others; no value is ever read back from the service. */
async function setSecret(ctx: Context, agentId: string, name: string, opts: { value?: string }) {
  if (!secretName.test(name)) throw new CliError(`not a secret name: ${name}`, exitCodes.usage);
  const value = await readSecret(opts.value, `value of ${name}: `);
  const updated = await ctx.client().agents.setSecret(agentId, name, value);
  const names = [...updated.secret_names].sort();
  ctx.out.result({ set: name, names }, () => ctx.out.line(`set secret ${name}`));
  return exitCodes.ok;
}

async function deleteSecret(ctx: Context, agentId: string, name: string, opts: { yes?: boolean }) {
  if (!(await secretNames(ctx, agentId)).includes(name))
    throw new CliError(`the agent has no secret ${name}`, exitCodes.failed);
  await confirm(opts.yes, `delete secret ${name}`);
  const updated = await ctx.client().agents.deleteSecret(agentId, name);
  const names = [...updated.secret_names].sort();
  ctx.out.result({ deleted: name, names }, () => ctx.out.line(`deleted secret ${name}`));
  return exitCodes.ok;
}

async function listKeys(ctx: Context, agentId: string): Promise<number> {
  const { items } = await ctx.client().cli.agents.keys(agentId);
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no keys');
    ctx.out.table(
      ['id', 'name', 'prefix', 'created'],
      items.map((k) => [k.id, k.name, k.prefix, k.created_at]),
    );
  });
  return exitCodes.ok;
}

async function createKey(ctx: Context, agentId: string, opts: { name?: string }): Promise<number> {
  const key = await ctx.client().cli.agents.createKey(agentId, opts.name);
  ctx.out.result(key, () => {
    ctx.out.line(`created key ${key.name} (${key.id}); shown this once:`);
    ctx.out.line(key.key);
  });
  return exitCodes.ok;
}

async function revokeKey(ctx: Context, keyId: string, opts: { yes?: boolean }): Promise<number> {
  await confirm(opts.yes, `revoke key ${keyId}`);
  await ctx.client().cli.agents.revokeKey(keyId);
  ctx.out.result({ revoked: keyId }, () => ctx.out.line(`revoked key ${keyId}`));
  return exitCodes.ok;
}

async function listConnections(ctx: Context, agentId: string): Promise<number> {
  const { items } = await ctx.client().cli.agents.connections(agentId);
  ctx.out.result({ items }, () =>
    ctx.out.table(
      ['kind', 'connected', 'app / bot', 'since', 'note'],
      items.map((c) => [
        c.kind,
        c.connected ? 'yes' : 'no',
        c.app_name ?? c.bot_name ?? c.app_id ?? '-',
        c.connected_at ?? '-',
        c.manageable_from_cli ? '' : (c.unmanageable_reason ?? 'not manageable from the command line'),
      ]),
    ),
  );
  return exitCodes.ok;
}

interface ChatFlags {
  botToken?: string;
  signingSecret: string;
  appId?: string;
  appName?: string;
}

async function connectChat(ctx: Context, agentId: string, opts: ChatFlags): Promise<number> {
  const botToken = await readSecret(opts.botToken, 'bot token: ');
  const connection = await ctx.client().cli.agents.connectChat(agentId, {
    bot_token: botToken,
    signing_secret: opts.signingSecret,
    ...(opts.appId !== undefined && { app_id: opts.appId }),
    ...(opts.appName !== undefined && { app_name: opts.appName }),
  });
  ctx.out.result(connection, () => ctx.out.line(`connected chat to agent ${agentId}`));
  return exitCodes.ok;
}

async function connectMeeting(
  ctx: Context,
  agentId: string,
  opts: { botName: string; botImageUrl?: string },
) {
  const connection = await ctx.client().cli.agents.connectMeeting(agentId, {
    bot_name: opts.botName,
    ...(opts.botImageUrl !== undefined && { bot_image_url: opts.botImageUrl }),
  });
  ctx.out.result(connection, () => ctx.out.line(`connected meetings to agent ${agentId} as ${opts.botName}`));
  return exitCodes.ok;
}

async function disconnect(ctx: Context, agentId: string, kind: string, opts: { yes?: boolean }) {
  if (kind !== 'chat' && kind !== 'meeting')
    throw new CliError('the kind is chat or meeting', exitCodes.usage);
  await confirm(opts.yes, `disconnect ${kind} from agent ${agentId}`);
  await ctx.client().cli.agents.disconnect(agentId, kind);
  ctx.out.result({ disconnected: kind }, () => ctx.out.line(`disconnected ${kind}`));
  return exitCodes.ok;
}

async function mcp(ctx: Context, agentId: string): Promise<number> {
  const { items } = await ctx.client().cli.agents.mcpServers(agentId);
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no MCP servers');
    ctx.out.table(
      ['name', 'transport', 'enabled', 'authorization', 'check', 'tools', 'error'],
      items.map((s) => [
        s.name,
        s.transport,
        s.enabled ? 'yes' : 'no',
        s.authorization,
        s.last_check.status,
        s.last_check.tool_count ?? '-',
        s.last_check.error ?? '',
      ]),
    );
  });
  return exitCodes.ok;
}

export function accessCommands(program: Command, context: () => Context): void {
  const act =
    <A extends unknown[]>(fn: (ctx: Context, ...args: A) => Promise<number>) =>
    async (...args: A) =>
      context().exit(await fn(context(), ...args));
  const agent = (command: Command) => command.argument('<agent>', 'the agent id');
  const secret = program.command('secret').description("an agent's secrets (values are never shown)");
  agent(secret.command('list').description("list the names of an agent's secrets")).action(act(listSecrets));
  agent(secret.command('set').description('set a secret (the value from stdin, a prompt or --value)'))
    .argument('<name>', 'the secret name')
    .option('--value <value>', 'the value (default: read from stdin, or prompted without echo)')
    .action(act(setSecret));
  agent(secret.command('delete').description('delete a secret'))
    .argument('<name>', 'the secret name')
    .option('--yes', 'do not ask for confirmation')
    .action(act(deleteSecret));
  const key = program.command('key').description("an agent's keys");
  agent(key.command('list').description("list an agent's keys")).action(act(listKeys));
  agent(key.command('create').description('mint an agent key (shown once)'))
    .option('--name <name>', 'a name for it')
    .action(act(createKey));
  key
    .command('revoke')
    .description('revoke an agent key')
    .argument('<key>', 'the key id')
    .option('--yes', 'do not ask for confirmation')
    .action(act(revokeKey));
  const connection = program.command('connection').description("an agent's chat and meeting connections");
  agent(connection.command('list').description("list an agent's connections")).action(act(listConnections));
  agent(connection.command('chat').description('connect a chat app (the bot token from stdin or a prompt)'))
    .requiredOption('--signing-secret <secret>', "the app's signing secret")
    .option('--bot-token <token>', 'the bot token (default: read from stdin, or prompted without echo)')
    .option('--app-id <id>', 'the app id')
    .option('--app-name <name>', 'the app name')
    .action(act(connectChat));
  agent(connection.command('meeting').description('connect the meeting bot'))
    .requiredOption('--bot-name <name>', 'the name the bot joins as')
    .option('--bot-image-url <url>', 'its picture')
    .action(act(connectMeeting));
  agent(connection.command('disconnect').description('disconnect chat or meetings'))
    .argument('<kind>', 'chat or meeting')
    .option('--yes', 'do not ask for confirmation')
    .action(act(disconnect));
  agent(program.command('mcp').description("an agent's MCP servers, probed live")).action(act(mcp));
}
