import { describe, expect, it } from 'vitest';
import { createModelRouter } from '../src/model-router.ts';

describe('model router', () => {
  it('serves only the scripted model when no upstream is configured', () => {
    const router = createModelRouter({});
    expect(router.defaultModel).toBe('scripted');
    expect(router.resolve('scripted')).toMatchObject({ provider: 'paddock', modelId: 'scripted' });
    expect(router.resolve('openai/gpt-4.1')).toBeUndefined();
    expect(router.resolve('anthropic/claude-sonnet-4-5')).toBeUndefined();
    expect(router.resolve('gpt-4.1')).toBeUndefined();
    expect(router.list()).toEqual(['scripted']);
  });

  it('routes prefixed and bare ids to the configured upstreams', () => {
    const router = createModelRouter({
      openai: { apiKey: 'k', baseURL: 'http://127.0.0.1:1/v1' },
      anthropic: { apiKey: 'k' },
    });
    expect(router.defaultModel).toBe('openai/gpt-4.1-mini');
    expect(router.resolve('openai/gpt-4.1')).toMatchObject({ provider: 'openai.chat', modelId: 'gpt-4.1' });
    expect(router.resolve('anthropic/claude-x')).toMatchObject({ modelId: 'claude-x' });
    expect(router.resolve('anthropic/claude-x')?.provider).toMatch(/^anthropic/);
    expect(router.resolve('meta-llama/llama-4')).toMatchObject({
      provider: 'openai.chat',
      modelId: 'meta-llama/llama-4',
    });
    expect(router.resolve('openai/')).toBeUndefined();
    expect(router.list()).toEqual(['scripted', 'openai/gpt-4.1-mini', 'anthropic/claude-sonnet-4-5']);
  });

  it('sends bare ids to Anthropic when it is the only upstream, and honours a configured default', () => {
    const router = createModelRouter({ anthropic: { apiKey: 'k' } });
    expect(router.defaultModel).toBe('anthropic/claude-sonnet-4-5');
    expect(router.resolve('claude-y')?.provider).toMatch(/^anthropic/);
    expect(createModelRouter({ anthropic: { apiKey: 'k' }, defaultModel: 'scripted' }).defaultModel).toBe(
      'scripted',
    );
  });
});
