/**
 * Loads the model loop (the AI SDK behind it) ahead of the first turn: a runner calls this as it
 * starts, so its first thread's first turn does not wait for the import.
 */
export async function preloadHarnesses(): Promise<void> {
  await Promise.all([import('./coding-alpha/agent-loop.ts'), import('./coding-alpha/system-prompt.ts')]);
}
