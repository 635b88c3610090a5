import type { PaddockClient } from '@paddock/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type ChangeEvent, useState } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';
import { FilePreview } from './file-preview.tsx';
import { sessionUrlStorage } from './upload-storage.ts';

type Node = Awaited<ReturnType<PaddockClient['files']['tree']>>;
type Selected = { path: string; size: number };

function Tree({
  node,
  onSelect,
  selected,
}: {
  node: Node;
  onSelect: (s: Selected) => void;
  selected?: string;
}) {
  return (
    <ul>
      {node.children.map((child) =>
        child.is_dir ? (
          <li key={child.path}>
            <details open>
              <summary>{child.name}/</summary>
              <Tree node={child} onSelect={onSelect} selected={selected} />
            </details>
          </li>
        ) : (
          <li key={child.path}>
            <button
              type="button"
              className="file"
              aria-current={selected === child.path ? 'true' : undefined}
              onClick={() => onSelect({ path: child.path, size: child.size })}
            >
              {child.name}
            </button>
          </li>
        ),
      )}
    </ul>
  );
}

/** The workspace: its tree, a file's preview and download, and uploads with progress that resume. */
export function FilesPanel({ threadId }: { threadId: string }) {
  const queries = useQueryClient();
  const tree = useQuery({
    queryKey: ['files', threadId],
    queryFn: ({ signal }) => client().files.tree(threadId, { max_depth: 6 }, { signal }),
  });
  const [selected, setSelected] = useState<Selected | undefined>();
  const [progress, setProgress] = useState<{ name: string; sent: number; total: number } | undefined>();
  const [uploadError, setUploadError] = useState<unknown>(null);

  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    setUploadError(null);
    setProgress({ name: file.name, sent: 0, total: file.size });
    try {
      await client().uploads.upload(threadId, file, {
        path: file.name,
        urlStorage: sessionUrlStorage(),
        fingerprint: `${file.name}:${file.lastModified}`,
        chunkSize: 4 * 1024 * 1024,
        onProgress: (sent, total) => setProgress({ name: file.name, sent, total }),
      });
      await queries.invalidateQueries({ queryKey: ['files', threadId] });
      setSelected({ path: file.name, size: file.size });
    } catch (caught) {
      setUploadError(caught);
    } finally {
      setProgress(undefined);
    }
  }

  return (
    <section className="files" aria-labelledby="files-heading">
      <div className="files-head">
        <h2 id="files-heading">Files</h2>
        <button type="button" className="quiet" onClick={() => void tree.refetch()}>
          Refresh
        </button>
        <label className="upload">
          Upload a file
          <input type="file" onChange={upload} disabled={progress !== undefined} />
        </label>
      </div>
      {progress && (
        <p>
          <label>
            Uploading {progress.name}
            <progress value={progress.sent} max={progress.total || 1} />
          </label>
        </p>
      )}
      {uploadError !== null && <ErrorNote error={uploadError} />}
      {tree.isPending && <p aria-busy="true">Loading files…</p>}
      {tree.isError && <ErrorNote error={tree.error} />}
      {tree.data &&
        (tree.data.children.length === 0 ? (
          <p className="empty">The workspace is empty.</p>
        ) : (
          <nav aria-label="Workspace" className="tree">
            <Tree node={tree.data} onSelect={setSelected} selected={selected?.path} />
          </nav>
        ))}
      {selected && (
        <FilePreview key={selected.path} threadId={threadId} path={selected.path} size={selected.size} />
      )}
    </section>
  );
}
