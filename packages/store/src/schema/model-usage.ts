/** One model call through the gateway (D16): the ledger credits are summed from. */
export interface ModelUsageTable {
  id: string;
  /** The organization that pays: the thread's, or the calling user's default team's. */
  org_id: string;
  /** The thread whose token made the call; null for a personal token. */
  thread_id: string | null;
  model: string;
  input_tokens: number;
  output_tokens: number;
  created_at: string;
}
