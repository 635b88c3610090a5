/**
 * One immutable version of a registry skill (D14). `org_id` is the publishing organization (whose
 * name is `creator`); `files` is JSON `[{path, content}]`, content in base64, sorted by path.
 */
export interface SkillVersionsTable {
  creator: string;
  slug: string;
  version: string;
  org_id: string;
  name: string;
  description: string;
  /** 1 when every organization may read it. */
  public: number;
  hash: string;
  files: string;
  published_by: string;
  created_at: string;
}
