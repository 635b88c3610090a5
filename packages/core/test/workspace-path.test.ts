import { describe, expect, it } from 'vitest';
import { relativeToWorkspace } from '../src/files/workspace-path.ts';

describe('workspace paths of the file reads', () => {
  it('takes paths relative to /workspace or absolute under it, and refuses other absolute paths', () => {
    expect(relativeToWorkspace(undefined)).toBe('.');
    expect(relativeToWorkspace('')).toBe('.');
    expect(relativeToWorkspace('src/a.txt')).toBe('src/a.txt');
    expect(relativeToWorkspace('/workspace')).toBe('.');
    expect(relativeToWorkspace('/workspace/src/../a.txt')).toBe('a.txt');
    expect(relativeToWorkspace('./src//b/')).toBe('src/b');
    for (const path of ['/etc/passwd', '/workspace/../etc', '/workspacex', '/', '..', 'a/../../b', 'a\0b']) {
      expect(() => relativeToWorkspace(path), path).toThrow(
        expect.objectContaining({ code: 'invalid_path' }),
      );
    }
  });
});
