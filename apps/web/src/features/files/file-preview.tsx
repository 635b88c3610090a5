import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { ErrorNote } from '../../error-note.tsx';
import { client } from '../../session.ts';

const images: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
};
/** Text shown in full up to this size; larger files are offered for download only. */
const previewLimit = 256 * 1024;

/** The bytes as text, or undefined when they are not UTF-8 text. */
function asText(bytes: Uint8Array): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text.includes('\u0000') ? undefined : text;
  } catch {
    return undefined;
  }
}

/** One workspace file: a preview of text and images, and a download of its exact bytes. */
export function FilePreview({ threadId, path, size }: { threadId: string; path: string; size: number }) {
  const name = path.split('/').at(-1) ?? path;
  const type = images[name.split('.').at(-1)?.toLowerCase() ?? ''];
  const file = useQuery({
    queryKey: ['file', threadId, path],
    queryFn: ({ signal }) => client().files.read(threadId, path, { signal }),
  });
  const url = useMemo(
    () =>
      file.data
        ? URL.createObjectURL(
            new Blob([file.data as Uint8Array<ArrayBuffer>], { type: type ?? 'application/octet-stream' }),
          )
        : undefined,
    [file.data, type],
  );
  useEffect(
    () => () => {
      if (url) URL.revokeObjectURL(url);
    },
    [url],
  );
  if (file.isPending) return <p aria-busy="true">Loading {name}…</p>;
  if (file.isError) return <ErrorNote error={file.error} />;
  const text = type || size > previewLimit ? undefined : asText(file.data);
  return (
    <figure className="preview">
      <figcaption>
        <span className="path">{path}</span>{' '}
        <a href={url} download={name}>
          Download
        </a>
      </figcaption>
      {type && url && <img src={url} alt={`Preview of ${name}`} />}
      {text !== undefined && <pre data-testid="file-text">{text}</pre>}
      {!type && text === undefined && <p className="empty">No preview: {size} bytes, not text.</p>}
    </figure>
  );
}
