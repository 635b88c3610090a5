/** One entry of an initramfs: a directory, a regular file or a symlink. */
export type CpioEntry =
  | { path: string; type: 'dir'; mode?: number }
  | { path: string; type: 'file'; data: Buffer; mode?: number }
  | { path: string; type: 'symlink'; target: string };

/**
 * An archive in the `newc` cpio format, the one the kernel unpacks into its initial root: a 110-byte
 * ASCII header per entry (hex fields), the NUL-terminated name and the data, each padded to 4 bytes,
 * ended by the `TRAILER!!!` entry. Owner root, mtime 0, so the same input gives the same archive.
 */
export function cpioArchive(entries: CpioEntry[]): Buffer {
  const parts: Buffer[] = [];
  let ino = 1;
  const add = (path: string, mode: number, data: Buffer): void => {
    const name = Buffer.from(`${path}\0`);
    const fields = [0x70701, ino++, mode, 0, 0, 1, 0, data.length, 0, 0, 0, 0, name.length, 0];
    const header = fields.map((value, i) => (i === 0 ? '070701' : hex8(value))).join('');
    parts.push(Buffer.from(header, 'ascii'), name, pad(110 + name.length), data, pad(data.length));
  };
  for (const entry of entries) {
    const path = entry.path.replace(/^\/+/, '');
    if (entry.type === 'dir') add(path, 0o040000 | (entry.mode ?? 0o755), Buffer.alloc(0));
    else if (entry.type === 'file') add(path, 0o100000 | (entry.mode ?? 0o644), entry.data);
    else add(path, 0o120777, Buffer.from(entry.target));
  }
  add('TRAILER!!!', 0, Buffer.alloc(0));
  return Buffer.concat(parts);
}

function hex8(value: number): string {
  return value.toString(16).padStart(8, '0');
}

function pad(length: number): Buffer {
  return Buffer.alloc((4 - (length % 4)) % 4);
}
