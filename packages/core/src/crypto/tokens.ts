import { createHash, randomBytes } from 'node:crypto';
import { type TokenKind, tokenPrefixes } from '@paddock/protocol';

/** Only this hash of a token is stored (D2). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function generateToken(kind: TokenKind): string {
  return `${tokenPrefixes[kind]}${randomBytes(24).toString('base64url')}`;
}

/** The part of a token shown in listings: its class prefix and a few characters. */
export function displayPrefix(token: string): string {
  // The class prefix is the known one: the random part may itself contain `_`.
  const classPrefix = Object.values(tokenPrefixes).find((p) => token.startsWith(p)) ?? '';
  return token.slice(0, classPrefix.length + 6);
}
