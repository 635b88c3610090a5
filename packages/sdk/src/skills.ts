import type { SkillRecord, SkillVersionRecord, skillPublishBodySchema } from '@paddock/protocol';
import type { z } from 'zod';
import { type CallOptions, path, type Transport } from './http.ts';

/** `PUT /v2/skills/{creator}/{slug}/versions/{version}`'s body as a caller writes it. */
export type SkillPublishBody = z.input<typeof skillPublishBodySchema>;

/** The skills registry (D14): immutable versions of `<creator>/<slug>`, the creator an organization. */
export function skillsApi(http: Transport) {
  return {
    /** `GET /v2/skills/{creator}`: the creator's skills the caller may read. */
    list: (creator: string, opts: CallOptions = {}) =>
      http.json<{ items: SkillRecord[] }>('GET', path`/v2/skills/${creator}`, { ...opts, replaySafe: true }),
    /** `GET /v2/skills/{creator}/{slug}`: its versions and its latest. */
    get: (creator: string, slug: string, opts: CallOptions = {}) =>
      http.json<SkillRecord>('GET', path`/v2/skills/${creator}/${slug}`, { ...opts, replaySafe: true }),
    /** Publishes an immutable version; the same content again is no change (200 rather than 201). */
    publish: (
      creator: string,
      slug: string,
      version: string,
      body: SkillPublishBody,
      opts: CallOptions = {},
    ) =>
      http.json<SkillVersionRecord>('PUT', path`/v2/skills/${creator}/${slug}/versions/${version}`, {
        ...opts,
        body,
        replaySafe: true,
      }),
  };
}
