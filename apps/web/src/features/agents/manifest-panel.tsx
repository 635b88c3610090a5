import { useQuery } from '@tanstack/react-query';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

/** The agent's published manifest: its revision and each component with its files. */
export function ManifestPanel({ agentId }: { agentId: string }) {
  const manifest = useQuery({
    queryKey: ['manifest', agentId],
    queryFn: ({ signal }) => client().cli.agents.manifest(agentId, { signal }),
  });
  const components = manifest.data?.components ?? [];
  return (
    <section aria-labelledby="manifest-heading">
      <h2 id="manifest-heading">Manifest</h2>
      {manifest.isPending && <p aria-busy="true">Loading the manifest…</p>}
      {manifest.isError && <ErrorNote error={manifest.error} />}
      {manifest.data && (
        <p className="muted">
          Revision <code>{manifest.data.revision.slice(0, 12)}</code>
        </p>
      )}
      {manifest.data && components.length === 0 && <p className="empty">No components.</p>}
      {components.length > 0 && (
        <table className="threads">
          <thead>
            <tr>
              <th scope="col">Component</th>
              <th scope="col">Type</th>
              <th scope="col">Files</th>
            </tr>
          </thead>
          <tbody>
            {components.map((c) => (
              <tr key={`${c.type}/${c.name}`}>
                <td>
                  <code>{c.name}</code>
                  {c.status === 'archived' && <span className="muted"> (archived)</span>}
                </td>
                <td>{c.type}</td>
                <td>{c.files.map((f) => f.path).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
