import { z } from 'zod';

/** The component types of an agent's manifest (spec: "Manifest"). */
export const componentTypes = [
  'instructions',
  'skill',
  'mcp_server',
  'playbook',
  'eval',
  'schedule',
] as const;
export type ComponentType = (typeof componentTypes)[number];

export const componentStatuses = ['active', 'archived'] as const;
export type ComponentStatus = (typeof componentStatuses)[number];

/** A relative path inside a component: no leading `/`, no `.`/`..` or empty segments. */
const componentPath = z
  .string()
  .min(1)
  .max(500)
  .refine(
    (p) => p.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'),
    'must be a relative path without empty, "." or ".." segments',
  );

export const componentFileSchema = z.strictObject({
  path: componentPath,
  content: z.string().max(1_000_000),
});
export type ComponentFile = z.infer<typeof componentFileSchema>;

/** A component as the server answers it; `status` only on playbooks and evals. */
export const manifestComponentSchema = z.object({
  type: z.enum(componentTypes),
  name: z.string(),
  files: z.array(componentFileSchema),
  /** SHA-256 (hex) of the component's canonical JSON: type, name and files sorted by path. */
  hash: z.string(),
  status: z.enum(componentStatuses).optional(),
});
export type ManifestComponent = z.infer<typeof manifestComponentSchema>;

/** Content the server could not represent, so did not store (or, on a read, did not show). */
export const manifestWarningSchema = z.object({
  type: z.string(),
  name: z.string(),
  code: z.string(),
  message: z.string(),
});
export type ManifestWarning = z.infer<typeof manifestWarningSchema>;

export const manifestSchema = z.object({
  agent_id: z.uuid(),
  revision: z.string(),
  components: z.array(manifestComponentSchema),
  warnings: z.array(manifestWarningSchema).optional(),
});
export type Manifest = z.infer<typeof manifestSchema>;

/**
 * A component as a client publishes it. `hash` may be sent back as read (the server recomputes
 * it); a `type` the server does not know is accepted and answered with a warning.
 */
export const publishedComponentSchema = z.strictObject({
  type: z.string().min(1).max(100),
  name: z.string().min(1).max(200),
  files: z.array(componentFileSchema).max(500),
  hash: z.string().optional(),
  status: z.enum(componentStatuses).optional(),
});
export type PublishedComponent = z.infer<typeof publishedComponentSchema>;

/** `PUT /agents/{agent_id}/manifest`: the whole manifest, reconciled per component type. */
export const manifestPutBodySchema = z
  .strictObject({
    components: z.array(publishedComponentSchema).max(2000),
    base_revision: z.string().min(1).max(200).optional(),
    reconcile_playbooks: z.boolean().optional(),
    reconcile_evals: z.boolean().optional(),
    /** Removes the agent's schedules the manifest omits (beyond the spec, issue 16). */
    reconcile_schedules: z.boolean().optional(),
  })
  .superRefine((body, issues) => {
    const seen = new Set<string>();
    body.components.forEach((component, index) => {
      const key = `${component.type}\u0000${component.name}`;
      if (seen.has(key))
        issues.addIssue({
          code: 'custom',
          path: ['components', index, 'name'],
          message: `a second ${component.type} named ${component.name}`,
        });
      seen.add(key);
      const paths = new Set<string>();
      component.files.forEach((file, fileIndex) => {
        if (paths.has(file.path))
          issues.addIssue({
            code: 'custom',
            path: ['components', index, 'files', fileIndex, 'path'],
            message: `a second file at ${file.path}`,
          });
        paths.add(file.path);
      });
    });
    if (body.components.filter((c) => c.type === 'instructions').length > 1)
      issues.addIssue({
        code: 'custom',
        path: ['components'],
        message: 'at most one instructions component',
      });
  });
export type ManifestPutBody = z.infer<typeof manifestPutBodySchema>;

/** `GET /agents/{agent_id}/revision`: a hex digest; equal content, equal revision. */
export const revisionSchema = z.object({ revision: z.string() });
