import type { Connection } from '@paddock/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

const titles: Record<Connection['kind'], string> = {
  chat: 'Chat',
  meeting: 'Meetings',
  code_host: 'Code host',
  phone: 'Phone',
};

/** Only what was filled in: an empty optional field is left out, not sent as "". */
function filled(form: FormData, names: string[]): Record<string, string> {
  return Object.fromEntries(
    names.map((name) => [name, String(form.get(name) ?? '').trim()]).filter(([, value]) => value),
  );
}

/**
 * An agent's chat and meeting connections: connected (credentials sent again rotate them in place)
 * and disconnected here. The service answers what identifies the install, never a credential, so
 * the bot token and signing secret are write-only fields. Code host and phone are managed elsewhere.
 */
export function ConnectionsPanel({ agentId }: { agentId: string }) {
  const queries = useQueryClient();
  const key = ['connections', agentId];
  const connections = useQuery({
    queryKey: key,
    queryFn: ({ signal }) => client().cli.agents.connections(agentId, { signal }),
  });
  const change = useMutation({
    mutationFn: (work: () => Promise<unknown>) => work(),
    onSettled: () => queries.invalidateQueries({ queryKey: key }),
  });

  function connect(event: FormEvent<HTMLFormElement>, kind: 'chat' | 'meeting') {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const target = event.currentTarget;
    const agents = client().cli.agents;
    change.mutate(
      kind === 'chat'
        ? () =>
            agents.connectChat(agentId, {
              bot_token: String(form.get('bot_token')),
              signing_secret: String(form.get('signing_secret')),
              ...filled(form, ['app_id', 'app_name']),
            })
        : () =>
            agents.connectMeeting(agentId, {
              bot_name: String(form.get('bot_name')),
              ...filled(form, ['bot_image_url']),
            }),
      { onSuccess: () => target.reset() },
    );
  }

  return (
    <section aria-labelledby="connections-heading">
      <h2 id="connections-heading">Connections</h2>
      {connections.isPending && <p aria-busy="true">Loading the connections…</p>}
      {connections.isError && <ErrorNote error={connections.error} />}
      {change.isError && <ErrorNote error={change.error} />}
      <ul className="connections">
        {connections.data?.items.map((c) => (
          <li key={c.kind}>
            <h3>{titles[c.kind]}</h3>
            <p>
              {c.connected ? 'Connected' : 'Not connected'}
              {c.connected && c.kind === 'chat' && c.app_name ? ` as ${c.app_name}` : ''}
              {c.connected && c.kind === 'meeting' && c.bot_name ? ` as ${c.bot_name}` : ''}
              {c.connected_at ? `, since ${new Date(c.connected_at).toLocaleString()}` : ''}
            </p>
            {!c.manageable_from_cli && c.unmanageable_reason && (
              <p className="muted">{c.unmanageable_reason}</p>
            )}
            {c.kind === 'chat' && (
              <form onSubmit={(e) => connect(e, 'chat')} className="inline">
                <label>
                  Bot token
                  <input name="bot_token" type="password" autoComplete="off" required />
                </label>
                <label>
                  Signing secret
                  <input name="signing_secret" type="password" autoComplete="off" required />
                </label>
                <label>
                  App id (optional)
                  <input name="app_id" autoComplete="off" defaultValue={c.app_id ?? ''} />
                </label>
                <label>
                  App name (optional)
                  <input name="app_name" autoComplete="off" defaultValue={c.app_name ?? ''} />
                </label>
                <button type="submit" disabled={change.isPending}>
                  {c.connected ? 'Rotate chat credentials' : 'Connect chat'}
                </button>
              </form>
            )}
            {c.kind === 'meeting' && (
              <form onSubmit={(e) => connect(e, 'meeting')} className="inline">
                <label>
                  Bot name
                  <input name="bot_name" required autoComplete="off" defaultValue={c.bot_name ?? ''} />
                </label>
                <label>
                  Bot image address (optional)
                  <input
                    name="bot_image_url"
                    type="url"
                    autoComplete="off"
                    defaultValue={c.bot_image_url ?? ''}
                  />
                </label>
                <button type="submit" disabled={change.isPending}>
                  {c.connected ? 'Update the meeting bot' : 'Connect meetings'}
                </button>
              </form>
            )}
            {c.connected && c.manageable_from_cli && (
              <button
                type="button"
                className="danger"
                disabled={change.isPending}
                onClick={() =>
                  change.mutate(() => client().cli.agents.disconnect(agentId, c.kind as 'chat' | 'meeting'))
                }
              >
                Disconnect {titles[c.kind].toLowerCase()}
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
