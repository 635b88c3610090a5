import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** Encrypts secrets at rest with AES-256-GCM (D4). The key never leaves the process. */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
  /** A keyed digest: stable for equal inputs, useless to anyone without the key. */
  digest(value: string): string;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('secret key must be 32 bytes');
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [
        'v1',
        iv.toString('base64'),
        cipher.getAuthTag().toString('base64'),
        body.toString('base64'),
      ].join(':');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split(':');
      if (version !== 'v1' || !iv || !tag || body === undefined)
        throw new Error('unrecognized sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
    digest(value) {
      return createHmac('sha256', key).update(value).digest('hex');
    },
  };
}
