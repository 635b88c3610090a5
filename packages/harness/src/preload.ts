/**
 * Loads the model loop (the AI SDK behind it) ahead of the first turn. A sandbox calls this right
 * after it is ready, so a new thread's first turn does not wait for the import; the provider's
 * warm-up run calls it too, so the compile cache holds the whole loop.
 */
export async function preloadHarnesses(): Promise<void> {
  await Promise.all([import('./coding-alpha/agent-loop.ts'), import('./coding-alpha/system-prompt.ts')]);
}
