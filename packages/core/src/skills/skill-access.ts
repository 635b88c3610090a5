import { type Db, listUserOrgs, type SkillVersionHead } from '@paddock/store';
import type { Actor } from '../context.ts';
import { PaddockError } from '../errors.ts';

/** The organizations whose skills the actor reads: every one its user belongs to. */
export async function readerOrgIds(db: Db, actor: Actor): Promise<ReadonlySet<string>> {
  return new Set((await listUserOrgs(db, actor.userId)).map((org) => org.id));
}

/** Whether a version is readable by members of these organizations: theirs, or public. */
export function canReadSkill(
  orgIds: ReadonlySet<string>,
  version: Pick<SkillVersionHead, 'org_id' | 'public'>,
) {
  return version.public === 1 || orgIds.has(version.org_id);
}

/**
 * The organization a publish to `<creator>/<slug>` is made for: one named `creator` that the actor
 * belongs to and, once the skill has versions, the one that published them (a name is its first
 * publisher's). Else 403.
 */
export async function publishingOrgId(
  db: Db,
  actor: Actor,
  creator: string,
  existing: readonly Pick<SkillVersionHead, 'org_id'>[],
): Promise<string> {
  const named = (await listUserOrgs(db, actor.userId)).filter((org) => org.name === creator);
  if (named.length === 0)
    throw new PaddockError('forbidden', `only members of the organization ${creator} can publish its skills`);
  const owner = existing[0]?.org_id;
  const org = owner === undefined ? named[0] : named.find((o) => o.id === owner);
  if (!org)
    throw new PaddockError('forbidden', `${creator}'s skill of this name belongs to another organization`);
  return org.id;
}
