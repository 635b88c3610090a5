import type { PreviousUpload, UrlStorage } from '@paddock/sdk';

/**
 * Unfinished uploads remembered in this tab's `sessionStorage`: an upload cut off (a dropped
 * connection, a reload) resumes from where the service left off when the same file is chosen again.
 */
export function sessionUrlStorage(storage: Storage = sessionStorage): UrlStorage {
  const prefix = 'paddock.upload::';
  const all = (): PreviousUpload[] => {
    const found: PreviousUpload[] = [];
    for (let i = 0; i < storage.length; i++) {
      const key = storage.key(i);
      if (!key?.startsWith(prefix)) continue;
      try {
        found.push({ ...(JSON.parse(storage.getItem(key) ?? '') as PreviousUpload), urlStorageKey: key });
      } catch {
        storage.removeItem(key);
      }
    }
    return found;
  };
  return {
    findAllUploads: async () => all(),
    findUploadsByFingerprint: async (fingerprint) =>
      all().filter((u) => u.urlStorageKey.startsWith(`${prefix}${fingerprint}::`)),
    removeUpload: async (key) => storage.removeItem(key),
    addUpload: async (fingerprint, upload) => {
      const key = `${prefix}${fingerprint}::${crypto.randomUUID()}`;
      storage.setItem(key, JSON.stringify(upload));
      return key;
    },
  };
}
