import { z } from 'zod';

/** A member of an orchestration (D13 `members: [{agent_id, role?}]`). */
export const orchestrationMemberSchema = z.strictObject({
  agent_id: z.uuid(),
  role: z.string().trim().min(1).max(200).optional(),
});

/** An edge between two members, by agent id (D13 `edges: [{from, to}]`). */
export const orchestrationEdgeSchema = z.strictObject({ from: z.uuid(), to: z.uuid() });

const members = z
  .array(orchestrationMemberSchema)
  .max(100)
  .refine((list) => new Set(list.map((m) => m.agent_id)).size === list.length, {
    message: 'an agent is a member once',
  });
const edges = z
  .array(orchestrationEdgeSchema)
  .max(1000)
  .refine((list) => new Set(list.map((e) => `${e.from} ${e.to}`)).size === list.length, {
    message: 'an edge is declared once',
  });
const name = z.string().trim().min(1).max(200);

/** `POST /orchestrations`: members and edges default to none. */
export const orchestrationCreateBodySchema = z.strictObject({
  team_id: z.uuid(),
  name,
  members: members.default([]),
  edges: edges.default([]),
});
export type OrchestrationCreateBody = z.infer<typeof orchestrationCreateBodySchema>;

/**
 * `PUT /orchestrations/{id}`: a partial update; `members` and `edges` replace the whole list when
 * given (`[]` clears it). `base_revision` refuses the write with 409 when the orchestration moved.
 */
export const orchestrationUpdateBodySchema = z.strictObject({
  name: name.optional(),
  members: members.optional(),
  edges: edges.optional(),
  base_revision: z.string().min(1).max(200).optional(),
});
export type OrchestrationUpdateBody = z.infer<typeof orchestrationUpdateBodySchema>;

export const orchestrationSchema = z.object({
  id: z.uuid(),
  team_id: z.uuid(),
  name: z.string(),
  revision: z.string(),
  members: z.array(z.object({ agent_id: z.uuid(), role: z.string().nullable() })),
  edges: z.array(z.object({ from: z.uuid(), to: z.uuid() })),
  created_at: z.string(),
  updated_at: z.string(),
});
export type OrchestrationRecord = z.infer<typeof orchestrationSchema>;

/** The manifest variant: each member inlines its agent's manifest. */
export const orchestrationManifestSchema = orchestrationSchema.extend({
  members: z.array(
    z.object({
      agent_id: z.uuid(),
      role: z.string().nullable(),
      manifest: z.record(z.string(), z.unknown()),
    }),
  ),
});

export const orchestrationParamsSchema = z.object({ orch_id: z.uuid() });
export const orgTeamParamsSchema = z.object({ org_id: z.uuid(), team_id: z.uuid() });
